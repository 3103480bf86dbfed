// `ditbench query`: see runner/query.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <variant>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "runner/command.h"
#include "runner/query.h"

#include "experiments/did_you_mean.h"
#include "storage/results_db.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// A mistake in the user's query: reported as one line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Columns shown by `--format table` when --columns is not given.
const std::vector<std::string> kTableColumns = {
    "campaign", "trial_key", "status", "model", "resolution", "precision", "scope",
    "ulysses", "ring", "pipefusion", "cfg", "dp", "world_size", "latency_ms", "ci_low_ms",
    "ci_high_ms", "cov", "peak_mem_mb", "error"};

using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

struct Condition {
  std::string column, op, value;
};

void CheckColumn(const std::string& name, const std::vector<std::string>& valid,
                 const char* option) {
  if (std::find(valid.begin(), valid.end(), name) != valid.end()) return;
  const std::string best = DidYouMean(name, valid);
  std::string hint = best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
  throw UsageError(fmt::format("unknown column '{}' in {}{}; valid columns: {}", name, option,
                               hint, fmt::join(valid, ", ")));
}

Condition ParseCondition(const std::string& text) {
  std::size_t at = text.find_first_of("!<>=");
  if (at == std::string::npos || at == 0) {
    throw UsageError(fmt::format(
        "malformed --where '{}': expected column=value, column!=value, column<value, "
        "column>value, column<=value or column>=value",
        text));
  }
  Condition condition;
  condition.column = text.substr(0, at);
  std::string rest = text.substr(at);
  for (const char* op : {"!=", "<=", ">=", "==", "=", "<", ">"}) {
    if (rest.rfind(op, 0) == 0) {
      condition.op = std::string(op) == "==" ? "=" : op;
      condition.value = rest.substr(std::string_view(op).size());
      break;
    }
  }
  if (condition.op.empty() || condition.value.empty()) {
    throw UsageError(fmt::format("malformed --where '{}': missing operator or value", text));
  }
  return condition;
}

// Binds `value` as an integer or a real when it reads fully as one, else as text.
void BindValue(Statement& statement, int index, const std::string& value) {
  const char* end = value.data() + value.size();
  std::int64_t integer = 0;
  auto [int_end, int_error] = std::from_chars(value.data(), end, integer);
  if (int_error == std::errc() && int_end == end) {
    statement.Bind(index, integer);
    return;
  }
  double real = 0;
  auto [real_end, real_error] = std::from_chars(value.data(), end, real);
  if (real_error == std::errc() && real_end == end) {
    statement.Bind(index, real);
    return;
  }
  statement.Bind(index, value);
}

std::vector<std::string> ViewColumns(sqlite3* db) {
  Statement probe(db, "SELECT * FROM results LIMIT 0");
  std::vector<std::string> columns;
  for (int i = 0; i < probe.ColumnCount(); ++i) columns.push_back(probe.ColumnName(i));
  return columns;
}

Table Fetch(Statement& statement) {
  Table table;
  for (int i = 0; i < statement.ColumnCount(); ++i) {
    table.columns.push_back(statement.ColumnName(i));
  }
  while (statement.Step()) {
    std::vector<Cell>& row = table.rows.emplace_back();
    for (int i = 0; i < statement.ColumnCount(); ++i) {
      switch (statement.ColumnType(i)) {
        case SQLITE_NULL: row.emplace_back(); break;
        case SQLITE_INTEGER: row.emplace_back(statement.Int(i)); break;
        case SQLITE_FLOAT: row.emplace_back(statement.Double(i)); break;
        default: row.emplace_back(statement.Text(i)); break;
      }
    }
  }
  return table;
}

std::string StatusList() {
  std::vector<std::string_view> names;
  for (TrialStatus s : {TrialStatus::kPending, TrialStatus::kRunning, TrialStatus::kOk,
                        TrialStatus::kSkipped, TrialStatus::kOom, TrialStatus::kTimeout,
                        TrialStatus::kCrashed, TrialStatus::kFailed, TrialStatus::kInterrupted}) {
    names.push_back(StatusName(s));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// The filtered query over the view, with its parameters bound.
Statement BuildQuery(sqlite3* db, const QueryOptions& options) {
  std::vector<std::string> valid = ViewColumns(db);
  std::vector<std::string> columns = options.columns;
  if (columns.empty() && options.format == "table") columns = kTableColumns;
  for (const std::string& column : columns) CheckColumn(column, valid, "--columns");

  // Each clause has one parameter; --sweep and --status compare text, the others may be
  // numbers.
  struct Parameter {
    std::string value;
    bool text;
  };
  std::vector<std::string> clauses;
  std::vector<Parameter> values;
  if (options.sweep) {
    clauses.push_back("sweep = ?");
    values.push_back({*options.sweep, true});
  }
  if (options.campaign) {
    clauses.push_back("campaign = ?");
    values.push_back({std::to_string(*options.campaign), false});
  }
  if (options.status) {
    if (!ParseStatus(*options.status)) {
      throw UsageError(
          fmt::format("unknown status '{}'; valid statuses: {}", *options.status, StatusList()));
    }
    clauses.push_back("status = ?");
    values.push_back({*options.status, true});
  }
  for (const std::string& text : options.where) {
    Condition condition = ParseCondition(text);
    CheckColumn(condition.column, valid, "--where");
    clauses.push_back(fmt::format("\"{}\" {} ?", condition.column, condition.op));
    values.push_back({condition.value, false});
  }

  std::string order = "campaign, model, resolution, precision, scope, batch, steps, "
                      "latency_ms IS NULL, latency_ms, trial_key";
  if (!options.sort.empty()) {
    std::string column = options.sort;
    std::string direction = "ASC";
    if (std::size_t colon = column.find(':'); colon != std::string::npos) {
      std::string suffix = column.substr(colon + 1);
      column.resize(colon);
      if (suffix == "desc") {
        direction = "DESC";
      } else if (suffix != "asc") {
        throw UsageError(fmt::format("malformed --sort '{}': expected column or column:desc",
                                     options.sort));
      }
    }
    CheckColumn(column, valid, "--sort");
    order = fmt::format("\"{0}\" IS NULL, \"{0}\" {1}, campaign, trial_key", column, direction);
  }

  std::string select = "*";
  if (!columns.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& c : columns) quoted.push_back("\"" + c + "\"");
    select = fmt::format("{}", fmt::join(quoted, ", "));
  }
  std::string where = clauses.empty() ? "" : fmt::format(" WHERE {}", fmt::join(clauses, " AND "));
  Statement statement(db, fmt::format("SELECT {} FROM results{} ORDER BY {}", select, where,
                                      order));
  for (std::size_t i = 0; i < values.size(); ++i) {
    int index = static_cast<int>(i + 1);
    if (values[i].text) {
      statement.Bind(index, values[i].value);
    } else {
      BindValue(statement, index, values[i].value);
    }
  }
  return statement;
}

Statement PrepareSql(sqlite3* db, const QueryOptions& options) {
  Statement statement(db, options.sql);
  if (statement.tail().find_first_not_of(" \t\r\n;") != std::string::npos) {
    throw UsageError("--sql takes exactly one statement");
  }
  if (!statement.ReadOnly()) {
    throw UsageError("--sql must be a read-only statement (SELECT ...); the database is "
                     "opened read-only");
  }
  return statement;
}

std::string TableText(const Cell& cell) {
  struct {
    std::string operator()(std::monostate) const { return "-"; }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      double a = std::abs(v);
      if (a >= 100) return fmt::format("{:.1f}", v);
      if (a >= 1) return fmt::format("{:.2f}", v);
      return fmt::format("{:.4g}", v);
    }
    std::string operator()(const std::string& v) const {
      std::string flat = v;
      std::replace(flat.begin(), flat.end(), '\n', ' ');
      std::replace(flat.begin(), flat.end(), '\r', ' ');
      std::replace(flat.begin(), flat.end(), '\t', ' ');
      if (flat.size() > 60) flat = flat.substr(0, 57) + "...";
      return flat;
    }
  } visitor;
  return std::visit(visitor, cell);
}

void PrintTable(const Table& table, std::ostream& out) {
  std::vector<std::size_t> width(table.columns.size());
  std::vector<bool> numeric(table.columns.size(), true);
  std::vector<std::vector<std::string>> text;
  for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].size();
  for (const auto& row : table.rows) {
    std::vector<std::string>& line = text.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      line.push_back(TableText(row[c]));
      width[c] = std::max(width[c], line.back().size());
      if (std::holds_alternative<std::string>(row[c])) numeric[c] = false;
    }
  }
  auto print_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) line += "  ";
      line += numeric[c] ? fmt::format("{:>{}}", cells[c], width[c])
                         : fmt::format("{:<{}}", cells[c], width[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  print_line(table.columns);
  for (const auto& line : text) print_line(line);
  out << "(" << table.rows.size() << (table.rows.size() == 1 ? " row)\n" : " rows)\n");
}

std::string CsvField(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (const auto* v = std::get_if<std::int64_t>(&cell)) return std::to_string(*v);
  if (const auto* v = std::get_if<double>(&cell)) return fmt::format("{}", *v);
  const std::string& text = std::get<std::string>(cell);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// RFC 4180: CRLF line ends; fields with commas, quotes or line breaks quoted, quotes doubled.
void PrintCsv(const Table& table, std::ostream& out) {
  auto print_record = [&](const std::vector<Cell>& record) {
    for (std::size_t c = 0; c < record.size(); ++c) out << (c ? "," : "") << CsvField(record[c]);
    out << "\r\n";
  };
  print_record(std::vector<Cell>(table.columns.begin(), table.columns.end()));
  for (const auto& row : table.rows) print_record(row);
}

void PrintJson(const Table& table, std::ostream& out) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
              object[table.columns[c]] = nullptr;
            } else {
              object[table.columns[c]] = v;
            }
          },
          row[c]);
    }
    rows.push_back(std::move(object));
  }
  out << rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

int RunQueryOrThrow(const QueryOptions& options, std::ostream& out) {
  if (options.format != "table" && options.format != "csv" && options.format != "json") {
    throw UsageError(
        fmt::format("unknown --format '{}'; valid formats: table, csv, json", options.format));
  }
  bool filtered = options.sweep || options.campaign || options.status ||
                  !options.where.empty() || !options.columns.empty() || !options.sort.empty();
  if (!options.sql.empty() && filtered) {
    throw UsageError("--sql cannot be combined with --sweep, --campaign, --status, --where, "
                     "--columns or --sort");
  }
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  Statement statement = options.sql.empty() ? BuildQuery(db->handle(), options)
                                            : PrepareSql(db->handle(), options);
  Table table = Fetch(statement);
  if (options.format == "table") {
    PrintTable(table, out);
  } else if (options.format == "csv") {
    PrintCsv(table, out);
  } else {
    PrintJson(table, out);
  }
  return kExitOk;
}

}  // namespace

int RunQuery(const QueryOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunQueryOrThrow(options, out);
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    err << "ditbench query: error: " << message << '\n';
    return kExitUsage;
  }
}

std::function<int()> DefineQueryCommand(CLI::App& sub) {
  struct Flags {
    QueryOptions options;
    std::string db = "results.db";
    std::string sweep, status;
    std::int64_t campaign = 0;
    CLI::Option* sweep_option = nullptr;
    CLI::Option* campaign_option = nullptr;
    CLI::Option* status_option = nullptr;
  };
  auto flags = std::make_shared<Flags>();
  sub.add_option("--db", flags->db, "Results database")->capture_default_str();
  flags->sweep_option = sub.add_option("--sweep", flags->sweep, "Only trials of this sweep");
  flags->campaign_option =
      sub.add_option("--campaign", flags->campaign, "Only trials of this campaign id");
  flags->status_option = sub.add_option("--status", flags->status, "Only trials with status");
  sub.add_option("--where", flags->options.where,
                 "Filters column=value, column!=value, column<value, column>value, <=, >= "
                 "(all must hold)");
  sub.add_option("--columns", flags->options.columns,
                 "Columns to print, comma-separated (default: a compact set for table, all "
                 "for csv and json)")
      ->delimiter(',');
  sub.add_option("--sort", flags->options.sort, "Sort by column, or column:desc");
  sub.add_option("--format", flags->options.format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub.add_option("--sql", flags->options.sql,
                 "Run one read-only SQL statement instead (e.g. over the `results` view)");
  return [flags] {
    QueryOptions options = flags->options;
    options.db = flags->db;
    if (flags->sweep_option->count()) options.sweep = flags->sweep;
    if (flags->campaign_option->count()) options.campaign = flags->campaign;
    if (flags->status_option->count()) options.status = flags->status;
    return RunQuery(options, std::cout, std::cerr);
  };
}

}  // namespace ditbench

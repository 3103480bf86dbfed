// `ditbench query`: see cli/query.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <variant>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "cli/query.h"
#include "metrics/metric_table.h"
#include "report/output_file.h"

#include "storage/results_db.h"

namespace ditbench {
namespace {

// A mistake in the user's query: reported as one line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Columns shown by `--format table` when --columns is not given: the degrees by name
// (kDegreeTable) between the trial's settings and its world size, then the metrics the metric
// table shows in query's default columns (metrics/metric_table.h), those marked
// kShownOnlyWhenSet only when some row has a value (kShownWhenSet).
const std::vector<std::string> kTableColumns = [] {
  std::vector<std::string> columns = {"campaign", "trial_key", "status", "model",
                                      "resolution", "precision", "scope"};
  for (const DegreeInfo& d : kDegreeTable) columns.emplace_back(d.name);
  columns.emplace_back("world_size");
  for (const MetricInfo* m : MetricsShownIn(kShownInQueryDefault)) columns.emplace_back(m->name);
  columns.emplace_back("error");
  return columns;
}();
const std::vector<std::string> kShownWhenSet = [] {
  std::vector<std::string> columns;
  for (const MetricInfo* m : MetricsShownIn(kShownInQueryDefault))
    if (m->shown_in & kShownOnlyWhenSet) columns.emplace_back(m->name);
  return columns;
}();

// `table` without the kShownWhenSet columns that are NULL in every row.
void DropEmptyOptionalColumns(ResultTable& table) {
  for (std::size_t c = table.columns.size(); c-- > 0;) {
    if (std::find(kShownWhenSet.begin(), kShownWhenSet.end(), table.columns[c]) ==
        kShownWhenSet.end())
      continue;
    const bool empty = std::all_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
      return std::holds_alternative<std::monostate>(row[c]);
    });
    if (!empty) continue;
    table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
  }
}

using Cell = ResultCell;
using Table = ResultTable;

struct Condition {
  std::string column, op, value;
};

std::string Trim(std::string text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// "column op value", spaces around the operator allowed ("precision = bf16").
Condition ParseCondition(const std::string& text) {
  std::size_t at = text.find_first_of("!<>=");
  if (at == std::string::npos || Trim(text.substr(0, at)).empty()) {
    throw UsageError(fmt::format(
        "malformed --where '{}': expected column=value, column!=value, column<value, "
        "column>value, column<=value or column>=value",
        text));
  }
  Condition condition;
  condition.column = Trim(text.substr(0, at));
  std::string rest = text.substr(at);
  for (const char* op : {"!=", "<=", ">=", "==", "=", "<", ">"}) {
    if (rest.rfind(op, 0) == 0) {
      condition.op = std::string(op) == "==" ? "=" : op;
      condition.value = Trim(rest.substr(std::string_view(op).size()));
      break;
    }
  }
  if (condition.op.empty() || condition.value.empty()) {
    throw UsageError(fmt::format("malformed --where '{}': missing operator or value", text));
  }
  return condition;
}

// The typed query behind the filters: parsing here, SQL in storage (ResultsDb::QueryResults).
ResultsQuery BuildQuery(const QueryOptions& options) {
  ResultsQuery query;
  query.sweep = options.sweep;
  query.campaign = options.campaign;
  query.status = options.status;
  query.columns = options.columns;
  if (query.columns.empty() && options.format == "table") query.columns = kTableColumns;
  for (const std::string& text : options.where) {
    Condition condition = ParseCondition(text);
    query.conditions.push_back({condition.column, condition.op, condition.value});
  }
  if (!options.sort.empty()) {
    std::string column = options.sort;
    if (std::size_t colon = column.find(':'); colon != std::string::npos) {
      std::string suffix = column.substr(colon + 1);
      column.resize(colon);
      if (suffix == "desc") {
        query.descending = true;
      } else if (suffix != "asc") {
        throw UsageError(fmt::format("malformed --sort '{}': expected column or column:desc",
                                     options.sort));
      }
    }
    query.sort_column = column;
  }
  return query;
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
      std::string flat = v.substr(0, 4096);
      std::replace(flat.begin(), flat.end(), '\n', ' ');
      std::replace(flat.begin(), flat.end(), '\r', ' ');
      std::replace(flat.begin(), flat.end(), '\t', ' ');
      flat = ForTerminal(flat);  // other controls escaped, valid UTF-8
      if (flat.size() > 60) {
        std::size_t cut = 57;  // at a character boundary
        while (cut > 0 && (static_cast<unsigned char>(flat[cut]) & 0xc0) == 0x80) --cut;
        flat = flat.substr(0, cut) + "...";
      }
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

// A failed write (a full disk) ends the query: nothing is gained by producing more rows.
void StopIfUnwritable(std::ostream& out) {
  if (!out) CheckOutput(out, "the query's rows");
}

// RFC 4180: CRLF line ends; fields with commas, quotes or line breaks quoted, quotes doubled.
// Rows are written as they come.
class CsvSink final : public ResultSink {
 public:
  explicit CsvSink(std::ostream& out) : out_(out) {}
  void Columns(const std::vector<std::string>& names) override {
    Row(std::vector<Cell>(names.begin(), names.end()));
  }
  void Row(const std::vector<Cell>& record) override {
    for (std::size_t c = 0; c < record.size(); ++c) out_ << (c ? "," : "") << CsvField(record[c]);
    out_ << "\r\n";
    StopIfUnwritable(out_);
  }

 private:
  std::ostream& out_;
};

// A JSON array of one object per row, indented by 2, written row by row; Finish() closes it.
class JsonSink final : public ResultSink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void Columns(const std::vector<std::string>& names) override { columns_ = names; }
  void Row(const std::vector<Cell>& row) override {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
              object[columns_[c]] = nullptr;
            } else {
              object[columns_[c]] = v;
            }
          },
          row[c]);
    }
    const std::string text =
        object.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    out_ << (rows_++ == 0 ? "[\n  " : ",\n  ");
    for (char ch : text) {  // one level deeper: inside the array
      out_ << ch;
      if (ch == '\n') out_ << "  ";
    }
    StopIfUnwritable(out_);
  }
  void Finish() { out_ << (rows_ == 0 ? "[]\n" : "\n]\n"); }

 private:
  std::ostream& out_;
  std::vector<std::string> columns_;
  std::size_t rows_ = 0;
};

void PrintCsv(const Table& table, std::ostream& out) {
  CsvSink sink(out);
  sink.Columns(table.columns);
  for (const auto& row : table.rows) sink.Row(row);
}

void PrintJson(const Table& table, std::ostream& out) {
  JsonSink sink(out);
  sink.Columns(table.columns);
  for (const auto& row : table.rows) sink.Row(row);
  sink.Finish();
}

// Rows measured while other work ran on the machine: their numbers are suspect, whatever
// columns were asked for. Counted over the same filters; said on stderr so that csv and json
// stay clean.
void WarnAboutBusyTrials(ResultsDb& db, ResultsQuery query, std::ostream& err) {
  query.columns = {"trial_key", "busy", "health_note"};
  query.sort_column.clear();
  const Table busy = db.QueryResults(query);
  std::vector<std::string> keys;
  std::string note;
  for (const auto& row : busy.rows) {
    const auto* flag = std::get_if<std::int64_t>(&row[1]);
    if (!flag || *flag == 0) continue;
    keys.push_back(std::get<std::string>(row[0]));
    if (note.empty()) {
      if (const auto* text = std::get_if<std::string>(&row[2])) note = *text;
    }
  }
  if (keys.empty()) return;
  const std::size_t shown = std::min<std::size_t>(keys.size(), 5);
  err << fmt::format(
      "ditbench query: warning: {} of {} trial(s) were measured while other work ran on the "
      "machine (column busy), e.g. {}: {}{}; rerun them on an idle machine (`ditbench run SWEEP "
      "--rerun busy --require-idle 600`)\n",
      keys.size(), busy.rows.size(), ForTerminal(keys.front()),
      note.empty() ? "busy" : ForTerminal(note, kConsoleErrorBytes),
      keys.size() > 1 ? fmt::format("; all: {}{}",
                                    ForTerminal(fmt::format("{}", fmt::join(keys.begin(),
                                                                keys.begin() + shown, ", "))),
                                    keys.size() > shown ? ", ..." : "")
                      : "");
}

int RunQueryOrThrow(const QueryOptions& options, std::ostream& out, std::ostream& err) {
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
  SqlLimits limits;
  limits.time = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  if (!options.sql.empty() && options.format == "csv") {  // streamed: one row held at a time
    CsvSink sink(out);
    db->StreamReadOnlySql(options.sql, limits, sink);
  } else if (!options.sql.empty() && options.format == "json") {
    JsonSink sink(out);
    db->StreamReadOnlySql(options.sql, limits, sink);
    sink.Finish();
  } else {
    Table table;
    if (options.sql.empty()) {
      table = db->QueryResults(BuildQuery(options));
      if (options.columns.empty() && options.format == "table") DropEmptyOptionalColumns(table);
    } else {
      struct : ResultSink {
        void Columns(const std::vector<std::string>& names) override { table->columns = names; }
        void Row(const std::vector<Cell>& cells) override { table->rows.push_back(cells); }
        Table* table;
      } collect;
      collect.table = &table;
      db->StreamReadOnlySql(options.sql, limits, collect);
    }
    if (options.format == "table") {
      PrintTable(table, out);
    } else if (options.format == "csv") {
      PrintCsv(table, out);
    } else {
      PrintJson(table, out);
    }
  }
  CheckOutput(out, "the query's rows");
  if (options.sql.empty()) WarnAboutBusyTrials(*db, BuildQuery(options), err);
  return kExitOk;
}

}  // namespace

int RunQuery(const QueryOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunQueryOrThrow(options, out, err);
  } catch (const OutputWriteError& e) {
    err << "ditbench query: error: " << OneLine(e.what()) << '\n';
    return kExitTrialsFailed;
  } catch (const UsageError& e) {
    err << "ditbench query: error: " << OneLine(e.what()) << '\n';
    return kExitUsage;
  } catch (const StorageError& e) {  // the query (QueryError) or the database it names
    err << "ditbench query: error: " << OneLine(e.what()) << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {  // anything else: README "Exit codes", as RunGuarded
    err << "ditbench query: error: " << OneLine(e.what()) << '\n';
    return kExitTrialsFailed;
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
  sub.add_option("--timeout", flags->options.timeout_s,
                 "--sql: stop the statement after this many seconds")
      ->check(Positive())
      ->capture_default_str();
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

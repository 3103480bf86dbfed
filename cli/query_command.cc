// `ditbench query`: see cli/query.h.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <variant>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/campaign_roles.h"
#include "analysis/configuration_group.h"
#include "analysis/speedup.h"
#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "cli/command.h"
#include "cli/number_checks.h"
#include "cli/query.h"
#include "metrics/metric_table.h"
#include "report/output_file.h"
#include "stats/order_statistics.h"

#include "base/user_error.h"
#include "cli/escaped_error.h"
#include "cli/format_option.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

// Columns shown by `--format table` when --columns is not given: the degrees by name
// (kDegreeTable) between the trial's settings and its world size, then the metrics the metric
// table shows in query's default columns (metrics/metric_table.h) and the answers the analysis
// layer adds (speedup, its doubts, the quality verdict); those marked kShownOnlyWhenSet, and
// frames, the speedup's doubts and quality, only when some row has a value other than NULL, 0
// or "" (kShownWhenSet: frames for clips, output error and PSNR where the sweep has them).
const std::vector<std::string> kTableColumns = [] {
  std::vector<std::string> columns = {"campaign", "trial_key", "status", "model",   "resolution",
                                      "frames",   "precision", "scope",  "settings"};
  for (const DegreeInfo& d : kDegreeTable) columns.emplace_back(d.name);
  columns.emplace_back("world_size");
  for (const MetricInfo* m : MetricsShownIn(kShownInQueryDefault)) columns.emplace_back(m->name);
  for (const char* column : {"speedup", "speedup_trust", "quality", "error"})
    columns.emplace_back(column);
  return columns;
}();
const std::vector<std::string> kShownWhenSet = [] {
  std::vector<std::string> columns = {"frames", "settings", "speedup_trust", "quality"};
  for (const MetricInfo* m : MetricsShownIn(kShownInQueryDefault))
    if (m->shown_in & kShownOnlyWhenSet) columns.emplace_back(m->name);
  return columns;
}();

// Whether `column` is a degree left out of labels at 1 (DegreeInfo::shown_at_one: tp).
bool DegreeShownAboveOne(const std::string& column) {
  return std::any_of(kDegreeTable.begin(), kDegreeTable.end(),
                     [&](const DegreeInfo& d) { return !d.shown_at_one && d.name == column; });
}

// `table` without the kShownWhenSet columns that are NULL, 0 or "" in every row, and without
// the degrees shown above 1 only that are 1 in every row.
void DropEmptyOptionalColumns(ResultTable& table) {
  for (std::size_t c = table.columns.size(); c-- > 0;) {
    const bool degree = DegreeShownAboveOne(table.columns[c]);
    if (!degree && std::find(kShownWhenSet.begin(), kShownWhenSet.end(), table.columns[c]) ==
                       kShownWhenSet.end())
      continue;
    const std::int64_t unset = degree ? 1 : 0;
    const bool empty = std::all_of(table.rows.begin(), table.rows.end(), [&](const auto& row) {
      const ResultCell& cell = row[c];
      if (const auto* n = std::get_if<std::int64_t>(&cell)) return *n == unset;
      if (const auto* t = std::get_if<std::string>(&cell)) return t->empty();
      return std::holds_alternative<std::monostate>(cell);
    });
    if (!empty) continue;
    table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
  }
}

// Whether the query shows or filters on a column the analysis layer computes.
bool UsesDerived(const ResultsQuery& query) {
  const auto derived = [](const std::string& column) {
    return column == "speedup" || column == "speedup_trust" || column == "settings";
  };
  return query.columns.empty() ||
         std::any_of(query.columns.begin(), query.columns.end(), derived) ||
         derived(query.sort_column) ||
         std::any_of(query.conditions.begin(), query.conditions.end(),
                     [&](const ResultsCondition& c) { return derived(c.column); });
}

// What the analysis layer derives for every stored trial, joined to the view by storage: the
// speedups the report shows (analysis/speedup.h), over the campaigns that answer
// (analysis/campaign_roles.h), so one row has one speedup everywhere; and each trial's
// settings label (SettingsAndLoadLabel), so a sweep over any setting or load reads apart.
void AddDerived(ResultsReader& db, ResultsQuery& query) {
  const std::vector<CampaignInfo> campaigns = db.Campaigns();
  std::vector<std::int64_t> ids;
  for (const CampaignInfo& c : campaigns) ids.push_back(c.id);
  const std::vector<ResultRow> rows = db.Results(ids);
  const std::set<std::int64_t> answering = AnsweringCampaigns(campaigns);
  std::vector<ResultRow> answering_rows;
  for (const ResultRow& row : rows)
    if (answering.count(row.campaign)) answering_rows.push_back(row);
  const std::map<TrialId, Speedup> speedups = TrialSpeedups(answering_rows);
  for (const ResultRow& row : rows) {
    DerivedRowValues values{row.campaign, row.trial_key, std::nullopt, "",
                            SettingsAndLoadLabel(row)};
    if (auto found = speedups.find({row.campaign, row.trial_key}); found != speedups.end()) {
      values.speedup = found->second.value;
      values.trust = found->second.trust.Names();
    }
    query.derived.push_back(std::move(values));
  }
}

// Formats people read (a console, a pull request): the compact columns by default.
bool HumanFormat(TableFormat format) {
  return format == TableFormat::kText || format == TableFormat::kMarkdown;
}

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
    throw UserError(
        fmt::format("malformed --where '{}': expected column=value, column!=value, column<value, "
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
    throw UserError(fmt::format("malformed --where '{}': missing operator or value", text));
  }
  return condition;
}

// The typed query behind the filters: parsing here, SQL in storage (SqlConsole::QueryResults).
ResultsQuery BuildQuery(const QueryOptions& options) {
  ResultsQuery query;
  query.sweep = options.sweep;
  query.campaign = options.campaign;
  query.status = options.status;
  query.columns = options.columns;
  if (query.columns.empty() && HumanFormat(options.format)) query.columns = kTableColumns;
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
        throw UserError(
            fmt::format("malformed --sort '{}': expected column or column:desc", options.sort));
      }
    }
    query.sort_column = column;
  }
  return query;
}

// The hint of a result column, from its name and what its rows hold: text when any row holds
// text; milliseconds (`*_ms`) with one number of decimals, speedup as a ratio; a metric of the
// metric table printed as a fixed-point number (PSNR, SSIM, MiB) with the decimals the report
// shows it with (metrics/metric_table.h: FixedDecimals); other numbers by magnitude (their
// meaning is not known here, e.g. a --sql column).
Column QueryColumn(const std::string& name, const std::vector<std::vector<ResultCell>>& rows,
                   std::size_t c) {
  Column column{.name = name, .hint = ColumnHint::kNumber, .max_chars = 60};
  const bool text = std::any_of(rows.begin(), rows.end(), [&](const auto& row) {
    return std::holds_alternative<std::string>(row[c]);
  });
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (text) {
    column.hint = ColumnHint::kText;
  } else if (ends_with("_ms")) {
    column.hint = ColumnHint::kMs;
  } else if (name == "speedup") {
    column.hint = ColumnHint::kRatio;
  } else if (const MetricInfo* metric = FindMetric(name)) {
    column.decimals = FixedDecimals(metric->hint).value_or(-1);
  }
  return column;
}

// The percentile a column of the view holds (p90_ms: 0.90, p95_ms, p99_ms); none for others.
std::optional<double> PercentileOf(const std::string& column) {
  if (column.size() != 6 || column[0] != 'p' || column.compare(3, 3, "_ms") != 0 ||
      !std::isdigit(static_cast<unsigned char>(column[1])) ||
      !std::isdigit(static_cast<unsigned char>(column[2])))
    return std::nullopt;
  return std::stoi(column.substr(1, 2)) / 100.0;
}

// Adds the count of samples (`iterations`: the pooled timed iterations, a serving trial's
// requests) to a query that shows a percentile without it, for WithholdUnboundedPercentiles;
// returns whether it did. Every column (none named) has it already.
bool AskSampleCount(ResultsQuery& query) {
  const auto& columns = query.columns;
  if (columns.empty() || std::find(columns.begin(), columns.end(), "iterations") != columns.end() ||
      std::none_of(columns.begin(), columns.end(),
                   [](const std::string& c) { return PercentileOf(c).has_value(); }))
    return false;
  query.columns.emplace_back("iterations");
  return true;
}

// Adds speedup_trust to a query that shows the speedup without it, so that the speedup can
// carry its doubts (NoteSpeedupDoubts); returns whether it did.
bool AskSpeedupDoubts(ResultsQuery& query) {
  const auto& columns = query.columns;
  if (columns.empty() || std::find(columns.begin(), columns.end(), "speedup") == columns.end() ||
      std::find(columns.begin(), columns.end(), "speedup_trust") != columns.end())
    return false;
  query.columns.emplace_back("speedup_trust");
  return true;
}

// A note per cell of a result ("" for none).
using CellNotes = std::vector<std::vector<std::string>>;

// Every percentile its row's samples cannot bound (stats/order_statistics.h, PercentileBounded:
// the one rule) emptied, the reason its note; `asked_count`: the `iterations` column that
// AskSampleCount added, dropped again.
CellNotes WithholdUnboundedPercentiles(ResultTable& table, bool asked_count) {
  CellNotes notes(table.rows.size(), std::vector<std::string>(table.columns.size()));
  const auto count = std::find(table.columns.begin(), table.columns.end(), "iterations");
  if (count == table.columns.end()) return notes;
  const std::size_t n_column = static_cast<std::size_t>(count - table.columns.begin());
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const std::optional<double> p = PercentileOf(table.columns[c]);
    if (!p) continue;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const auto* n = std::get_if<std::int64_t>(&table.rows[r][n_column]);
      if (n == nullptr || *n <= 0 || PercentileBounded(static_cast<std::size_t>(*n), *p)) continue;
      table.rows[r][c] = std::monostate();
      notes[r][c] = PercentileWithheldWhy(static_cast<std::size_t>(*n), *p);
    }
  }
  if (asked_count) {
    table.columns.erase(table.columns.begin() + static_cast<std::ptrdiff_t>(n_column));
    for (auto& row : table.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(n_column));
    for (auto& row : notes) row.erase(row.begin() + static_cast<std::ptrdiff_t>(n_column));
  }
  return notes;
}

// Each speedup's doubts (the row's speedup_trust: "busy", "borrowed baseline", ...) as its
// note, so that every format carries them with the figure ("4.82x (busy)", CSV and JSON
// "speedup_note"); speedup_trust stays a column of its own for scripts that filter on it.
void NoteSpeedupDoubts(ResultTable& table, CellNotes& notes, bool asked_doubts) {
  const auto column = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(table.columns.begin(), table.columns.end(), name) -
                                    table.columns.begin());
  };
  const std::size_t speedup = column("speedup"), trust = column("speedup_trust");
  if (speedup == table.columns.size() || trust == table.columns.size()) return;
  for (std::size_t r = 0; r < table.rows.size() && r < notes.size(); ++r)
    if (const auto* doubts = std::get_if<std::string>(&table.rows[r][trust]))
      notes[r][speedup] = *doubts;
  if (!asked_doubts) return;  // the column AskSpeedupDoubts added, dropped again
  const auto at = static_cast<std::ptrdiff_t>(trust);
  table.columns.erase(table.columns.begin() + at);
  for (auto& row : table.rows) row.erase(row.begin() + at);
  for (auto& row : notes) row.erase(row.begin() + at);
}

// The query's result as the table its printers read; with `notes`, a percentile column and
// the speedup carry them (a withheld one says why: "(withheld: ...)", CSV and JSON "p99_ms_note").
Table ToTable(const ResultTable& result, const CellNotes& notes = {}) {
  std::vector<Column> columns;
  for (std::size_t c = 0; c < result.columns.size(); ++c) {
    columns.push_back(QueryColumn(result.columns[c], result.rows, c));
    columns.back().notes = !notes.empty() && (PercentileOf(result.columns[c]).has_value() ||
                                              result.columns[c] == "speedup");
  }
  Table table(std::move(columns));
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    std::vector<Cell> cells(result.rows[r].begin(), result.rows[r].end());
    if (r < notes.size())
      for (std::size_t c = 0; c < cells.size(); ++c) cells[c].note = notes[r][c];
    table.AddRow(std::move(cells));
  }
  return table;
}

// Columns as --sql names them, before any row is known: numbers of no known meaning.
std::vector<Column> SqlColumns(const std::vector<std::string>& names) {
  std::vector<Column> columns;
  for (const std::string& name : names)
    columns.push_back({.name = name, .hint = ColumnHint::kNumber});
  return columns;
}

// A failed write (a full disk) ends the query: nothing is gained by producing more rows.
void StopIfUnwritable(std::ostream& out) {
  if (!out) CheckOutput(out, "the query's rows");
}

// CSV (base/table_printers.h) as the rows come, one held at a time.
class CsvSink final : public ResultSink {
 public:
  explicit CsvSink(std::ostream& out) : out_(out) {}
  void Columns(const std::vector<std::string>& names) override {
    writer_.emplace(out_, SqlColumns(names));
    writer_->Header();
    StopIfUnwritable(out_);
  }
  void Row(const std::vector<ResultCell>& record) override {
    writer_->Row(std::vector<Cell>(record.begin(), record.end()));
    StopIfUnwritable(out_);
  }

 private:
  std::ostream& out_;
  std::optional<CsvWriter> writer_;
};

// JSON (base/table_printers.h) as the rows come; Finish() closes the array.
class JsonSink final : public ResultSink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void Columns(const std::vector<std::string>& names) override {
    writer_.emplace(out_, SqlColumns(names));
  }
  void Row(const std::vector<ResultCell>& row) override {
    writer_->Row(std::vector<Cell>(row.begin(), row.end()));
    StopIfUnwritable(out_);
  }
  void Finish() {
    if (writer_) writer_->Finish();
  }

 private:
  std::ostream& out_;
  std::optional<JsonWriter> writer_;
};

// Rows measured while other work ran on the machine: their numbers are suspect, whatever
// columns were asked for. Counted over the same filters; said on stderr so that csv and json
// stay clean.
void WarnAboutBusyTrials(SqlConsole& db, ResultsQuery query, std::ostream& err) {
  query.columns = {"trial_key", "busy", "health_note"};
  query.sort_column.clear();
  const ResultTable busy = db.QueryResults(query);
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
  bool filtered = options.sweep || options.campaign || options.status ||
                  !options.where.empty() || !options.columns.empty() || !options.sort.empty();
  if (!options.sql.empty() && filtered) {
    throw UserError(
        "--sql cannot be combined with --sweep, --campaign, --status, --where, "
        "--columns or --sort");
  }
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  SqlLimits limits;
  limits.time = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
  if (!options.sql.empty() &&
      options.format == TableFormat::kCsv) {  // streamed: one row held at a time
    CsvSink sink(out);
    db->console().StreamReadOnlySql(options.sql, limits, sink);
  } else if (!options.sql.empty() && options.format == TableFormat::kJson) {
    JsonSink sink(out);
    db->console().StreamReadOnlySql(options.sql, limits, sink);
    sink.Finish();
  } else {
    ResultTable table;
    CellNotes notes;
    if (options.sql.empty()) {
      ResultsQuery query = BuildQuery(options);
      const bool asked_count = AskSampleCount(query);
      const bool asked_doubts = AskSpeedupDoubts(query);
      if (UsesDerived(query)) AddDerived(db->reader(), query);
      table = db->console().QueryResults(query);
      if (options.columns.empty() && HumanFormat(options.format)) DropEmptyOptionalColumns(table);
      notes = WithholdUnboundedPercentiles(table, asked_count);
      NoteSpeedupDoubts(table, notes, asked_doubts);
    } else {
      struct : ResultSink {
        void Columns(const std::vector<std::string>& names) override { table->columns = names; }
        void Row(const std::vector<ResultCell>& cells) override { table->rows.push_back(cells); }
        ResultTable* table;
      } collect;
      collect.table = &table;
      db->console().StreamReadOnlySql(options.sql, limits, collect);
    }
    PrintAs(
        options.format,
        {{TableFormat::kText,
          [&](std::ostream& o) {
            PrintText(ToTable(table, notes), o);
            o << "(" << table.rows.size() << (table.rows.size() == 1 ? " row)\n" : " rows)\n");
          }}},
        [&] { return ToTable(table, notes); }, out);
  }
  CheckOutput(out, "the query's rows");
  if (options.sql.empty()) WarnAboutBusyTrials(db->console(), BuildQuery(options), err);
  return kExitOk;
}

}  // namespace

int RunQuery(const QueryOptions& options, std::ostream& out, std::ostream& err) {
  try {
    return RunQueryOrThrow(options, out, err);
  } catch (const StorageError& e) {  // the query (QueryError) or the database it names
    err << "ditbench query: error: " << OneLine(e.what()) << '\n';
    return StorageErrorExit(e);
  } catch (...) {  // a mistake in the query (UserError), or not the user's: as RunGuarded
    return ReportEscapedError("ditbench query", err);
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
  auto format = AddFormatOption(sub, "query", EveryTableFormat());
  sub.add_option("--sql", flags->options.sql,
                 "Run one read-only SQL statement instead (e.g. over the `results` view)");
  sub.add_option("--timeout", flags->options.timeout_s,
                 "--sql: stop the statement after this many seconds")
      ->check(Positive())
      ->capture_default_str();
  return [flags, format] {
    QueryOptions options = flags->options;
    options.format = format->Value();
    options.db = flags->db;
    if (flags->sweep_option->count()) options.sweep = flags->sweep;
    if (flags->campaign_option->count()) options.campaign = flags->campaign;
    if (flags->status_option->count()) options.status = flags->status;
    return RunQuery(options, std::cout, std::cerr);
  };
}

}  // namespace ditbench

#include "storage/sql_console.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "base/did_you_mean.h"
#include "experiments/trial.h"
#include "metrics/metric_table.h"
#include "storage/computation_columns.h"
#include "storage/statement.h"
#include "storage/stored_text.h"

namespace ditbench {
namespace {

void CheckColumn(const std::string& name, const std::vector<std::string>& valid,
                 const char* option) {
  if (std::find(valid.begin(), valid.end(), name) != valid.end()) return;
  const std::string best = DidYouMean(name, valid);
  std::string hint = best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
  throw QueryError(fmt::format("unknown column '{}' in {}{}; valid columns: {}", name, option, hint,
                               fmt::join(valid, ", ")));
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

// Column `i` of the current row, typed as SQLite holds it.
ResultCell Cell(const Statement& statement, int i) {
  switch (statement.ColumnType(i)) {
    case SQLITE_NULL:
      return std::monostate{};
    case SQLITE_INTEGER:
      return statement.Int(i);
    case SQLITE_FLOAT:
      return statement.Double(i);
    default:
      return statement.Text(i);
  }
}

// The `results` view's columns, in order.
std::vector<std::string> ViewColumns(sqlite3* db) {
  Statement probe(db, "SELECT * FROM results LIMIT 0");
  std::vector<std::string> columns;
  for (int i = 0; i < probe.ColumnCount(); ++i) columns.push_back(probe.ColumnName(i));
  return columns;
}

ResultTable Fetch(Statement& statement) {
  ResultTable table;
  for (int i = 0; i < statement.ColumnCount(); ++i)
    table.columns.push_back(statement.ColumnName(i));
  while (statement.Step()) {
    std::vector<ResultCell>& row = table.rows.emplace_back();
    for (int i = 0; i < statement.ColumnCount(); ++i) row.push_back(Cell(statement, i));
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

// Columns of the view that hold text and are no part of a trial's computation (those are typed
// by what they hold: ComputationColumns); every other column holds numbers (or NULL), so a
// --where value for it must be a number.
bool IsTextColumn(const std::string& column) {
  static const std::vector<std::string> text = {
      "sweep",         "trial_key",     "status",
      "device",        "build",         "error",
      "host",          "started_at",    "finished_at",
      "run_dir",       "health_note",   "axes",
      "placement",     "policy",        "metrics",
      "quality",       "speedup_trust", "settings",
      "profile",       "energy_note",   "output_error_note",
      "attention_ran", "step_kernels",  "model_overrides",
      "ci_scope"};
  return std::find(text.begin(), text.end(), column) != text.end();
}

// Text columns of the view that hold what a worker or a machine said, of any length: a
// reader takes them cut (storage/stored_text.h).
bool IsFreeTextColumn(const std::string& column) {
  static const std::vector<std::string> free_text = {
      "error",   "health_note",   "run_dir", "energy_note", "output_error_note",
      "quality", "attention_ran", "build",   "host"};
  return std::find(free_text.begin(), free_text.end(), column) != free_text.end();
}

bool IsNumber(const std::string& value) {
  const char* end = value.data() + value.size();
  double real = 0;
  auto [real_end, real_error] = std::from_chars(value.data(), end, real);
  return !value.empty() && real_error == std::errc() && real_end == end;
}

// The values `sql` returns in its first column, as text.
std::vector<std::string> Column(sqlite3* db, const char* sql) {
  Statement statement(db, sql);
  std::vector<std::string> values;
  while (statement.Step()) values.push_back(statement.Text(0));
  return values;
}

// The view plus `speedup`, `speedup_trust` and `settings`, joined from the caller's values (one
// JSON array bound as the statement's first parameter: [[campaign, trial_key, speedup, trust,
// settings], ...]); each row's trial `t`, for the columns read from its stored JSON.
constexpr const char* kResultsWithDerived = R"sql(
  WITH derived AS MATERIALIZED (
    SELECT json_extract(value, '$[0]') AS campaign, json_extract(value, '$[1]') AS trial_key,
           json_extract(value, '$[2]') AS speedup, json_extract(value, '$[3]') AS trust,
           json_extract(value, '$[4]') AS settings
    FROM json_each(?))
  SELECT r.*, s.speedup AS speedup, NULLIF(s.trust, '') AS speedup_trust,
         NULLIF(s.settings, '') AS settings
  FROM results r JOIN trials t ON t.campaign_id = r.campaign AND t.trial_key = r.trial_key
  LEFT JOIN derived s ON s.campaign = r.campaign AND s.trial_key = r.trial_key)sql";

// The custom axes of `command` trials in the database (names safe to quote), minus any that
// would shadow a column of the view.
std::vector<std::string> CustomAxes(sqlite3* db, const std::vector<std::string>& columns) {
  std::vector<std::string> axes;
  for (const std::string& name :
       Column(db, "SELECT DISTINCT j.key FROM results r, json_each(r.axes) j ORDER BY j.key")) {
    const bool safe = !name.empty() && name.size() <= 64 &&
                      std::all_of(name.begin(), name.end(),
                                  [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    if (safe && std::find(columns.begin(), columns.end(), name) == columns.end())
      axes.push_back(name);
  }
  return axes;
}

// The metrics read from metric_values (metrics/metric_table.h): every row of the metric table
// shown in query's default columns or named in `requested` that the view has no column for
// (NULL where a trial has none, so that a built-in metric is a column of any database, as a
// script querying it expects), then the extra metrics stored with valid names; minus any that
// would shadow a column of the view or a custom axis.
std::vector<std::string> ExtraMetricColumns(sqlite3* db, const std::vector<std::string>& columns,
                                            const std::set<std::string>& requested) {
  std::vector<std::string> names;
  const auto add = [&](const std::string& name) {
    if (IsValidMetricName(name) &&
        std::find(columns.begin(), columns.end(), name) == columns.end() &&
        std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  };
  for (const MetricInfo& m : MetricTable())
    if ((m.shown_in & kShownInQueryDefault) || requested.contains(std::string(m.name)))
      add(std::string(m.name));
  for (const std::string& name :
       Column(db, "SELECT DISTINCT name FROM metric_values ORDER BY name"))
    add(name);
  return names;
}

void RefuseUnknownSweep(sqlite3* db, const std::string& sweep) {
  const std::vector<std::string> sweeps = Column(db, "SELECT name FROM sweeps ORDER BY name");
  if (std::find(sweeps.begin(), sweeps.end(), sweep) != sweeps.end()) return;
  const std::string best = DidYouMean(sweep, sweeps);
  throw QueryError(
      fmt::format("unknown sweep '{}'{}; known sweeps: {}", sweep,
                  best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best),
                  sweeps.empty() ? "none" : fmt::format("{}", fmt::join(sweeps, ", "))));
}

void RefuseUnknownCampaign(sqlite3* db, std::int64_t campaign) {
  const std::vector<std::string> campaigns =
      Column(db,
             "SELECT c.id || ' (' || s.name || ')' FROM campaigns c "
             "JOIN sweeps s ON s.id = c.sweep_id ORDER BY c.id");
  const std::string prefix = std::to_string(campaign) + " (";
  if (std::any_of(campaigns.begin(), campaigns.end(),
                  [&](const std::string& c) { return c.rfind(prefix, 0) == 0; }))
    return;
  throw QueryError(
      fmt::format("unknown campaign {}; known campaigns: {}", campaign,
                  campaigns.empty() ? "none" : fmt::format("{}", fmt::join(campaigns, ", "))));
}

// The columns by name, each free text cut to what a reader takes (storage/stored_text.h).
std::string SelectList(const std::vector<std::string>& columns) {
  std::vector<std::string> selected;
  for (const std::string& c : columns)
    selected.push_back(IsFreeTextColumn(c)
                           ? fmt::format("{} AS \"{}\"", ShownTextSql("\"" + c + "\""), c)
                           : "\"" + c + "\"");
  return fmt::format("{}", fmt::join(selected, ", "));
}

const std::vector<std::string>& Operators() {
  static const std::vector<std::string> ops = {"=", "!=", "<", ">", "<=", ">="};
  return ops;
}

// What a query may name: the view's columns, the derived ones, the custom axes, the computation's
// knobs and the extra metrics; and the SQL that adds to the view those it lacks.
struct QueryableColumns {
  std::vector<std::string> valid;
  std::vector<std::string> shown;           // a query's columns when it names none
  std::string select;                       // ", <expression> AS "<name>"" for each not in the view
  std::map<std::string, HeldValues> typed;  // what each column from stored JSON may hold
};

QueryableColumns Queryable(sqlite3* db, const ResultsQuery& query) {
  QueryableColumns q;
  q.valid = ViewColumns(db);
  q.valid.insert(q.valid.end(), {"speedup", "speedup_trust", "settings"});  // kResultsWithDerived
  // Each custom axis of a command sweep is a column too, after the view's (from `axes`): what
  // the sweep gave it, numbers or text.
  for (const std::string& name : CustomAxes(db, q.valid)) {
    q.select += fmt::format(", json_extract(r.axes, '$.\"{0}\"') AS \"{0}\"", name);
    q.valid.push_back(name);
    q.typed[name] = {.numbers = true, .text = true};
  }
  std::set<std::string> requested(query.columns.begin(), query.columns.end());
  for (const auto& condition : query.conditions) requested.insert(condition.column);
  requested.insert(query.sort_column);
  // So is each knob of the computation, typed by what the trials hold; not shown unless named.
  std::vector<std::string> knobs;
  for (const ComputationColumn& c : ComputationColumns(db)) {
    q.typed[c.name] = c.holds;
    if (std::find(q.valid.begin(), q.valid.end(), c.name) != q.valid.end()) continue;
    if (requested.contains(c.name)) q.select += fmt::format(", {} AS \"{}\"", c.value, c.name);
    knobs.push_back(c.name);
  }
  // So is each extra metric (a command's own numbers), read from metric_values by name; the
  // name is a valid identifier (IsValidMetricName), so it is safe to quote.
  for (const std::string& name : ExtraMetricColumns(db, q.valid, requested)) {
    q.select += fmt::format(
        ", (SELECT v.value FROM metric_values v WHERE v.trial_id = t.id AND v.name = '{0}') "
        "AS \"{0}\"",
        name);
    q.valid.push_back(name);
  }
  q.shown = q.valid;
  q.valid.insert(q.valid.end(), knobs.begin(), knobs.end());
  return q;
}

// One --where condition as a clause of one parameter, its value typed as its column is: text
// columns compare as text, number columns as numbers, and a column holding both (a custom axis,
// a resolution of 512 or "768x512") as the value reads.
struct Parameter {
  std::string value;
  bool text;
};

Parameter ConditionParameter(const ResultsCondition& condition, const QueryableColumns& columns) {
  CheckColumn(condition.column, columns.valid, "--where");
  if (std::find(Operators().begin(), Operators().end(), condition.op) == Operators().end()) {
    throw QueryError(fmt::format("unknown operator '{}' for column '{}'; expected one of {}",
                                 condition.op, condition.column, fmt::join(Operators(), " ")));
  }
  const bool number = IsNumber(condition.value);
  const auto typed = columns.typed.find(condition.column);
  if (typed != columns.typed.end() && typed->second.text)
    return {condition.value, !(typed->second.numbers && number)};
  if (IsTextColumn(condition.column)) return {condition.value, true};
  if (!number) {
    throw QueryError(fmt::format("--where {}{}{}: '{}' holds numbers and '{}' is not one",
                                 condition.column, condition.op, condition.value, condition.column,
                                 condition.value));
  }
  return {condition.value, false};
}

}  // namespace

ResultTable SqlConsole::QueryResults(const ResultsQuery& query) {
  const QueryableColumns columns = Queryable(db_, query);
  for (const std::string& column : query.columns) CheckColumn(column, columns.valid, "--columns");

  // Each clause has one parameter; sweep and status compare text, the others by their column.
  std::vector<std::string> clauses;
  std::vector<Parameter> values;
  if (query.sweep) {
    RefuseUnknownSweep(db_, *query.sweep);
    clauses.push_back("sweep = ?");
    values.push_back({*query.sweep, true});
  }
  if (query.campaign) {
    RefuseUnknownCampaign(db_, *query.campaign);
    clauses.push_back("campaign = ?");
    values.push_back({std::to_string(*query.campaign), false});
  }
  if (query.status) {
    if (!ParseStatus(*query.status)) {
      throw QueryError(
          fmt::format("unknown status '{}'; valid statuses: {}", *query.status, StatusList()));
    }
    clauses.push_back("status = ?");
    values.push_back({*query.status, true});
  }
  for (const ResultsCondition& condition : query.conditions) {
    values.push_back(ConditionParameter(condition, columns));
    clauses.push_back(fmt::format("\"{}\" {} ?", condition.column, condition.op));
  }

  std::string order =
      "campaign, model, resolution, precision, scope, batch, steps, "
      "latency_ms IS NULL, latency_ms, trial_key";
  if (!query.sort_column.empty()) {
    CheckColumn(query.sort_column, columns.valid, "--sort");
    order = fmt::format("\"{0}\" IS NULL, \"{0}\" {1}, campaign, trial_key", query.sort_column,
                        query.descending ? "DESC" : "ASC");
  }
  const std::string select = SelectList(query.columns.empty() ? columns.shown : query.columns);
  std::string where = clauses.empty() ? "" : fmt::format(" WHERE {}", fmt::join(clauses, " AND "));
  std::string source = kResultsWithDerived;
  const std::string last_column = "NULLIF(s.settings, '') AS settings";
  source.replace(source.find(last_column), last_column.size(), last_column + columns.select);
  Statement statement(db_, fmt::format("SELECT {} FROM ({}) AS results{} ORDER BY {}", select,
                                       source, where, order));
  nlohmann::json derived = nlohmann::json::array();
  for (const DerivedRowValues& v : query.derived)
    derived.push_back({v.campaign, v.trial_key, v.speedup ? nlohmann::json(*v.speedup) : nullptr,
                       v.trust, v.settings});
  statement.Bind(1, derived.dump());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int index = static_cast<int>(i + 2);
    if (values[i].text) {
      statement.Bind(index, values[i].value);
    } else {
      BindValue(statement, index, values[i].value);
    }
  }
  return Fetch(statement);
}

namespace {

// While alive: a progress handler that stops the connection's statement past `deadline`, and
// SQLite's heap capped at `heap_bytes` (the previous cap restored after).
class SqlBounds {
 public:
  SqlBounds(sqlite3* db, const SqlLimits& limits)
      : db_(db), deadline_(std::chrono::steady_clock::now() + limits.time) {
    sqlite3_progress_handler(db_, 1000, &SqlBounds::Check, this);
    if (limits.heap_bytes > 0) previous_heap_ = sqlite3_hard_heap_limit64(limits.heap_bytes);
  }
  ~SqlBounds() {
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    if (previous_heap_) sqlite3_hard_heap_limit64(*previous_heap_);
  }
  SqlBounds(const SqlBounds&) = delete;
  SqlBounds& operator=(const SqlBounds&) = delete;

  bool expired() const { return expired_; }

 private:
  static int Check(void* self) {
    auto& bounds = *static_cast<SqlBounds*>(self);
    bounds.expired_ = std::chrono::steady_clock::now() > bounds.deadline_;
    return bounds.expired_ ? 1 : 0;  // non-zero interrupts the statement
  }
  sqlite3* db_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<sqlite3_int64> previous_heap_;
  bool expired_ = false;
};

}  // namespace

void SqlConsole::StreamReadOnlySql(const std::string& sql, const SqlLimits& limits,
                                   ResultSink& sink) {
  // The database opened and checked already: a statement that does not prepare is the user's
  // (a typo, an unknown table, a function refused on this connection).
  std::optional<Statement> prepared;
  try {
    prepared.emplace(db_, sql);
  } catch (const StorageError& e) {
    throw QueryError(e.what());
  }
  Statement& statement = *prepared;
  if (statement.tail().find_first_not_of(" \t\r\n;") != std::string::npos) {
    throw QueryError("--sql takes exactly one statement");
  }
  if (!statement.ReadOnly()) {
    throw QueryError(
        "--sql must be a read-only statement (SELECT ...); the database is "
        "opened read-only");
  }
  std::vector<std::string> names;
  for (int i = 0; i < statement.ColumnCount(); ++i) names.push_back(statement.ColumnName(i));
  sink.Columns(names);
  SqlBounds bounds(db_, limits);
  std::vector<ResultCell> row;
  try {
    while (statement.Step()) {
      row.clear();
      for (int i = 0; i < statement.ColumnCount(); ++i) row.push_back(Cell(statement, i));
      sink.Row(row);
    }
  } catch (const StorageError& e) {
    if (bounds.expired()) {
      throw QueryError(
          fmt::format("--sql ran past its time limit of {} s and was stopped (--timeout raises it)",
                      std::chrono::duration_cast<std::chrono::seconds>(limits.time).count()));
    }
    if (std::string_view(e.what()).find("out of memory") != std::string_view::npos) {
      throw QueryError(fmt::format("--sql needed more than {} MiB of memory and was stopped",
                                   limits.heap_bytes >> 20));
    }
    throw;
  }
}

}  // namespace ditbench

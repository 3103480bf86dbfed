#include "storage/computation_columns.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "experiments/trial_identity.h"
#include "experiments/trial_settings.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// "$.cache.kind" -> "cache.kind", and "$.cache.\"warmup_steps\"" -> "cache.warmup_steps" (json_tree
// quotes a key with anything but letters and digits): "" unless every step of the path is a
// name of letters, digits and '_' that does not start with a digit.
std::string PathName(const std::string& full_key) {
  if (full_key.rfind("$.", 0) != 0 || full_key.size() > 130) return "";
  std::string name;
  for (std::size_t at = 2; at <= full_key.size(); ++at) {
    std::size_t end = full_key.find('.', at);
    if (end == std::string::npos) end = full_key.size();
    std::string step = full_key.substr(at, end - at);
    if (step.size() >= 2 && step.front() == '"' && step.back() == '"')
      step = step.substr(1, step.size() - 2);
    const bool plain = !step.empty() && !std::isdigit(static_cast<unsigned char>(step[0])) &&
                       std::all_of(step.begin(), step.end(),
                                   [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    if (!plain) return "";
    name += (name.empty() ? "" : ".") + step;
    at = end;
  }
  return name;
}

// A json_tree type ("integer", "text", "object", ...) added to what a column holds.
void Hold(HeldValues& holds, const std::string& json_type) {
  if (json_type == "null") return;
  if (json_type == "text" || json_type == "object" || json_type == "array") {
    holds.text = true;
  } else {
    holds.numbers = true;  // integer, real, true, false
  }
}

std::string JsonType(const nlohmann::json& value) {
  if (value.is_null()) return "null";
  if (value.is_string()) return "text";
  if (value.is_object()) return "object";
  if (value.is_array()) return "array";
  return "integer";
}

// A default as an SQL literal of the type json_extract reads its field as: a number, 1 or 0
// for a boolean, and otherwise text (an object or array as its compact JSON).
std::string SqlLiteral(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "1" : "0";
  if (value.is_number()) return value.dump();
  const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  std::string quoted = "'";
  for (const char c : text) {
    quoted += c;
    if (c == '\'') quoted += '\'';
  }
  return quoted + "'";
}

// A field's identity default, where it has one that does not depend on the rest of the trial.
std::optional<nlohmann::json> FieldDefault(const std::string& field) {
  if (field == "pipefusion_patches") return std::nullopt;  // the trial's pipefusion
  return IdentityDefault(field, nlohmann::json::object());
}

void AddField(std::map<std::string, ComputationColumn>& columns, const std::string& name) {
  ComputationColumn& column = columns[name];
  if (!column.name.empty()) return;
  column.name = name;
  column.value = fmt::format("json_extract(t.config_json, '$.{}')", name);
  if (name.find('.') != std::string::npos) return;  // inside a field: NULL where left out
  if (const std::optional<nlohmann::json> fallback = FieldDefault(name)) {
    column.value = fmt::format("COALESCE({}, {})", column.value, SqlLiteral(*fallback));
    Hold(column.holds, JsonType(*fallback));
  }
}

}  // namespace

std::vector<ComputationColumn> ComputationColumns(sqlite3* db) {
  std::map<std::string, ComputationColumn> columns;
  // Every setting's field with a default, whether or not a trial here sets it.
  for (const std::string& key : TrialKeys()) {
    const std::string field = CanonicalKeyOf(key);
    if (field != "custom" && FieldDefault(field) && !PathName("$." + field).empty())
      AddField(columns, field);
  }
  // What the stored computations hold, path by path: no array element, no custom axis.
  Statement paths(db,
                  "SELECT DISTINCT j.fullkey, j.type FROM trials t, json_tree(t.config_json) j "
                  "WHERE j.fullkey <> '$' AND instr(j.fullkey, '[') = 0 "
                  "AND j.fullkey <> '$.custom' AND substr(j.fullkey, 1, 9) <> '$.custom.'");
  while (paths.Step()) {
    const std::string name = PathName(paths.Text(0));
    if (name.empty()) continue;
    AddField(columns, name);
    Hold(columns[name].holds, paths.Text(1));
  }
  std::vector<ComputationColumn> sorted;
  for (auto& [name, column] : columns) sorted.push_back(std::move(column));
  return sorted;
}

}  // namespace ditbench

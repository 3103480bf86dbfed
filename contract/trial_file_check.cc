#include "contract/trial_file_check.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "trial/trial_settings.h"

namespace ditbench {
namespace {

std::string Problem(const std::string& field, const std::string& expected,
                    const nlohmann::json& got) {
  std::string shown = got.dump();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  return fmt::format("'{}': expected {}, got {}", field, expected, shown);
}

using FieldCheck = std::optional<std::string> (*)(const std::string& field,
                                                  const nlohmann::json& value);

// The canonical configuration keys that no setting checks (a sweep writes them elsewhere: its
// top-level `workload` and `command`, custom axes as keys of their own), each with its check.
const std::map<std::string, FieldCheck>& FieldsWithoutSetting() {
  static const std::map<std::string, FieldCheck> checks = {
      {"workload",
       [](const std::string& field, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_string() && ParseWorkload(value.get<std::string>())) return std::nullopt;
         return Problem(field, WorkloadNameList(), value);
       }},
      {"command",
       [](const std::string& field, const nlohmann::json& value) -> std::optional<std::string> {
         if (value.is_array() && std::all_of(value.begin(), value.end(),
                                             [](const auto& v) { return v.is_string(); }))
           return std::nullopt;
         return Problem(field, "a list of strings", value);
       }},
      {"custom",
       [](const std::string& field, const nlohmann::json& value) -> std::optional<std::string> {
         if (!value.is_object()) return Problem(field, "an object of custom axes", value);
         for (const auto& [name, axis] : value.items())
           if (!IsCustomAxisName(name) || !axis.is_primitive() || axis.is_null())
             return Problem(field + "." + name, "a custom axis name with a scalar value", axis);
         return std::nullopt;
       }},
  };
  return checks;
}

}  // namespace

std::optional<std::string> TrialFileProblem(const nlohmann::json& trial) {
  if (!trial.is_object()) return Problem("trial", "a JSON object", trial);
  for (const char* text_field : {"trial_key", "sweep"})
    if (trial.contains(text_field) && !trial[text_field].is_string())
      return Problem(text_field, "a string", trial[text_field]);
  if (trial.contains("device")) {
    const auto& device = trial["device"];
    if (!device.is_string() || (device != "cpu" && device != "cuda"))
      return Problem("device", "cpu or cuda", device);
  }
  if (!trial.contains("config")) return std::nullopt;
  const auto& config = trial["config"];
  if (!config.is_object()) return Problem("config", "a JSON object", config);
  for (const auto& [key, value] : config.items()) {
    const std::string field = "config." + key;
    if (const auto check = FieldsWithoutSetting().find(key);
        check != FieldsWithoutSetting().end()) {
      if (auto problem = check->second(field, value)) return problem;
      continue;
    }
    // 0 is the canonical form of "as many patches as PipeFusion stages".
    if (key == "pipefusion_patches" && value.is_number_integer() && value.get<std::int64_t>() == 0)
      continue;
    const std::string setting = SettingOfCanonicalKey(key);
    if (std::find(TrialKeys().begin(), TrialKeys().end(), setting) == TrialKeys().end())
      return fmt::format("'{}': unknown key", field);
    TrialConfig scratch;
    std::string expected;
    if (!ApplySetting(scratch, setting, value, &expected)) return Problem(field, expected, value);
  }
  return std::nullopt;
}

}  // namespace ditbench

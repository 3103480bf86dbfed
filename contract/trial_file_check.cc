#include "contract/trial_file_check.h"

#include <fmt/format.h>

#include "experiments/trial_settings.h"

namespace ditbench {
namespace {

std::string Problem(const std::string& field, const std::string& expected,
                    const nlohmann::json& got) {
  std::string shown = got.dump();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  return fmt::format("'{}': expected {}, got {}", field, expected, shown);
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
    if (!IsConfigurationKey(key)) return fmt::format("'config.{}': unknown key", key);
    if (key == "custom" && value.is_object()) {  // named axis by axis
      for (const auto& [name, axis] : value.items())
        if (!IsCustomAxisName(name) || !axis.is_primitive() || axis.is_null())
          return Problem("config.custom." + name, "a custom axis name with a scalar value", axis);
    }
    TrialConfig scratch;
    std::string expected;
    if (!ApplyCanonicalField(scratch, key, value, ModelFolders::kCheck, &expected))
      return Problem("config." + key, expected, value);
  }
  return std::nullopt;
}

}  // namespace ditbench

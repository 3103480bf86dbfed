// The labels and commands compare's outputs name a trial or a campaign by
// (analysis/comparison.h): a trial's model, shape and configuration, and the command that runs
// it again.
#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "analysis/row_metrics.h"
#include "base/untrusted_input.h"

namespace ditbench {

std::string ModelIdentity(const ResultRow& row) {
  std::string model = row.model;
  if (row.model_overrides.empty()) return model;
  nlohmann::json overrides = ParseStoredJson(row.model_overrides);
  std::string extra;
  if (overrides.is_object()) {
    for (const auto& [key, value] : overrides.items()) {
      if (key == "preset") continue;
      extra += fmt::format("{}{}:{}", extra.empty() ? "" : ",", key, value.dump());
    }
  }
  return extra.empty() ? model : model + "{" + extra + "}";
}

std::string DegreesLabel(const ResultRow& row) {
  const std::string degrees = DegreesAboveOne(row);
  const std::string custom = AxesLabel(row);
  return (degrees.empty() ? "1 rank" : degrees) + (custom.empty() ? "" : " " + custom);
}

std::string AxesLabel(const ResultRow& row) {
  if (row.axes.empty() || row.axes == "{}") return "";
  return AxesLabel(ParseStoredJson(row.axes));
}

std::string AxesLabel(const nlohmann::json& axes) {
  if (!axes.is_object()) return "";
  std::string label;
  for (const auto& [name, value] : axes.items())
    label += fmt::format("{}{}={}", label.empty() ? "" : " ", name,
                         value.is_string() ? value.get<std::string>() : value.dump());
  return label;
}

std::string ShellWord(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/._-+:@%,=").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + '\'';
}

CampaignRun CampaignRunOf(const CampaignInfo& campaign, const std::string& db) {
  CampaignRun run;
  run.sweep_path = campaign.record.sweep_path;
  run.db = db;
  const nlohmann::json& env = campaign.record.environment;
  if (env.is_object()) {
    if (auto gpus = env.find("gpus"); gpus != env.end() && gpus->is_string()) run.gpus = *gpus;
    if (auto launcher = env.find("launcher"); launcher != env.end() && launcher->is_string())
      run.launcher = *launcher;
  }
  return run;
}

std::string ReproduceCommand(const CampaignRun& run, const std::string& trial_key) {
  std::string command =
      fmt::format("ditbench run {} --only {}", ShellWord(run.sweep_path), trial_key);
  if (!run.db.empty()) command += " --db " + ShellWord(run.db);
  if (!run.gpus.empty() && run.gpus != "auto") command += " --gpus " + ShellWord(run.gpus);
  if (!run.launcher.empty() && run.launcher != "local")
    command += " --launcher " + ShellWord(run.launcher);
  return command;
}

std::string TrialLabel(const ResultRow& row) {
  std::string label = fmt::format("{} {} {} {}", ModelIdentity(row), row.resolution_label(),
                                  row.precision, row.scope);
  if (row.batch > 1) label += fmt::format(" batch={}", row.batch);
  // Steps are shown always: two trials of a sweep over `steps` differ in nothing else.
  if (row.steps > 0) label += fmt::format(" steps={}", row.steps);
  label += " " + ConfigurationLabel(row);
  if (const std::string load = ReportGroupOf(row).load; !load.empty())
    label += " (served at " + load + ")";
  return label;
}

}  // namespace ditbench

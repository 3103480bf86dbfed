#include "experiments/sweep_engine.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/command_line.h"
#include "experiments/engine_request.h"
#include "experiments/trial_fields.h"

namespace ditbench {

std::optional<EngineSectionProblem> ReadEngineSection(
    Workload workload, const std::map<std::string, YAML::Node>& sections, const YAML::Node& root,
    YamlToJson& converter, TrialConfig* defaults) {
  EngineSpec* engine = &defaults->engine;
  const bool runs_engine = TraitsOf(workload).launch == WorkloadLaunch::kEngine;
  const auto section = sections.find("engine");
  if (section == sections.end()) {
    if (!runs_engine) return std::nullopt;
    return EngineSectionProblem{
        root.Mark(),
        "missing required key 'engine' for workload 'engine' (the server: {start: "
        "[argv with {port}], ready: [/health], request: {...}} or {url: ...})"};
  }
  const YAML::Node& node = section->second;
  if (!runs_engine)
    return EngineSectionProblem{node.Mark(), "only a sweep with 'workload: engine' has an engine"};
  nlohmann::json value;
  try {
    value = converter.Convert(node);
  } catch (const std::exception& e) {
    return EngineSectionProblem{node.Mark(), e.what()};
  }
  std::string problem;
  if (!EngineSpecFromJson(value, engine, &problem))
    return EngineSectionProblem{node.Mark(), problem};
  if (auto placeholder = EnginePlaceholderProblem(*engine))
    return EngineSectionProblem{node.Mark(), *placeholder};
  defaults->scope = Scope::kPipeline;
  return std::nullopt;
}

std::optional<std::pair<Setting, std::string>> AttachedAxisProblem(const SweepSpec& spec) {
  const EngineSpec& engine = spec.defaults.engine;
  if (engine.url.empty()) return std::nullopt;
  std::set<std::string> carried;
  for (const auto& [field, value] : engine.request.items()) {
    std::vector<std::string> names;
    std::string ignored;
    if (value.is_string() && ParseCommandTemplate(value.get<std::string>(), &names, &ignored))
      carried.insert(names.begin(), names.end());
  }
  if (carried.contains("size")) carried.insert({"resolution", "height"});
  const auto varies = [&](const Setting& s) {
    const TrialField* field = FieldBySetting(s.key);
    return !carried.contains(s.key) && !(field && field->role == FieldRole::kPolicy);
  };
  std::vector<Setting> settings;
  for (const Axis& axis : spec.matrix)
    if (axis.values.size() > 1) settings.push_back(axis.values.front());
  for (const ZipGroup& group : spec.zip)
    for (const Axis& axis : group.axes)
      if (group.size() > 1) settings.push_back(axis.values.front());
  for (const std::vector<Setting>& point : spec.include)
    settings.insert(settings.end(), point.begin(), point.end());
  for (const Setting& s : settings)
    if (varies(s))
      return std::pair{
          s, fmt::format(
                 "engine.url attaches to a server you started, whose '{}' ditbench cannot "
                 "change; vary only what the request names ({}) or how a trial is "
                 "measured (repeats, warmup, timeout), or give engine.start",
                 s.key, carried.empty() ? "nothing" : fmt::format("{}", fmt::join(carried, ", ")))};
  return std::nullopt;
}

}  // namespace ditbench

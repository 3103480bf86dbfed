#include "experiments/sweep_engine.h"

#include <fmt/format.h>

#include "experiments/engine_request.h"

namespace ditbench {

std::optional<EngineSectionProblem> ReadEngineSection(
    Workload workload, const std::map<std::string, YAML::Node>& sections, const YAML::Node& root,
    YamlToJson& converter, EngineSpec* engine) {
  const bool runs_engine = TraitsOf(workload).launch == WorkloadLaunch::kEngine;
  const auto section = sections.find("engine");
  if (section == sections.end()) {
    if (!runs_engine) return std::nullopt;
    return EngineSectionProblem{
        root.Mark(), "missing required key 'engine' for workload 'engine' (the server: {start: "
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
  return std::nullopt;
}

}  // namespace ditbench

// A sweep's `engine:` section (experiments/engine_spec.h), read for the sweep parser
// (experiments/sweep_spec.cc): required with `workload: engine`, refused with any other.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "experiments/engine_spec.h"
#include "experiments/trial_settings.h"
#include "experiments/workload.h"

namespace ditbench {

struct EngineSectionProblem {
  YAML::Mark mark;
  std::string message;
};

// Reads sections["engine"] into `*engine` (every trial's, through the sweep's defaults), its
// templates' placeholders checked; the problem where it is, or nullopt.
std::optional<EngineSectionProblem> ReadEngineSection(
    Workload workload, const std::map<std::string, YAML::Node>& sections, const YAML::Node& root,
    YamlToJson& converter, EngineSpec* engine);

}  // namespace ditbench

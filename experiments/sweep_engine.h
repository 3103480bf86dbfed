// A sweep's `engine:` section (experiments/engine_spec.h), read for the sweep parser
// (experiments/sweep_spec.cc): required with `workload: engine`, refused with any other.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "experiments/engine_spec.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial_settings.h"
#include "experiments/workload.h"

namespace ditbench {

struct EngineSectionProblem {
  YAML::Mark mark;
  std::string message;
};

// Reads sections["engine"] into `defaults->engine` (every trial's), its templates'
// placeholders checked, and makes `scope: pipeline` the default (an engine answers with the
// decoded image); the problem where it is, or nullopt.
std::optional<EngineSectionProblem> ReadEngineSection(
    Workload workload, const std::map<std::string, YAML::Node>& sections, const YAML::Node& root,
    YamlToJson& converter, TrialConfig* defaults);

// With `url:` the server is the user's, already running with its own layout and precision:
// across the trials only what the request carries (the fields its templates name; {size} is
// the resolution and height) and how a trial is measured (repeats, warmup, timeout, ...) may
// differ. The first matrix or zip axis (or include point) that varies anything else, and why;
// nullopt for a sweep that starts its server or varies nothing else.
std::optional<std::pair<Setting, std::string>> AttachedAxisProblem(const SweepSpec& spec);

}  // namespace ditbench

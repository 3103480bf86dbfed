// The keys a sweep may set on a trial, how each value is checked, and the small parsing helpers
// the sweep language shares (durations, "did you mean", YAML to JSON).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/did_you_mean.h"
#include "experiments/trial.h"

namespace YAML {
class Node;
}

namespace ditbench {

// The keys a trial may set (in `defaults`, `matrix`, `zip`, `include`, `exclude`), sorted.
const std::vector<std::string>& TrialKeys();

// Sets `key` of `config` from `value`. On a bad value returns false and puts what was
// expected into `*expected`. Unknown keys also return false, except for a workload launched as
// a program (WorkloadLaunch::kProgram, the `command` workload), where a key that is a custom
// axis name takes any scalar value into config.custom.
bool ApplySetting(TrialConfig& config, const std::string& key, const nlohmann::json& value,
                  std::string* expected);

// Whether reading a configuration opens its model's weights folders to check them against the
// preset (a sweep, a rank's trial.json) or takes them as written (a stored configuration,
// whose folders may since have moved).
enum class ModelFolders { kCheck, kTrust };

// Sets the field `key` of CanonicalJson (experiments/trial.h) from `value`: through the setting
// that writes it (ApplySetting's table and checks; "timeout_s" is the setting "timeout"), or for
// the fields no setting writes (workload, command, custom, profile,
// quality) with their own check. False, with
// what was expected in `*expected`, on a bad value or a key CanonicalJson never writes.
// TrialConfigFromJson and the worker's trial.json check both read configurations through it.
bool ApplyCanonicalField(TrialConfig& config, const std::string& key, const nlohmann::json& value,
                         ModelFolders folders, std::string* expected);

// Whether `key` is a field CanonicalJson writes (a setting's canonical key, workload, command,
// custom).
bool IsConfigurationKey(const std::string& key);

// A name a custom axis may have: a letter or '_', then letters, digits or '_' (at most 64),
// and not a built-in trial key (save `attention`, a program's own axis) nor a reserved name
// (IsReservedName).
bool IsCustomAxisName(const std::string& name);

// Names that are neither built-in keys nor custom axes: the sweep's own keys and the derived
// trial fields placeholders may use (world_size, trial_key, ...).
bool IsReservedName(const std::string& name);

// The key of CanonicalJson that a setting writes ("timeout" -> "timeout_s").
std::string CanonicalKeyOf(const std::string& setting_key);
// The setting that writes canonical key `canonical_key` ("timeout_s" -> "timeout"): the
// inverse of CanonicalKeyOf, read from the same table.
std::string SettingOfCanonicalKey(const std::string& canonical_key);

// Seconds in a duration: a number of seconds, or a number with unit s, m or h ("90s", "2h").
bool ParseDuration(const nlohmann::json& value, double* seconds);

// Converts YAML nodes to JSON: scalars become integers, floats, booleans or strings (quoted
// scalars stay strings). Aliases are expanded, so the converter counts every node it visits and
// throws std::length_error past `max_nodes` (an alias bomb), and std::invalid_argument past a
// nesting depth of 64.
class YamlToJson {
 public:
  explicit YamlToJson(std::size_t max_nodes = 1'000'000) : budget_(max_nodes) {}
  nlohmann::json Convert(const YAML::Node& node);

 private:
  nlohmann::json Convert(const YAML::Node& node, int depth);
  std::size_t budget_;
};

}  // namespace ditbench

// The values a trial's settings take, each read and checked as a sweep writes it: the rows of
// the field table (experiments/trial_fields.h) call these.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// An integer from lo to hi into *out; false (out untouched) otherwise.
bool AsInt(const nlohmann::json& v, int lo, int hi, int* out);
// A number from lo to hi into *out; false otherwise.
bool AsNumber(const nlohmann::json& v, double lo, double hi, double* out);

// The model value in either form, parsed without resolving it: a preset name, or
// {preset, <dimension>: N..., weights, vae_weights, weights_variant} with folders absolute.
bool ParseModelValue(const nlohmann::json& v, std::string* name,
                     std::map<std::string, int>* overrides,
                     std::map<std::string, std::string>* folders, std::string* expected);
// Sets the model fields of `c` from ParseModelValue's parts.
void AssignModel(TrialConfig& c, std::string name, std::map<std::string, int> overrides,
                 std::map<std::string, std::string> folders);

// The setters of the structured fields, each: false with what was expected on a bad value.
// `model`: resolved against its preset, weights folders checked against it.
bool SetModel(TrialConfig& c, const nlohmann::json& v, std::string* expected);
// `resolution`: a number (a square) or "WIDTHxHEIGHT".
bool SetResolution(TrialConfig& c, const nlohmann::json& v, std::string* expected);
// `schedule`: {high_precision_first, high_precision_last}.
bool SetSchedule(TrialConfig& c, const nlohmann::json& v, std::string* expected);
// `cache`: none, or {kind, threshold, warmup_steps}.
bool SetCache(TrialConfig& c, const nlohmann::json& v, std::string* expected);
// `quant_exclude`: module-path patterns.
bool SetQuantExclude(TrialConfig& c, const nlohmann::json& v, std::string* expected);
// `repeats`: a count, or {min, max, target_rel_ci, max_seconds}.
bool SetRepeats(TrialConfig& c, const nlohmann::json& v, std::string* expected);

}  // namespace ditbench

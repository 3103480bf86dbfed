// Trial identity, key format v2 (docs/sweep-spec.md, "Trial identity").
//
// A trial's configuration has two parts:
//  * what it computes: workload and command, custom axes, model and its overrides, resolution,
//  precision, scope,
//    batch, steps, seed, the parallel degrees and the PipeFusion settings. The trial key is a
//    hash of this part only, so the same computation has the same key on any machine and
//    across builds (resume, and `compare` matching campaigns by key, rely on it);
//  * how it is measured: warmup, repeats, timeout, profile_blocks, profile and quality. Stored
//    beside the key
//    (trials.policy_json); changing it never changes the key.
//
// The identity text is the computation as compact JSON with sorted keys, leaving out every
// field whose value equals its identity default (IdentityDefault below). The defaults are
// frozen: a field, once listed, keeps its default forever. A field added later is listed with
// the value that reproduces today's behaviour, so a trial that leaves it at that value keeps
// its key; only a non-default value changes the key.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_append.h"
#include "experiments/trial.h"

namespace ditbench {

// Every computation field, defaults written (trials.config_json). Keys sorted; `model` is the
// preset name, or {"preset": NAME, <dimension>: N} when dimensions are overridden;
// `pipefusion_patches` is the effective number; `command` and `custom` (a command workload's
// program and custom axes) appear only when set.
nlohmann::json ComputationJson(const TrialConfig& config);

// The measurement policy: {"profile_blocks", "repeats" {max, max_seconds, min, target_rel_ci},
// "timeout_s", "warmup"} and, only when set, "profile": "trace" and "quality": {gates}
// (trials.policy_json).
nlohmann::json PolicyJson(const TrialConfig& config);
// PolicyJson's fields written into the object `into` (CanonicalJson adds them to the
// computation so, rather than copying them over from a second object).
void AddPolicyJson(const TrialConfig& config, nlohmann::json& into);

// The identity default of computation field `field` given the whole computation (a default may
// depend on another field: pipefusion_patches defaults to pipefusion). nullopt: the field has
// no default and is always written (an unknown field, e.g. one from a newer build).
std::optional<nlohmann::json> IdentityDefault(const std::string& field,
                                              const nlohmann::json& computation);

// `computation` without the fields equal to their identity defaults.
nlohmann::json IdentityJson(const nlohmann::json& computation);

// The fields of IdentityJson(computation), in order, without building it: `visit(field, value)`
// for each field that differs from its identity default (a served trace's value without its
// path). `skip` (may be empty) is asked first: a field it names is passed over before its
// default is looked up, so that a caller after a few fields (a settings label) pays for those.
using IdentityFieldSkip = std::function<bool(const std::string& field)>;
using IdentityFieldVisit =
    std::function<void(const std::string& field, const nlohmann::json& value)>;
void ForEachIdentityField(const nlohmann::json& computation, const IdentityFieldSkip& skip,
                          const IdentityFieldVisit& visit);

// CanonicalJson(config).dump(indent) as it reads `depth` spaces in (JsonAppender::Indented),
// written field by field from the field table without building the object: a plan of 100,000
// trials writes one for each.
void AppendCanonicalJson(const TrialConfig& config, JsonAppender& json, std::string& out,
                         unsigned indent, unsigned depth);

// IdentityJson(ComputationJson(config)), dumped compact with sorted keys.
std::string IdentityText(const TrialConfig& config);

// First 16 hex digits of SHA-256 of the identity text of `computation` (any JSON object of
// computation fields, defaults written or not). TrialKey(config) is KeyOfComputation of
// ComputationJson(config).
std::string KeyOfComputation(const nlohmann::json& computation);

}  // namespace ditbench

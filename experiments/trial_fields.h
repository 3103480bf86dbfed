// The table of a trial's fields: one row for every field a configuration has, like the degree
// table (model_zoo/shapes/parallel_degrees.h) for the degrees. Each row says
//  * the key a sweep sets it by and the key CanonicalJson stores it under;
//  * how a value is read and checked (one setter, whose "expected" text is made from the same
//    names the parser accepts);
//  * how it is written into the canonical JSON, and its frozen identity default (key format v2,
//    experiments/trial_identity.h);
//  * its role: what it is when one trial is judged against another (below).
// The setters (ApplySetting, ApplyCanonicalField), TrialKeys, ComputationJson and PolicyJson, the
// identity defaults, the reference trial (ReferenceConfig: output error, the planner's "no
// reference" warning, and the analysis's 1-rank baselines through FieldsWithRole) and the
// "X with Y is not built" rules (experiments/validity.cc) all walk this table. A field of
// TrialConfig left out of it fails tests/experiments/trial_fields_test.cc at compile time.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// What a field is to the trial a result is judged against (the reference trial: the same
// computation on one rank, without approximations).
enum class FieldRole {
  kPlain,         // what the trial computes (model, shape, steps, seed, ...): kept
  kDegree,        // a parallel degree: 1 in the reference
  kSplitsWork,    // how the ranks split work (PipeFusion's patches, the split decode): reset
  kApproximates,  // trades output for time (attention kernel, FP8, schedule): reset
  kSkipsWork,     // skips computation (the step cache): reset; speedups name the uncached trial
  kPolicy,        // how the trial is measured (warmup, repeats, ...): never in the key
};
std::string_view FieldRoleName(FieldRole role);
// Whether the reference trial resets a field of this role to its default.
bool ResetInReference(FieldRole role);

using FieldSetter =
    std::function<bool(TrialConfig&, const nlohmann::json& value, std::string* expected)>;

struct TrialField {
  std::string key;      // CanonicalJson's key ("timeout_s")
  std::string setting;  // the sweep's key ("timeout"); empty: no sweep key sets it (workload...)
  FieldRole role = FieldRole::kPlain;
  // Key format v2's frozen default: a field at it is left out of the identity. nullopt: none
  // (a policy field). Once listed a default never changes (trial_identity.h).
  std::optional<nlohmann::json> identity_default;
  // The field whose value is this one's identity default instead (pipefusion_patches: one
  // patch per PipeFusion stage, "pipefusion"); empty: identity_default is.
  std::string identity_default_field{};
  FieldSetter set;
  // The field's canonical value, or nullopt when the configuration leaves it out (a field
  // added after key format v2 is written only when it is set).
  std::function<std::optional<nlohmann::json>(const TrialConfig&)> value;
  // Sets the field back to a default TrialConfig's value (what ReferenceConfig does to every
  // field whose role ResetInReference).
  std::function<void(TrialConfig&)> reset;
  // Whether `config` sets the field away from its default: what "X with Y" rules ask.
  std::function<bool(const TrialConfig&)> is_set;
  // The value as a label shows it ("fbcache", "flash", "ulysses=2" is the degree's).
  std::function<std::string(const TrialConfig&)> text;
};

// Every field, sorted by canonical key.
const std::vector<TrialField>& TrialFields();
// The row whose sweep key is `setting`, or whose canonical key is `key`; nullptr if none.
const TrialField* FieldBySetting(std::string_view setting);
const TrialField* FieldByKey(std::string_view key);
// The canonical keys of the fields with one of `roles` (for the analysis, which reads stored
// computations as JSON).
std::vector<std::string> FieldsWithRole(std::initializer_list<FieldRole> roles);

// The trial `config` is judged against: every field whose role ResetInReference at its
// default, so the same computation on one rank, every layer in the trial's precision, SDPA's
// own kernel, every step computed. Its key is what output error compares against and what
// `plan` warns about when the sweep lacks it.
TrialConfig ReferenceConfig(const TrialConfig& config);

// "one of a, b, c": what an enum field expects, from the names its parser accepts.
std::string OneOf(const std::vector<std::string_view>& names);

// A rule "X with Y is not built": the pair of fields that, both set (TrialField::is_set), make
// a trial this build cannot run, and why. Checked for every trial by validity.
struct NotBuiltPair {
  std::string_view a, b;
  std::string_view why;
};
const std::vector<NotBuiltPair>& NotBuiltPairs();
// "cache: fbcache with pipefusion=2 is not built: <why>" for the first pair `config` sets both
// fields of, or nullopt.
std::optional<std::string> NotBuiltProblem(const TrialConfig& config);

}  // namespace ditbench

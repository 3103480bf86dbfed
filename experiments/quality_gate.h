// Quality gates: the output a trial must match for its speed to count (docs/sweep-spec.md,
// "Quality gates"). A sweep's top-level `quality: {max_output_error: 1e-3, min_psnr: 35}`
// (also `min_ssim`) is measurement policy, outside every trial key, carried with each trial
// (trials.policy_json) so that its verdict can be reached whenever the trial's output error
// and PSNR arrive: they need the 1-rank reference trial, which may finish first or last
// (runner/output_error.h).
//
// A trial that misses a gate is recorded with its numbers and marked below quality; `query`,
// `compare`, `advise` and the report's winner summary read the verdict (never the gate again).
// Pure and torch-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ditbench {

struct QualityGate {
  std::optional<double> max_output_error;  // rel. L2 against the 1-rank trial, at most
  std::optional<double> min_psnr;          // dB, at least (scope pipeline: the decoded image)
  std::optional<double> min_ssim;          // at least, in (0, 1] (scope pipeline)
  // An engine trial (workload: engine) sends its request again after each of this many
  // restarts of its server and compares each image with its own: the restart band
  // (`restart_psnr`, the least PSNR a restart alone gives), against which a PSNR gate is judged.
  // Not a gate itself.
  std::optional<int> restarts;
  // The trial whose output this one is compared with, by its key (16 hexadecimal characters,
  // as `query` shows trial_key), instead of the 1-rank trial of its own computation: another
  // engine, another sweep's layout, ditbench's own model at the same shape. It may be in
  // another campaign of the same database; its newest ok run is used. Not a gate itself.
  std::optional<std::string> reference;

  // No gate (`restarts` and `reference` alone judge nothing).
  bool empty() const { return !max_output_error && !min_psnr && !min_ssim; }
  bool operator==(const QualityGate&) const = default;
};

// The gate's names, in the order a verdict lists them.
inline constexpr const char* kQualityGateKeys[] = {"max_output_error", "min_psnr", "min_ssim",
                                                   "restarts", "reference"};
inline constexpr int kMaxQualityRestarts = 20;

// What one gate value must be, for the sweep parser's messages ("expected ...").
std::string QualityGateExpected(std::string_view key);

// Sets gate `key` from `value`. False, with what was expected in `*expected`, for an unknown
// key or a value out of range (max_output_error > 0, min_psnr > 0, 0 < min_ssim <= 1).
bool SetQualityGate(QualityGate& gate, const std::string& key, const nlohmann::json& value,
                    std::string* expected);

// {"max_output_error": 0.001, "min_psnr": 35} with only the gates set: the policy's "quality".
nlohmann::json QualityGateJson(const QualityGate& gate);
// Inverse of QualityGateJson, with SetQualityGate's checks. False (and `*expected` set) for
// anything but an object of known gates.
bool QualityGateFromJson(const nlohmann::json& value, QualityGate* gate, std::string* expected);

// What a trial's output measured against its reference (unset: not known).
struct OutputQuality {
  std::optional<double> output_error, psnr, ssim;
};

// The verdict stored with a trial (trial_metrics.quality, the results view's `quality`):
//  * "ok" when every gate that applies holds;
//  * "below: psnr 30.1 < 35" (every missed gate, comma-separated, in kQualityGateKeys order)
//    when one is missed;
//  * "unresolved: min_psnr 60 > restart band 41.2 dB" when a PSNR gate asks for more than a
//    restart of the same server gives (`restart_psnr`: the least PSNR between the trial's own
//    image and the same request's after a restart; unset when not measured, or when every
//    restart gave the same image): the measurement cannot tell
//    such a trial from a restart of its own, so it is neither ok nor below;
//  * nullopt when no gate applies (an empty gate; PSNR and SSIM gates on a trial without a
//    decoded image) or a value a gate needs is not known (yet: the reference has not finished,
//    or it could not be compared). The PSNR and SSIM gates apply to decoded images only
//    (`decoded_image`: scope pipeline); an infinite PSNR (an image equal to the reference's)
//    passes any minimum.
std::optional<std::string> QualityVerdict(const QualityGate& gate, bool decoded_image,
                                          const OutputQuality& measured,
                                          std::optional<double> restart_psnr = std::nullopt);

// Whether a stored verdict says the trial missed a gate ("below: ...").
bool IsBelowQuality(std::string_view verdict);
inline constexpr std::string_view kBelowQualityPrefix = "below";
inline constexpr std::string_view kUnresolvedQualityPrefix = "unresolved";
// What a "below: ..." verdict says was missed ("psnr 30.1 < 35"); the verdict itself otherwise.
std::string_view MissedGates(std::string_view verdict);

}  // namespace ditbench

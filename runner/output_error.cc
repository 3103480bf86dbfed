#include "runner/output_error.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "contract/worker_contract.h"
#include "experiments/trial_fields.h"
#include "metrics/image_quality.h"
#include "storage/output_error_store.h"

namespace ditbench {
namespace {

// The error of the trial in `run_dir` against the reference output, or why there is none;
// for a decoded image (scope pipeline) also its PSNR and SSIM.
void Compare(OutputErrorStore& db, const AwaitingReference& trial, const NpyArray& reference,
             const std::string& reference_key, bool decoded_image) {
  try {
    const NpyArray output = ReadNpy(std::filesystem::path(trial.run_dir) / kOutputFileName);
    OutputQuality measured;
    measured.output_error = RelativeL2(output, reference);
    db.SetOutputError(trial.trial_id, measured.output_error, "against " + reference_key);
    if (decoded_image) {
      measured.psnr = Psnr(output, reference, kDecodedImageRange);
      measured.ssim = Ssim(output, reference, kDecodedImageRange);
      db.SetOutputQuality(trial.trial_id, measured.psnr, measured.ssim);
    }
    // The gates are judged here, where the numbers they need arrive, whichever of the trial
    // and its reference finished last.
    db.SetQualityVerdict(
        trial.trial_id, QualityVerdict(trial.quality, decoded_image, measured, trial.restart_psnr));
  } catch (const std::exception& e) {
    db.SetOutputError(trial.trial_id, std::nullopt, e.what());
    db.SetQualityVerdict(trial.trial_id, std::nullopt);
  }
}

}  // namespace

double RelativeL2(const NpyArray& output, const NpyArray& reference) {
  if (output.shape != reference.shape)
    throw std::invalid_argument("output and reference have different shapes");
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < reference.data.size(); ++i) {
    const double d = double(output.data[i]) - reference.data[i];
    diff += d * d;
    norm += double(reference.data[i]) * reference.data[i];
  }
  if (norm == 0) throw std::invalid_argument("the reference output is all zeros");
  return std::sqrt(diff / norm);
}

void AttachOutputReference(TrialRecord& record, const TrialConfig& config) {
  if (!record.metrics) return;
  const std::string reference =
      config.quality.reference.value_or(TrialKey(ReferenceConfig(config)));
  record.metrics->output_reference_key = reference;
  if (config.quality.reference) {
    record.metrics->output_error_note =
        reference == record.trial_key
            ? "quality.reference names this trial itself; nothing to compare"
            : "no ok trial " + reference + " (quality.reference) recorded yet";
    if (reference == record.trial_key) record.metrics->output_reference_key.clear();
    return;
  }
  if (reference == record.trial_key) {
    record.metrics->output_error = 0.0;
    record.metrics->output_error_note = "the 1-rank reference itself";
    // Its output is the reference: error 0, the same image (infinite PSNR, SSIM 1).
    record.metrics->quality =
        QualityVerdict(config.quality, config.scope == Scope::kPipeline,
                       {0.0, std::numeric_limits<double>::infinity(), 1.0});
  } else {
    record.metrics->output_error_note = "no ok 1-rank trial " + reference + " recorded yet";
  }
}

void UpdateOutputErrors(OutputErrorStore& db, const TrialRecord& record) {
  if (!record.metrics || record.status != TrialStatus::kOk) return;
  // Keys whose trials may now have what they wait for: this trial's reference, and this
  // trial itself as somebody's reference.
  for (const std::string& reference_key : {record.metrics->output_reference_key, record.trial_key}) {
    if (reference_key.empty()) continue;
    std::vector<AwaitingReference> waiting = db.TrialsAwaitingReference(reference_key);
    if (waiting.empty()) continue;
    auto run_dir = db.NewestOkRunDir(reference_key);
    if (!run_dir) continue;
    NpyArray reference;
    try {
      reference = ReadNpy(std::filesystem::path(*run_dir) / kOutputFileName);
    } catch (const std::exception& e) {
      for (const auto& trial : waiting)
        db.SetOutputError(trial.trial_id, std::nullopt, fmt::format("reference: {}", e.what()));
      continue;
    }
    // A trial and its reference share their scope.
    const bool decoded_image = record.config.scope == Scope::kPipeline;
    for (const auto& trial : waiting)
      Compare(db, trial, reference, reference_key, decoded_image);
  }
}

}  // namespace ditbench

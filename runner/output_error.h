// Output error as data: how far a parallel trial's final output is from the 1-rank trial of
// the same computation (same model, overrides, resolution, precision, scope, steps, batch and
// seed; every parallel degree 1). Exact strategies show float-order noise (about 1e-6 in fp32);
// PipeFusion shows what its stale activations cost.
//
// World rank 0 of every `dit` trial writes its final output as float32 .npy (`output.npy` in
// the run folder). The coordinator computes the relative L2 error ||out - ref|| / ||ref||
// as soon as both exist, in whichever order the two trials finish, and stores it with the
// trial (`output_error`; `output_error_note` says why it is null). For scope `pipeline` the
// output is the decoded image: its PSNR and SSIM against the reference's are stored beside
// (`psnr`, `ssim`; metrics/image_quality.h), on the VAE's range [-1, 1]. Where these numbers
// arrive, the trial's quality gates (`quality: {...}`, experiments/quality_gate.h) are judged and
// the verdict stored with them (`quality`). Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "contract/npy.h"
#include "experiments/trial.h"
#include "metrics/image_quality.h"
#include "storage/records.h"

namespace ditbench {

class OutputErrorStore;

// The range of a decoded image as output.npy holds it (the VAE decoder's output, unclamped).
inline constexpr ImageRange kDecodedImageRange = ImageRange::kMinusOneToOne;

// ||output - reference|| / ||reference||. Throws std::invalid_argument on a shape mismatch or
// an all-zero reference.
double RelativeL2(const NpyArray& output, const NpyArray& reference);

// Before an ok trial is recorded: names its reference in the metrics (output_reference_key),
// and marks a trial that is its own reference with error 0 (and its gates' verdict).
void AttachOutputReference(TrialRecord& record, const TrialConfig& config);

// After an ok trial is recorded: fills the output error of every ok trial whose reference is
// now available (this trial, and the trials that were waiting for it as their reference),
// with PSNR, SSIM and the verdict of each one's quality gates.
void UpdateOutputErrors(OutputErrorStore& db, const TrialRecord& record);

}  // namespace ditbench

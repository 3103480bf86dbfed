// Which trials can run, decided once and shared by the planner, the coordinator and the worker.
// A trial that fails a rule is stored as `skipped` with the reason and never launched.
#pragma once

#include <optional>
#include <string>

#include "experiments/trial.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// What the trial will run on.
struct Capacity {
  int slots = 1;  // GPUs, or CPU ranks when running on CPU
  bool on_gpu = false;
};

// Whether a trial can run, in two parts.
struct TrialVerdict {
  // Broken by the rules of the model and the machine, on any build:
  //  * the model resolves (known preset, consistent overrides);
  //  * frames only for video models, which need them as vae_temporal x k + 1;
  //  * width and height multiples of VAE downsample x patch;
  //  * heads divisible by ulysses; image (video) tokens and, for images, latent height (in
  //    patch rows) divisible by the sequence-parallel degree ring * ulysses;
  //  * pipefusion <= transformer blocks; pipefusion_patches >= pipefusion, dividing the patch
  //    rows, each patch's rows dividing by ring * ulysses;
  //  * cfg 2 only for models that batch a negative prompt;
  //  * world size within the GPUs or CPU slots;
  //  * a serving trial: each shape its requests ask for (a mix's or a trace's) by these
  //    rules, as the trial that times it alone (ShapeTrial), and a trace that reads.
  std::optional<std::string> invalid;
  // Valid, but this build cannot run it (a model family without a LibTorch module, PipeFusion
  // over video, tf32 on CPU). `plan` still estimates such trials.
  std::optional<std::string> unsupported;
};

// The trial's own rules, then its kind's (experiments/trial_kind.h). `requests`: a served
// trial's materialized requests (the worker's trial file), or null to compute them from the
// configuration, as the planner and the coordinator do before any trial file exists.
TrialVerdict Judge(const TrialConfig& config, const Capacity& capacity,
                   const RequestList* requests = nullptr);

// Why `config` will not run here (invalid first, then unsupported), or nullopt.
std::optional<std::string> InvalidReason(const TrialConfig& config, const Capacity& capacity,
                                         const RequestList* requests = nullptr);

}  // namespace ditbench

// Which trials can run, decided once and shared by the planner, the coordinator and the worker.
// A trial that fails a rule is stored as `skipped` with the reason and never launched.
#pragma once

#include <optional>
#include <string>

#include "experiments/trial.h"
#include "model_zoo/model_config.h"

namespace ditbench {

// What the trial will run on.
struct Capacity {
  int slots = 1;        // GPUs, or CPU ranks when running on CPU
  bool on_gpu = false;
};

// The reason `config` cannot run, or nullopt when it can. Rules, in order:
//  * the model is a known preset;
//  * heads divisible by ulysses; image tokens divisible by ring * ulysses; latent height
//    (in patch rows) divisible by the sequence-parallel degree ring * ulysses;
//  * pipefusion <= depth; cfg 2 only for models that batch a negative prompt;
//  * strategies and scopes this build implements (ring, pipefusion and the VAE are not yet);
//  * world size fits the capacity.
std::optional<std::string> InvalidReason(const TrialConfig& config, const Capacity& capacity);

}  // namespace ditbench

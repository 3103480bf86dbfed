// `where` constraints: boolean expressions over a trial's numeric axes, evaluated by muparser.
//
// Variables: resolution (the width), width, height, frames (0 for an image), batch, steps,
// warmup, seed, each parallel degree by its name (model_zoo/shapes/parallel_degrees.h),
// pipefusion_patches, world_size, sp (= ring * ulysses), gpus (GPUs or CPU slots available), and
// from the resolved model: heads, depth, hidden, tokens (image tokens; a clip's frames x rows x
// columns), latent (latent rows). String axes compare against named
// constants: precision with fp32, tf32, bf16, fp16; scope with forward, denoise, pipeline
// ("precision == bf16").
// Operators: + - * / ^ % (modulo), comparisons, && ||, ?:, and functions such as min, max.
// A lone `=` (muparser's assignment) is refused: equality is `==`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "experiments/sweep_spec.h"

namespace ditbench {

// Whether `expression` compiles and evaluates with every variable defined. On failure, the
// problem and the 0-based character position in the expression.
bool CheckConstraint(const std::string& expression, std::string* problem, int* position);

// Compiled constraints, evaluated per trial. Not thread-safe (shares one variable block).
class ConstraintSet {
 public:
  // REQUIRES: every expression passed CheckConstraint.
  explicit ConstraintSet(const std::vector<Constraint>& constraints);
  ~ConstraintSet();
  ConstraintSet(const ConstraintSet&) = delete;
  ConstraintSet& operator=(const ConstraintSet&) = delete;

  // Index of the first constraint `config` fails with `gpus` available, or -1 when all hold.
  int FirstFailing(const TrialConfig& config, int gpus);

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace ditbench

// First-Block-Cache over a DitModel's forward (`cache: {kind: fbcache, ...}`,
// experiments/trial.h StepCache): block 0 always runs; when the relative L1 change of its
// residual (its output less its input, over the image tokens) against the last computed step's
// is below the threshold, the other blocks' cached residual is added instead of running them.
//
// Under sequence and CFG parallelism every rank holds its own shard or rows: each sums its
// |r - r_prev| and |r_prev|, the sums are added over every rank of the trial (one all-reduce),
// and the decision is then voted (a max all-reduce: compute when any rank would), so all ranks
// run the same blocks in the same steps whatever their own statistic; the cached residuals are
// each rank's own shard, never gathered. PipeFusion (stages hold different blocks) is refused
// before launch (experiments/validity.cc).
#pragma once

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"

namespace ditbench {

class FirstBlockCache {
 public:
  // `steps`: the denoising steps of one iteration; `group`: every rank of the trial.
  FirstBlockCache(double threshold, int warmup_steps, int steps, RankSubgroup group);

  // The forward of denoising step `step` (0 starts an iteration: nothing cached yet).
  torch::Tensor Forward(DitModel& model, const torch::Tensor& latent, const torch::Tensor& time,
                        const Conditioning& conditioning, const ParallelContext& parallel,
                        const DitModel::BlockHook& block_hook, int step);

  // Whether the last Forward reused the cached blocks, and the change it decided on (summed
  // over the ranks; -1 when it did not look: a warm-up step, the last step, nothing cached).
  bool reused() const { return reused_; }
  // Forwards run and reused since construction (every iteration, warm-up included).
  int forwards() const { return forwards_; }
  int reuses() const { return reuses_; }
  double change() const { return change_; }

  // What a rank's own statistic is replaced by, for tests of the ranks' agreement: given this
  // rank's |r - r_prev| and |r_prev| sums, returns the pair it reports. Production: none.
  using StatisticHook = std::function<std::pair<double, double>(double, double)>;
  void set_statistic_hook(StatisticHook hook) { statistic_hook_ = std::move(hook); }

 private:
  // Whether to compute the other blocks at `step`, agreed by every rank of the group.
  bool Compute(int step, const torch::Tensor& residual);

  double threshold_;
  int warmup_steps_, steps_;
  RankSubgroup group_;
  torch::Tensor previous_residual_;       // block 0's residual at the last computed step
  torch::Tensor rest_image_, rest_text_;  // the other blocks' residuals at that step
  bool reused_ = false;
  int forwards_ = 0, reuses_ = 0;
  double change_ = -1;
  StatisticHook statistic_hook_;
};

}  // namespace ditbench

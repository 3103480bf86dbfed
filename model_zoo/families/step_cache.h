// Step caches over a DitModel's forward (`cache: {kind: fbcache | teacache, ...}`,
// experiments/trial.h StepCache): a denoising step whose input barely changed since the last
// computed step adds that step's cached residual instead of running the transformer blocks.
//
//   FirstBlockCache: block 0 always runs; when the relative L1 change of its residual (its
//     output less its input) against the last computed step's is below the threshold, the
//     other blocks' cached residual is added instead of running them.
//   TeaCache: no block runs to decide. The relative L1 change of the family's
//     timestep-modulated input (DitModel::TeaCacheInput) is rescaled by the model's published
//     polynomial and accumulated over the steps skipped since the last computed one; while the
//     sum stays below the threshold the whole blocks' cached residual is added.
//
// Both: the steps before warmup_steps, the last step and every step of threshold 0 compute
// (threshold 0 is the uncached computation). Under sequence and CFG parallelism every rank
// holds its own shard or rows: each sums |x - x_prev| and |x_prev| over its part, the sums are
// added over every rank of the trial (one all-reduce), and the decision is then voted (a max
// all-reduce: compute when any rank would), so all ranks run the same blocks in the same steps
// whatever their own statistic; the cached residuals are each rank's own shard, never
// gathered. PipeFusion (stages hold different blocks) is refused before launch
// (experiments/validity.cc).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "model_zoo/families/dit_model.h"

namespace ditbench {

class StepCacheForward {
 public:
  virtual ~StepCacheForward() = default;

  // The forward of denoising step `step` (0 starts an iteration: nothing cached yet).
  virtual torch::Tensor Forward(DitModel& model, const torch::Tensor& latent,
                                const torch::Tensor& time, const Conditioning& conditioning,
                                const ParallelContext& parallel,
                                const DitModel::BlockHook& block_hook, int step) = 0;

  // Whether the last Forward reused the cached blocks, and the change it decided on (summed
  // over the ranks; TeaCache: the accumulated rescaled change; -1 when it did not look: a
  // warm-up step, the last step, nothing cached).
  bool reused() const { return reused_; }
  double change() const { return change_; }
  // Forwards run and reused since construction (every iteration, warm-up included).
  int forwards() const { return forwards_; }
  int reuses() const { return reuses_; }

  // What a rank's own statistic is replaced by, for tests of the ranks' agreement: given this
  // rank's |x - x_prev| and |x_prev| sums, returns the pair it reports. Production: none.
  using StatisticHook = std::function<std::pair<double, double>(double, double)>;
  void set_statistic_hook(StatisticHook hook) { statistic_hook_ = std::move(hook); }

 protected:
  // `steps`: the denoising steps of one iteration; `group`: every rank of the trial.
  StepCacheForward(double threshold, int warmup_steps, int steps, RankSubgroup group);

  // Whether `step` computes whatever the statistic: a warm-up step, the last step, threshold 0.
  bool AlwaysComputed(int step) const;
  // sum |current - previous| / sum |previous| over every rank of the group (in fp32; this
  // rank's sums through the statistic hook), or -1 when the previous sums to 0.
  double GroupRelativeL1(const torch::Tensor& current, const torch::Tensor& previous);
  // `compute` voted over the group: true when any rank computes. Counts the forward.
  bool Agree(bool compute, const torch::Tensor& like);

  // Runs blocks [first, num_blocks) on `state`, with the hook around each.
  static void RunBlocks(DitModel& model, DitState& state, const ParallelContext& parallel,
                        const DitModel::BlockHook& block_hook, int first);

  double threshold_;
  int warmup_steps_, steps_;
  RankSubgroup group_;
  bool reused_ = false;
  double change_ = -1;
  int forwards_ = 0, reuses_ = 0;
  StatisticHook statistic_hook_;
};

class FirstBlockCache final : public StepCacheForward {
 public:
  FirstBlockCache(double threshold, int warmup_steps, int steps, RankSubgroup group)
      : StepCacheForward(threshold, warmup_steps, steps, std::move(group)) {}
  torch::Tensor Forward(DitModel& model, const torch::Tensor& latent, const torch::Tensor& time,
                        const Conditioning& conditioning, const ParallelContext& parallel,
                        const DitModel::BlockHook& block_hook, int step) override;

 private:
  torch::Tensor previous_residual_;       // block 0's residual at the last computed step
  torch::Tensor rest_image_, rest_text_;  // the other blocks' residuals at that step
};

class TeaCache final : public StepCacheForward {
 public:
  // `coefficients`: the model's rescale polynomial, highest degree first
  // (model_zoo/shapes/teacache_polynomials.h).
  TeaCache(std::vector<double> coefficients, double threshold, int warmup_steps, int steps,
           RankSubgroup group)
      : StepCacheForward(threshold, warmup_steps, steps, std::move(group)),
        coefficients_(std::move(coefficients)) {}
  torch::Tensor Forward(DitModel& model, const torch::Tensor& latent, const torch::Tensor& time,
                        const Conditioning& conditioning, const ParallelContext& parallel,
                        const DitModel::BlockHook& block_hook, int step) override;

 private:
  std::vector<double> coefficients_;
  double accumulated_ = 0;                // rescaled change since the last computed step
  torch::Tensor previous_input_;          // the modulated input at the previous step
  torch::Tensor rest_image_, rest_text_;  // every block's residual at the last computed step
};

}  // namespace ditbench

#include "model_zoo/families/step_cache.h"

namespace ditbench {

FirstBlockCache::FirstBlockCache(double threshold, int warmup_steps, int steps, RankSubgroup group)
    : threshold_(threshold), warmup_steps_(warmup_steps), steps_(steps), group_(std::move(group)) {}

bool FirstBlockCache::Compute(int step, const torch::Tensor& residual) {
  change_ = -1;
  // The warm-up steps, the last step and a step with nothing cached always compute; so does
  // every step of threshold 0 (a change is never below 0): the uncached computation.
  bool compute = step < warmup_steps_ || step == steps_ - 1 || !previous_residual_.defined();
  if (!compute) {
    // In fp32: a bf16 sum over a million elements would round the statistic itself.
    double difference =
        (residual - previous_residual_).to(torch::kFloat32).abs().sum().item<double>();
    double size = previous_residual_.to(torch::kFloat32).abs().sum().item<double>();
    if (statistic_hook_) std::tie(difference, size) = statistic_hook_(difference, size);
    auto sums = torch::tensor({difference, size}, torch::kFloat64).to(residual.device());
    AllReduce(sums, c10d::ReduceOp::SUM, group_);
    const auto summed = sums.cpu();
    const double total = summed[1].item<double>();
    change_ = total > 0 ? summed[0].item<double>() / total : -1;
    compute = !(change_ >= 0 && change_ < threshold_);
  }
  // The vote: one rank that computes makes every rank compute, so that no rank waits in a
  // block's collective that another skipped, whatever the ranks' own sums.
  auto vote = torch::tensor({compute ? 1.0 : 0.0}, torch::kFloat64).to(residual.device());
  AllReduce(vote, c10d::ReduceOp::MAX, group_);
  return vote.cpu().item<double>() > 0;
}

torch::Tensor FirstBlockCache::Forward(DitModel& model, const torch::Tensor& latent,
                                       const torch::Tensor& time, const Conditioning& conditioning,
                                       const ParallelContext& parallel,
                                       const DitModel::BlockHook& block_hook, int step) {
  if (step == 0) {  // a new iteration: the last one's residuals describe other latents
    previous_residual_ = rest_image_ = rest_text_ = torch::Tensor();
  }
  DitState state = model.Embed(latent, time, conditioning, parallel);
  // Copies: a block may update its input in place.
  const torch::Tensor before = state.image.clone();
  if (block_hook) block_hook(0, true);
  model.RunBlock(0, state, parallel);
  if (block_hook) block_hook(0, false);
  const torch::Tensor residual = state.image - before;
  reused_ = !Compute(step, residual);
  ++forwards_;
  reuses_ += reused_;
  if (reused_) {
    state.image = state.image + rest_image_;
    if (rest_text_.defined()) state.text = state.text + rest_text_;
    return model.Finish(state, parallel);
  }
  const torch::Tensor first_image = state.image.clone();
  const torch::Tensor first_text = state.text.defined() ? state.text.clone() : torch::Tensor();
  for (int i = 1; i < model.num_blocks(); ++i) {
    if (block_hook) block_hook(i, true);
    model.RunBlock(i, state, parallel);
    if (block_hook) block_hook(i, false);
  }
  previous_residual_ = residual;
  rest_image_ = state.image - first_image;
  rest_text_ = first_text.defined() ? state.text - first_text : torch::Tensor();
  return model.Finish(state, parallel);
}

}  // namespace ditbench

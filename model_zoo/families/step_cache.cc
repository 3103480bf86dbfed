#include "model_zoo/families/step_cache.h"

#include <algorithm>
#include <stdexcept>

#include "model_zoo/shapes/teacache_polynomials.h"

namespace ditbench {

StepCacheForward::StepCacheForward(double threshold, int warmup_steps, int steps,
                                   RankSubgroup group)
    : threshold_(threshold), warmup_steps_(warmup_steps), steps_(steps), group_(std::move(group)) {}

bool StepCacheForward::AlwaysComputed(int step) const {
  return threshold_ <= 0 || step < warmup_steps_ || step == steps_ - 1;
}

double StepCacheForward::GroupRelativeL1(const torch::Tensor& current,
                                         const torch::Tensor& previous) {
  // In fp32: a bf16 sum over a million elements would round the statistic itself.
  double difference = (current - previous).to(torch::kFloat32).abs().sum().item<double>();
  double size = previous.to(torch::kFloat32).abs().sum().item<double>();
  if (statistic_hook_) std::tie(difference, size) = statistic_hook_(difference, size);
  auto sums = torch::tensor({difference, size}, torch::kFloat64).to(current.device());
  AllReduce(sums, c10d::ReduceOp::SUM, group_);
  const auto summed = sums.cpu();
  const double total = summed[1].item<double>();
  return total > 0 ? summed[0].item<double>() / total : -1;
}

bool StepCacheForward::Agree(bool compute, const torch::Tensor& like) {
  // The vote: one rank that computes makes every rank compute, so that no rank waits in a
  // block's collective that another skipped, whatever the ranks' own sums.
  auto vote = torch::tensor({compute ? 1.0 : 0.0}, torch::kFloat64).to(like.device());
  AllReduce(vote, c10d::ReduceOp::MAX, group_);
  reused_ = !(vote.cpu().item<double>() > 0);
  ++forwards_;
  reuses_ += reused_;
  return !reused_;
}

void StepCacheForward::RunBlocks(DitModel& model, DitState& state, const ParallelContext& parallel,
                                 const DitModel::BlockHook& block_hook, int first) {
  for (int i = first; i < model.num_blocks(); ++i) {
    if (block_hook) block_hook(i, true);
    model.RunBlock(i, state, parallel);
    if (block_hook) block_hook(i, false);
  }
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
  change_ = -1;
  bool compute = AlwaysComputed(step) || !previous_residual_.defined();
  if (!compute) {
    change_ = GroupRelativeL1(residual, previous_residual_);
    compute = !(change_ >= 0 && change_ < threshold_);
  }
  if (!Agree(compute, residual)) {
    state.image = state.image + rest_image_;
    if (rest_text_.defined()) state.text = state.text + rest_text_;
    return model.Finish(state, parallel);
  }
  const torch::Tensor first_image = state.image.clone();
  const torch::Tensor first_text = state.text.defined() ? state.text.clone() : torch::Tensor();
  RunBlocks(model, state, parallel, block_hook, 1);
  previous_residual_ = residual;
  rest_image_ = state.image - first_image;
  rest_text_ = first_text.defined() ? state.text - first_text : torch::Tensor();
  return model.Finish(state, parallel);
}

torch::Tensor TeaCache::Forward(DitModel& model, const torch::Tensor& latent,
                                const torch::Tensor& time, const Conditioning& conditioning,
                                const ParallelContext& parallel,
                                const DitModel::BlockHook& block_hook, int step) {
  if (step == 0) {  // a new iteration
    previous_input_ = rest_image_ = rest_text_ = torch::Tensor();
    accumulated_ = 0;
  }
  DitState state = model.Embed(latent, time, conditioning, parallel);
  const torch::Tensor input = model.TeaCacheInput(state);
  if (!input.defined())  // refused before launch (experiments/validity.cc); never silently off
    throw std::invalid_argument(
        "cache: teacache: this model family has no timestep-modulated input to watch");
  change_ = -1;
  bool compute = AlwaysComputed(step) || !previous_input_.defined() || !rest_image_.defined();
  if (!compute) {
    const double relative = GroupRelativeL1(input, previous_input_);
    // The published polynomial can dip below zero between its fitted points; a change is
    // never negative, so neither is its rescaled value.
    accumulated_ += relative >= 0 ? std::max(0.0, EvaluatePolynomial(coefficients_, relative))
                                  : threshold_;  // nothing to compare with: compute
    change_ = accumulated_;
    compute = !(accumulated_ < threshold_);
  }
  previous_input_ = input.clone();
  if (!Agree(compute, input)) {
    state.image = state.image + rest_image_;
    if (rest_text_.defined()) state.text = state.text + rest_text_;
    return model.Finish(state, parallel);
  }
  accumulated_ = 0;
  const torch::Tensor first_image = state.image.clone();
  const torch::Tensor first_text = state.text.defined() ? state.text.clone() : torch::Tensor();
  RunBlocks(model, state, parallel, block_hook, 0);
  rest_image_ = state.image - first_image;
  rest_text_ = first_text.defined() ? state.text - first_text : torch::Tensor();
  return model.Finish(state, parallel);
}

}  // namespace ditbench

#include "model_zoo/parallel/pipefusion.h"

namespace ditbench {

PipeFusionRunner::PipeFusionRunner(DitModel& model, ParallelContext& parallel, int patches,
                                   int warmup_steps)
    : model_(model), parallel_(parallel), patches_(patches), warmup_steps_(warmup_steps) {
  const int stages = parallel.pipefusion().size, stage = parallel.pipefusion().rank;
  const int blocks = model.num_blocks();
  TORCH_CHECK(blocks >= stages, "PipeFusion with ", stages, " stages needs at least as many blocks");
  // Stages get blocks / stages blocks each; the first blocks % stages stages one more.
  const int base = blocks / stages, extra = blocks % stages;
  begin_ = stage * base + std::min(stage, extra);
  end_ = begin_ + base + (stage < extra ? 1 : 0);
  caches_.resize(end_ - begin_);
  parallel_.SetPatchLayout(patches_);
  // Joint-attention families (SD3, Flux) update their text stream in every block: the next
  // stage needs it with the image tokens. Cross-attention text (PixArt) is context that no
  // block changes.
  passes_text_ = model.config().text_attention == TextAttention::kJoint;
}

void PipeFusionRunner::SendOn(const DitState& state) {
  const RankSubgroup& pipe = parallel_.pipefusion();
  Send(state.image, pipe.rank + 1, pipe);
  if (passes_text_) Send(state.text, pipe.rank + 1, pipe);
}

void PipeFusionRunner::ReceiveFromPrevious(DitState& state) {
  const RankSubgroup& pipe = parallel_.pipefusion();
  state.image = torch::empty(state.image.sizes(), state.image.options());
  Recv(state.image, pipe.rank - 1, pipe);
  if (passes_text_) {
    state.text = torch::empty(state.text.sizes(), state.text.options());
    Recv(state.text, pipe.rank - 1, pipe);
  }
}

void PipeFusionRunner::RunStageBlocks(DitState& state, const DitModel::BlockHook& block_hook) {
  for (int i = begin_; i < end_; ++i) {
    parallel_.SetKvCaches(&caches_[i - begin_]);
    if (block_hook) block_hook(i, true);
    model_.RunBlock(i, state, parallel_);
    if (block_hook) block_hook(i, false);
  }
  parallel_.SetKvCaches(nullptr);
}

torch::Tensor PipeFusionRunner::BroadcastOutput(torch::Tensor output, const torch::Tensor& latent) {
  const RankSubgroup& pipe = parallel_.pipefusion();
  const int last = pipe.size - 1;
  if (pipe.rank != last)
    output = torch::empty({latent.size(0), model_.config().out_channels, latent.size(2),
                           latent.size(3)}, latent.options());
  output = output.contiguous();
  Broadcast(output, last, pipe);
  return output;
}

torch::Tensor PipeFusionRunner::Forward(const torch::Tensor& latent, const torch::Tensor& time,
                                        const Conditioning& conditioning, int step,
                                        const DitModel::BlockHook& block_hook) {
  const RankSubgroup& pipe = parallel_.pipefusion();
  const int stage = pipe.rank, last = pipe.size - 1;

  if (step < warmup_steps_) {  // synchronous: the whole sequence, stage after stage
    parallel_.SetPatch(std::nullopt);
    DitState state = model_.Embed(latent, time, conditioning, parallel_);
    if (stage > 0) ReceiveFromPrevious(state);
    RunStageBlocks(state, block_hook);
    torch::Tensor output;
    if (stage < last) SendOn(state);
    else output = model_.Finish(state, parallel_);
    return BroadcastOutput(output, latent);
  }

  // Patch-pipelined: embed once (whole sequence), then each patch of it in turn.
  parallel_.SetWholeSequence(true);
  DitState whole = model_.Embed(latent, time, conditioning, parallel_);
  parallel_.SetWholeSequence(false);
  const int64_t total = whole.image.size(1), per_patch = total / patches_;
  TORCH_CHECK(per_patch * patches_ == total, total, " tokens do not split into ", patches_,
              " patches");
  std::vector<torch::Tensor> finished(patches_);
  for (int m = 0; m < patches_; ++m) {
    parallel_.SetPatch(ParallelContext::Patch{m * per_patch, per_patch, total});
    DitState state = whole;
    state.image = parallel_.ShardSequence(whole.image, 1);  // this rank's part of patch m
    // Each patch carries its own copy of the text stream through the stages.
    if (stage > 0) ReceiveFromPrevious(state);
    RunStageBlocks(state, {});
    if (stage < last) SendOn(state);
    else finished[m] = parallel_.GatherSequence(state.image, 1);  // the whole patch
  }
  parallel_.SetPatch(std::nullopt);
  torch::Tensor output;
  if (stage == last) {
    DitState state = whole;
    state.image = torch::cat(finished, 1);
    parallel_.SetWholeSequence(true);
    output = model_.Finish(state, parallel_);
    parallel_.SetWholeSequence(false);
  }
  return BroadcastOutput(output, latent);
}

}  // namespace ditbench

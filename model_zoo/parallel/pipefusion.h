// PipeFusion: the transformer's blocks split into stages (one per rank of the pipefusion
// group) and the image split into patches pipelined through them, over any DitModel.
//
// The first `warmup_steps` diffusion steps run synchronously: the whole sequence passes stage
// by stage and every block caches the full-sequence K/V of its self-attention. Every later step
// sends the patches through one after another: each stage attends the current patch over its
// cache, where that patch's K/V are fresh and the other patches' come from the previous step
// (or from earlier patches of this step): PipeFusion's stale activations, which its output error
// measures. Stage s sends each patch on to stage s+1 as soon as it is done, so the stages work on
// different patches at once. A block that attends twice (SD3.5-medium's dual attention) keeps
// a cache per attention. The last stage runs the model's final layer and broadcasts the
// output, so every rank ends with the same full output, as in DitModel::Forward.
//
// Composes with Ulysses, ring and USP inside a stage (each patch is split over the sequence
// group; ParallelContext::SetPatchLayout keeps ring ranks' caches aligned) and with CFG and
// data parallelism outside. Over the MM-DiT families (SD3, Flux) the text stream travels
// with the image tokens from stage to stage, one copy per patch.
// Thread-safety: one runner per rank; it owns the caches of its stage's blocks.
#pragma once

#include <vector>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/parallel/parallel_context.h"

namespace ditbench {

class PipeFusionRunner {
 public:
  // REQUIRES: model.num_blocks() >= pipefusion degree; patches >= 1 (validity rules).
  PipeFusionRunner(DitModel& model, ParallelContext& parallel, int patches, int warmup_steps);

  // One forward at diffusion step `step`, with DitModel::Forward's contract. `block_hook` sees
  // this stage's blocks in synchronous steps only (patch steps run each block once per patch).
  torch::Tensor Forward(const torch::Tensor& latent, const torch::Tensor& time,
                        const Conditioning& conditioning, int step,
                        const DitModel::BlockHook& block_hook = {});

  // This stage's blocks: [begin, end).
  int first_block() const { return begin_; }
  int end_block() const { return end_; }

 private:
  void RunStageBlocks(DitState& state, const DitModel::BlockHook& block_hook);
  void SendOn(const DitState& state);
  void ReceiveFromPrevious(DitState& state);
  torch::Tensor BroadcastOutput(torch::Tensor output, const torch::Tensor& latent);

  DitModel& model_;
  ParallelContext& parallel_;
  int patches_;
  int warmup_steps_;
  int begin_ = 0, end_ = 0;
  std::vector<BlockKvCaches> caches_;  // one set per block of this stage
  bool passes_text_ = false;
};

}  // namespace ditbench

// The single-stream DiT block shared by Flux and HunyuanVideo (diffusers'
// FluxSingleTransformerBlock and HunyuanVideoSingleTransformerBlock): text and image tokens go
// through the same weights. An AdaLN modulation from the conditioning (shift, scale, gate), one
// projection to q/k/v and the MLP input (GELU(tanh)), q/k RMS norms and rotary positions, joint
// attention over text and image, then one projection back from [attention, MLP] added to the
// residual through the gate.
//
// diffusers runs it on cat([text, image]); here the two parts are kept apart, run through the
// same weights, and attend jointly, which is the same function. Under sequence parallelism the
// image tokens are this rank's shard and the text tokens are replicated: the text reaches
// ParallelContext::Attend as the joint Qkv, so every rank updates the text identically.
// Its checkpoint names are SingleBlockRules (model_zoo/weights/weight_rules.h).
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/parallel/parallel_context.h"

namespace ditbench {

class SingleStreamBlockImpl : public torch::nn::Module {
 public:
  // REQUIRES: heads divides dim.
  SingleStreamBlockImpl(int64_t dim, int64_t heads, int64_t mlp_ratio);
  // image: [B, n, D] this rank's tokens; text: [B, T, D] all text tokens (replicated);
  // temb: [B, D]. The rotary tables cover this rank's image tokens and all text tokens.
  // Updates both.
  void forward(torch::Tensor& image, torch::Tensor& text, const torch::Tensor& temb,
               const RotaryTable& image_rotary, const RotaryTable& text_rotary,
               const ParallelContext& parallel);

 private:
  // Everything before attention for one part of the sequence; `tp`: the ranks that share the
  // fused projection (tensor parallelism), each holding 1 / tp of every part.
  struct Prepared {
    Qkv qkv;
    torch::Tensor mlp;
  };
  Prepared Prepare(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale,
                   const RotaryTable& rotary, int64_t tp);

  int64_t dim_, heads_, mlp_dim_;
  torch::nn::Linear norm_linear_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear qkv_mlp_{nullptr};  // to_q, to_k, to_v and proj_mlp, fused
  RmsNorm norm_q_{nullptr}, norm_k_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
};
TORCH_MODULE(SingleStreamBlock);

}  // namespace ditbench

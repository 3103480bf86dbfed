// The MM-DiT (double-stream) block shared by SD3 and Flux: image and text tokens each have their
// own AdaLN-zero modulation, q/k/v projections, output projection and MLP, and attend jointly
// over the concatenated sequence (diffusers' JointTransformerBlock and FluxTransformerBlock).
//
// SD3.5-medium's dual-attention blocks (MMDiT-X, diffusers' use_dual_attention) give the image
// stream a second self-attention over image tokens only: its input is the same normed image,
// modulated by three more AdaLN chunks (shift, scale, gate: 9 in all), and its gated output is
// added to the image residual after the joint attention's.
//
// Under sequence parallelism the image tokens are this rank's shard and the text tokens are
// replicated: the text goes to ParallelContext::Attend as the joint Qkv, which returns this
// rank's image output and the whole text output, so every rank updates the text identically.
// The second attention is an image-only ParallelContext::Attend, as PixArt's self-attention.
#pragma once

#include <optional>

#include <torch/torch.h>

#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/parallel/parallel_context.h"

namespace ditbench {

struct JointBlockOptions {
  int64_t dim = 0, heads = 0, mlp_ratio = 4;
  bool qk_norm = false;           // RMS norm on queries and keys (Flux, SD3.5)
  bool context_pre_only = false;  // the text stream only feeds K/V (SD3's last block)
  bool dual_attention = false;    // a second, image-only self-attention (SD3.5-medium)
};

// Projects [B, n, D] tokens to a packed [B, n, 3, H, d] q/k/v with optional q/k RMS norms and
// rotary embedding; shared by the double- and single-stream blocks.
Qkv ProjectQkv(const torch::nn::Linear& qkv, const torch::Tensor& x, int64_t heads,
               RmsNorm* norm_q, RmsNorm* norm_k, const RotaryTable* rotary);

class JointBlockImpl : public torch::nn::Module {
 public:
  explicit JointBlockImpl(const JointBlockOptions& options);
  // image: [B, n, D] this rank's tokens; text: [B, T, D] (replicated); temb: [B, D].
  // Rotary tables (Flux) cover this rank's image tokens and all text tokens; null for none.
  // Updates image and, unless context_pre_only, text.
  void forward(torch::Tensor& image, torch::Tensor& text, const torch::Tensor& temb,
               const RotaryTable* image_rotary, const RotaryTable* text_rotary,
               const ParallelContext& parallel);
  // The image tokens as the block's attention takes them: normed and modulated by temb's
  // shift and scale (what `cache: teacache` watches in the first block).
  torch::Tensor ModulatedImage(const torch::Tensor& image, const torch::Tensor& temb);

 private:
  JointBlockOptions options_;
  torch::nn::Linear norm1_{nullptr}, norm1_context_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Linear qkv_{nullptr}, add_qkv_{nullptr}, to_out_{nullptr}, to_add_out_{nullptr};
  RmsNorm norm_q_{nullptr}, norm_k_{nullptr}, norm_added_q_{nullptr}, norm_added_k_{nullptr};
  torch::nn::Linear ff_fc1_{nullptr}, ff_fc2_{nullptr};
  torch::nn::Linear ff_context_fc1_{nullptr}, ff_context_fc2_{nullptr};
  torch::nn::Linear attn2_qkv_{nullptr}, attn2_out_{nullptr};  // dual attention only
  RmsNorm attn2_norm_q_{nullptr}, attn2_norm_k_{nullptr};      // dual attention with qk_norm
};
TORCH_MODULE(JointBlock);

}  // namespace ditbench

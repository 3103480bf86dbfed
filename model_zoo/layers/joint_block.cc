#include "model_zoo/layers/joint_block.h"

namespace ditbench {

Qkv ProjectQkv(const torch::nn::Linear& qkv, const torch::Tensor& x, int64_t heads,
               RmsNorm* norm_q, RmsNorm* norm_k, const RotaryTable* rotary) {
  // Under tensor parallelism the projection holds this rank's heads: -1 is heads / tp.
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2) / heads;
  auto packed = Dense(qkv, x).view({b, n, 3, -1, d});
  if (!norm_q && !rotary) return Qkv::FromPacked(packed);
  auto parts = packed.unbind(2);
  auto q = norm_q ? (*norm_q)(parts[0]) : parts[0];
  auto k = norm_k ? (*norm_k)(parts[1]) : parts[1];
  if (rotary) {
    q = ApplyRotary(q, *rotary);
    k = ApplyRotary(k, *rotary);
  }
  return Qkv::FromPacked(torch::stack({q, k, parts[2]}, 2));
}

JointBlockImpl::JointBlockImpl(const JointBlockOptions& o) : options_(o) {
  const int64_t d = o.dim, hd = o.dim / o.heads;
  // The image stream's modulation: AdaLN-zero (6), 3 more for the dual attention.
  norm1_ = register_module("norm1", torch::nn::Linear(d, (o.dual_attention ? 9 : 6) * d));
  // The text stream's modulation: AdaLN-zero (6), or scale and shift only when it feeds K/V.
  norm1_context_ = register_module("norm1_context",
                                   torch::nn::Linear(d, (o.context_pre_only ? 2 : 6) * d));
  norm_ = register_module("norm", PlainNorm(d));
  qkv_ = register_module("qkv", torch::nn::Linear(d, 3 * d));
  add_qkv_ = register_module("add_qkv", torch::nn::Linear(d, 3 * d));
  to_out_ = register_module("to_out", torch::nn::Linear(d, d));
  if (o.qk_norm) {
    norm_q_ = register_module("norm_q", RmsNorm(hd));
    norm_k_ = register_module("norm_k", RmsNorm(hd));
    norm_added_q_ = register_module("norm_added_q", RmsNorm(hd));
    norm_added_k_ = register_module("norm_added_k", RmsNorm(hd));
  }
  ff_fc1_ = register_module("ff_fc1", torch::nn::Linear(d, o.mlp_ratio * d));
  ff_fc2_ = register_module("ff_fc2", torch::nn::Linear(o.mlp_ratio * d, d));
  if (o.dual_attention) {
    attn2_qkv_ = register_module("attn2_qkv", torch::nn::Linear(d, 3 * d));
    attn2_out_ = register_module("attn2_out", torch::nn::Linear(d, d));
    if (o.qk_norm) {
      attn2_norm_q_ = register_module("attn2_norm_q", RmsNorm(hd));
      attn2_norm_k_ = register_module("attn2_norm_k", RmsNorm(hd));
    }
  }
  if (!o.context_pre_only) {
    to_add_out_ = register_module("to_add_out", torch::nn::Linear(d, d));
    ff_context_fc1_ = register_module("ff_context_fc1", torch::nn::Linear(d, o.mlp_ratio * d));
    ff_context_fc2_ = register_module("ff_context_fc2", torch::nn::Linear(o.mlp_ratio * d, d));
  }
}

torch::Tensor JointBlockImpl::ModulatedImage(const torch::Tensor& image,
                                             const torch::Tensor& temb) {
  auto mod = Dense(norm1_, torch::silu(temb)).chunk(options_.dual_attention ? 9 : 6, 1);
  return Modulate(norm_(image), mod[0], mod[1]);
}

void JointBlockImpl::forward(torch::Tensor& image, torch::Tensor& text, const torch::Tensor& temb,
                             const RotaryTable* image_rotary, const RotaryTable* text_rotary,
                             const ParallelContext& parallel) {
  // Under tensor parallelism (model_zoo/weights/weight_shard.h) the attentions hold this
  // rank's heads (-1 below: its share of the width) and each output projection's partial sum
  // is reduced over the tp group.
  const int64_t b = image.size(0), n = image.size(1), t = text.size(1);
  const int64_t h = options_.heads;
  auto silu = torch::silu(temb);
  // shift, scale, gate (attention); same (MLP); same (dual attention)
  auto mod = Dense(norm1_, silu).chunk(options_.dual_attention ? 9 : 6, 1);
  auto cmod = Dense(norm1_context_, silu).chunk(options_.context_pre_only ? 2 : 6, 1);

  const auto normed = norm_(image);
  auto x = Modulate(normed, mod[0], mod[1]);
  auto c = options_.context_pre_only ? Modulate(norm_(text), cmod[1], cmod[0])  // scale, shift
                                     : Modulate(norm_(text), cmod[0], cmod[1]);
  RmsNorm* nq = options_.qk_norm ? &norm_q_ : nullptr;
  RmsNorm* nk = options_.qk_norm ? &norm_k_ : nullptr;
  RmsNorm* naq = options_.qk_norm ? &norm_added_q_ : nullptr;
  RmsNorm* nak = options_.qk_norm ? &norm_added_k_ : nullptr;
  Qkv image_qkv = ProjectQkv(qkv_, x, h, nq, nk, image_rotary);
  Qkv text_qkv = ProjectQkv(add_qkv_, c, h, naq, nak, text_rotary);
  AttentionOutput attn = parallel.Attend(image_qkv, text_qkv);

  image = GatedResidual(
      image, mod[2], parallel.ReduceTensorParallel(Dense(to_out_, attn.image.reshape({b, n, -1}))));
  if (options_.dual_attention) {  // image tokens only, from the image as it entered the block
    RmsNorm* nq2 = options_.qk_norm ? &attn2_norm_q_ : nullptr;
    RmsNorm* nk2 = options_.qk_norm ? &attn2_norm_k_ : nullptr;
    Qkv qkv2 = ProjectQkv(attn2_qkv_, Modulate(normed, mod[6], mod[7]), h, nq2, nk2, nullptr);
    auto attn2 = parallel.Attend(qkv2, std::nullopt, /*attention=*/1).image.reshape({b, n, -1});
    image = GatedResidual(image, mod[8], parallel.ReduceTensorParallel(Dense(attn2_out_, attn2)));
  }
  auto y = Modulate(norm_(image), mod[3], mod[4]);
  image = GatedResidual(image, mod[5],
                        parallel.ReduceTensorParallel(Dense(ff_fc2_, DenseGelu(ff_fc1_, y))));
  if (options_.context_pre_only) return;

  text = GatedResidual(
      text, cmod[2],
      parallel.ReduceTensorParallel(Dense(to_add_out_, attn.text.reshape({b, t, -1}))));
  auto z = Modulate(norm_(text), cmod[3], cmod[4]);
  text = GatedResidual(
      text, cmod[5],
      parallel.ReduceTensorParallel(Dense(ff_context_fc2_, DenseGelu(ff_context_fc1_, z))));
  if (text.scalar_type() == torch::kHalf) text = text.clamp(-65504, 65504);
}

}  // namespace ditbench

#include "model_zoo/layers/single_stream_block.h"

namespace ditbench {

SingleStreamBlockImpl::SingleStreamBlockImpl(int64_t dim, int64_t heads, int64_t mlp_ratio)
    : dim_(dim), heads_(heads), mlp_dim_(mlp_ratio * dim) {
  norm_linear_ = register_module("norm_linear", torch::nn::Linear(dim, 3 * dim));
  norm_ = register_module("norm", PlainNorm(dim));
  qkv_mlp_ = register_module("qkv_mlp", torch::nn::Linear(dim, 3 * dim + mlp_dim_));
  norm_q_ = register_module("norm_q", RmsNorm(dim / heads));
  norm_k_ = register_module("norm_k", RmsNorm(dim / heads));
  proj_out_ = register_module("proj_out", torch::nn::Linear(dim + mlp_dim_, dim));
}

SingleStreamBlockImpl::Prepared SingleStreamBlockImpl::Prepare(const torch::Tensor& x,
                                                               const torch::Tensor& shift,
                                                               const torch::Tensor& scale,
                                                               const RotaryTable& rotary,
                                                               int64_t tp) {
  // Under tensor parallelism the weight holds this rank's share of each part: 1 / tp of the
  // heads, then of the MLP.
  const int64_t b = x.size(0), n = x.size(1), hd = dim_ / heads_;
  auto h = Modulate(norm_(x), shift, scale);
  // One weight, two GEMMs over its row blocks: Q/K/V, and the MLP with GELU as its epilogue.
  auto qkv =
      DenseRows(qkv_mlp_, h, 0, 3 * dim_ / tp, Epilogue::kNone).view({b, n, 3, -1, hd}).unbind(2);
  auto mlp = DenseRows(qkv_mlp_, h, 3 * dim_ / tp, mlp_dim_ / tp, Epilogue::kGeluTanh);
  auto q = ApplyRotary(norm_q_(qkv[0]), rotary);
  auto k = ApplyRotary(norm_k_(qkv[1]), rotary);
  return {Qkv::FromPacked(torch::stack({q, k, qkv[2]}, 2)), mlp};
}

void SingleStreamBlockImpl::forward(torch::Tensor& image, torch::Tensor& text,
                                    const torch::Tensor& temb, const RotaryTable& image_rotary,
                                    const RotaryTable& text_rotary,
                                    const ParallelContext& parallel) {
  auto mod = Dense(norm_linear_, torch::silu(temb)).chunk(3, 1);  // shift, scale, gate
  const int64_t tp = parallel.tensor_parallel().size;
  Prepared img = Prepare(image, mod[0], mod[1], image_rotary, tp);
  Prepared txt = Prepare(text, mod[0], mod[1], text_rotary, tp);
  AttentionOutput attn = parallel.Attend(img.qkv, txt.qkv);
  auto finish = [&](const torch::Tensor& x, const torch::Tensor& attended,
                    const torch::Tensor& mlp) {
    auto a = attended.reshape({x.size(0), x.size(1), -1});
    auto out = GatedResidual(
        x, mod[2], parallel.ReduceTensorParallel(Dense(proj_out_, torch::cat({a, mlp}, 2))));
    return out.scalar_type() == torch::kHalf ? out.clamp(-65504, 65504) : out;
  };
  image = finish(image, attn.image, img.mlp);
  text = finish(text, attn.text, txt.mlp);
}

}  // namespace ditbench

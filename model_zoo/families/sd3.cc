#include "model_zoo/families/sd3.h"

#include "model_zoo/layers/timestep_features.h"

namespace ditbench {
torch::Tensor Sd3Positions(const ModelConfig& c, int64_t rows, int64_t cols) {
  const int64_t table = c.pos_embed_max_size;
  TORCH_CHECK(rows <= table && cols <= table, c.name, ": SD3's position table has ", table,
              " patch rows and columns, not ", rows, " x ", cols);
  const double base = double(c.sample_size / c.patch);
  const double scale = c.interpolation_scale > 0 ? c.interpolation_scale : 1.0;
  // The centre crop of the square table, each axis centred on its own.
  return SinCosPositions2d(c.hidden, SinCosAxis::Centred(rows, table),
                           SinCosAxis::Centred(cols, table), base, scale);
}

Sd3TransformerImpl::Sd3TransformerImpl(const ModelConfig& c) : config_(c) {
  const int64_t d = c.hidden;
  pos_embed_proj_ = register_module(
      "pos_embed_proj",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(c.in_channels, d, c.patch).stride(c.patch)));
  context_embedder_ = register_module("context_embedder", torch::nn::Linear(c.text_dim, d));
  timestep_embedder_ = register_module("timestep_embedder", EmbedderMlp(256, d));
  text_embedder_ = register_module("text_embedder", EmbedderMlp(c.pooled_dim, d));
  transformer_blocks_ = register_module("transformer_blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.depth; ++i) {
    JointBlockOptions options{d, c.heads, c.mlp_ratio, c.qk_norm,
                              /*context_pre_only=*/i + 1 == c.depth,
                              /*dual_attention=*/c.dual_attention(i)};
    transformer_blocks_->push_back(JointBlock(options));
  }
  norm_out_ = register_module("norm_out", torch::nn::Linear(d, 2 * d));
  norm_ = register_module("norm", PlainNorm(d));
  proj_out_ = register_module(
      "proj_out", torch::nn::Linear(d, int64_t(c.patch) * c.patch * c.out_channels));
}

DitState Sd3TransformerImpl::Embed(const torch::Tensor& latent, const torch::Tensor& time,
                                   const Conditioning& conditioning,
                                   const ParallelContext& parallel) {
  const auto& c = config_;
  const auto dtype = latent.scalar_type();
  const int64_t rows = latent.size(2) / c.patch, cols = latent.size(3) / c.patch;
  auto x = pos_embed_proj_(latent).flatten(2).transpose(1, 2);  // [B, N, D], row-major
  if (!positions_.defined() || positions_rows_ != rows || positions_.size(0) != rows * cols ||
      positions_.device() != x.device() || positions_.scalar_type() != dtype) {
    positions_ = Sd3Positions(c, rows, cols).to(x.device(), dtype);
    positions_rows_ = rows;
  }
  DitState state;
  state.batch = latent.size(0);
  state.rows = rows;
  state.cols = cols;
  // Contiguous once: see PixArtTransformerImpl::Embed (a transposed residual stream makes every
  // linear copy its weight).
  state.image = parallel.ShardSequence((positions_.unsqueeze(0) + x).contiguous(), 1);
  state.text = Dense(context_embedder_, conditioning.text);
  state.conditioning = timestep_embedder_(TimestepFeatures(time, 256).to(dtype)) +
                       text_embedder_(conditioning.pooled);
  return state;
}

void Sd3TransformerImpl::RunBlock(int index, DitState& state, const ParallelContext& parallel) {
  transformer_blocks_[index]->as<JointBlockImpl>()->forward(
      state.image, state.text, state.conditioning, nullptr, nullptr, parallel);
}

torch::Tensor Sd3TransformerImpl::Finish(DitState& state, const ParallelContext& parallel) {
  const auto& c = config_;
  const int64_t b = state.batch, p = c.patch, rows = state.rows, cols = state.cols;
  auto mod = Dense(norm_out_, torch::silu(state.conditioning)).chunk(2, 1);  // scale, shift
  auto x = Dense(proj_out_, Modulate(norm_(state.image), mod[1], mod[0]));
  x = parallel.GatherSequence(x, 1);  // [B, N, p * p * C]
  x = x.view({b, rows, cols, p, p, c.out_channels}).permute({0, 5, 1, 3, 2, 4});
  return x.reshape({b, c.out_channels, rows * p, cols * p});
}

namespace {

class Sd3Dit final : public ModuleDit<Sd3Transformer> {
 public:
  using ModuleDit::ModuleDit;
  Guidance guidance() const override {
    return config().negative_prompt ? Guidance::kCfgBatch : Guidance::kNone;
  }
  double guidance_scale() const override { return 7.0; }  // StableDiffusion3Pipeline's default
  Conditioning MakeConditioning(int64_t rows, const ImageShape&) const override {
    Conditioning c;
    c.text = torch::randn({rows, config().text_tokens, config().text_dim});
    c.pooled = torch::randn({rows, config().pooled_dim});
    return c;
  }
  std::unique_ptr<Sampler> MakeSampler(int steps, int64_t) const override {
    return std::make_unique<FlowMatchEuler>(FlowMatchEuler::Sd3(steps));
  }
};

}  // namespace

std::unique_ptr<DitModel> MakeSd3(const ModelConfig& config) {
  return std::make_unique<Sd3Dit>(config);
}

}  // namespace ditbench

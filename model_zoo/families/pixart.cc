#include "model_zoo/families/pixart.h"

#include <algorithm>
#include <cmath>

#include "model_zoo/layers/dit_layers.h"
#include "model_zoo/layers/timestep_features.h"

namespace ditbench {

// diffusers' defaults: the table's unit is sample_size / patch patch rows, scaled down by
// max(sample_size / 64, 1) unless the config names a scale.
// Each axis interpolated to the image's own patches (a 2:1 image's columns span the unit the
// rows do).
torch::Tensor PixArtPositions(const ModelConfig& c, int64_t rows, int64_t cols) {
  const double base = double(c.sample_size / c.patch);
  const double scale = c.interpolation_scale > 0 ? c.interpolation_scale
                                                 : double(std::max(c.sample_size / 64, 1));
  return SinCosPositions2d(c.hidden, SinCosAxis::Whole(rows), SinCosAxis::Whole(cols), base,
                           scale);
}

PixArtBlockImpl::PixArtBlockImpl(const ModelConfig& c) : heads_(c.heads) {
  const int64_t d = c.hidden;
  scale_shift_table_ =
      register_parameter("scale_shift_table", torch::randn({6, d}) / std::sqrt(double(d)));
  norm1_ = register_module("norm1", PlainNorm(d, c.norm_eps));
  norm2_ = register_module("norm2", PlainNorm(d, c.norm_eps));
  qkv_ = register_module("qkv", torch::nn::Linear(d, 3 * d));
  attn_out_ = register_module("attn_out", torch::nn::Linear(d, d));
  cross_q_ = register_module("cross_q", torch::nn::Linear(d, d));
  cross_kv_ = register_module("cross_kv", torch::nn::Linear(d, 2 * d));
  cross_out_ = register_module("cross_out", torch::nn::Linear(d, d));
  fc1_ = register_module("fc1", torch::nn::Linear(d, c.mlp_ratio * d));
  fc2_ = register_module("fc2", torch::nn::Linear(c.mlp_ratio * d, d));
}

torch::Tensor PixArtBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& t6,
                                       const torch::Tensor& text, const ParallelContext& parallel) {
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2), t = text.size(1);
  const int64_t hd = d / heads_;
  auto mod = (scale_shift_table_.unsqueeze(0) + t6).unbind(1);  // 6 x [B, D]
  const auto &shift_msa = mod[0], &scale_msa = mod[1], &gate_msa = mod[2];
  const auto &shift_mlp = mod[3], &scale_mlp = mod[4], &gate_mlp = mod[5];

  // Under tensor parallelism (model_zoo/weights/weight_shard.h) the projections hold this
  // rank's heads (-1 below: heads / tp) and the output projections' partial sums are reduced.
  auto h = Modulate(norm1_(x), shift_msa, scale_msa);
  auto attn = parallel.Attend(Qkv::FromPacked(Dense(qkv_, h).view({b, n, 3, -1, hd}))).image;
  auto out = GatedResidual(
      x, gate_msa, parallel.ReduceTensorParallel(Dense(attn_out_, attn.reshape({b, n, -1}))));

  // Cross-attention: local queries against the full text; no communication needed.
  auto q = Dense(cross_q_, out).view({b, n, -1, hd});
  auto kv = Dense(cross_kv_, text).view({b, t, 2, -1, hd}).unbind(2);
  out = out + parallel.ReduceTensorParallel(
                  Dense(cross_out_, Attention(q, kv[0], kv[1]).reshape({b, n, -1})));

  h = Modulate(norm2_(out), shift_mlp, scale_mlp);
  return GatedResidual(out, gate_mlp,
                       parallel.ReduceTensorParallel(Dense(fc2_, DenseGelu(fc1_, h))));
}

PixArtTransformerImpl::PixArtTransformerImpl(const ModelConfig& c) : config_(c) {
  const int64_t d = c.hidden;
  patch_embed_ = register_module(
      "patch_embed",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(c.in_channels, d, c.patch).stride(c.patch)));
  t_fc1_ = register_module("t_fc1", torch::nn::Linear(256, d));
  t_fc2_ = register_module("t_fc2", torch::nn::Linear(d, d));
  t_block_ = register_module("t_block", torch::nn::Linear(d, 6 * d));
  caption_fc1_ = register_module("caption_fc1", torch::nn::Linear(c.text_dim, d));
  caption_fc2_ = register_module("caption_fc2", torch::nn::Linear(d, d));
  if (c.micro_conditions) {
    resolution_embedder_ = register_module("resolution_embedder", EmbedderMlp(256, d / 3));
    aspect_ratio_embedder_ = register_module("aspect_ratio_embedder", EmbedderMlp(256, d / 3));
  }
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.depth; ++i) blocks_->push_back(PixArtBlock(c));
  final_table_ = register_parameter("final_table", torch::randn({2, d}) / std::sqrt(double(d)));
  final_norm_ = register_module("final_norm", PlainNorm(d));
  final_linear_ = register_module(
      "final_linear", torch::nn::Linear(d, int64_t(c.patch) * c.patch * c.out_channels));
}

DitState PixArtTransformerImpl::Embed(const torch::Tensor& latent, const torch::Tensor& timestep,
                                      const Conditioning& conditioning,
                                      const ParallelContext& parallel) {
  const torch::Tensor& text = conditioning.text;
  const auto& c = config_;
  const int64_t b = latent.size(0), d = c.hidden, p = c.patch;
  const int64_t rows = latent.size(2) / p, cols = latent.size(3) / p;
  const auto dtype = latent.scalar_type();

  // Patch embedding + fixed positions: [B, N, D], N = rows * cols, row-major; then this rank's
  // tokens.
  auto x = patch_embed_(latent).flatten(2).transpose(1, 2);
  if (!positions_.defined() || positions_rows_ != rows || positions_.size(0) != rows * cols ||
      positions_.device() != x.device() || positions_.scalar_type() != dtype) {
    positions_ = PixArtPositions(c, rows, cols).to(x.device(), dtype);
    positions_rows_ = rows;
  }
  // Contiguous once here: the convolution's [B, D, N] transposed would otherwise stay the layout
  // of the residual stream through every block (elementwise ops keep their first input's
  // layout), and each linear on it would take LibTorch's batched-matmul path, which copies the
  // weight per call (9% of a PixArt-alpha forward on the CPU). The positions first: the sum
  // then takes their row-major layout and reads the convolution's output once, coalesced on
  // a GPU, instead of writing a transposed sum and copying it.
  x = (positions_.unsqueeze(0) + x).contiguous();
  DitState state;
  state.batch = b;
  state.rows = rows;
  state.cols = cols;
  state.image = parallel.ShardSequence(x, 1);

  // AdaLN-single: one timestep embedding, projected to six modulations shared by all blocks.
  state.conditioning =
      Dense(t_fc2_, torch::silu(Dense(t_fc1_, TimestepFeatures(timestep, 256).to(dtype))));
  if (c.micro_conditions) {  // PixArt-alpha: + [resolution (2 x d/3), aspect ratio (d/3)]
    TORCH_CHECK(conditioning.resolution.defined() && conditioning.aspect_ratio.defined(),
                c.name, " has micro-conditions: it needs resolution and aspect_ratio inputs");
    auto embed = [&](EmbedderMlp& mlp, const torch::Tensor& values) {
      return mlp(TimestepFeatures(values.flatten(), 256).to(dtype)).reshape({b, -1});
    };
    state.conditioning =
        state.conditioning + torch::cat({embed(resolution_embedder_, conditioning.resolution),
                                         embed(aspect_ratio_embedder_, conditioning.aspect_ratio)},
                                        1);
  }
  state.modulation = Dense(t_block_, torch::silu(state.conditioning)).view({b, 6, d});
  state.text = Dense(caption_fc2_, DenseGelu(caption_fc1_, text));
  return state;
}

void PixArtTransformerImpl::RunBlock(int index, DitState& state, const ParallelContext& parallel) {
  state.image = blocks_[index]->as<PixArtBlockImpl>()->forward(state.image, state.modulation,
                                                              state.text, parallel);
}

torch::Tensor PixArtTransformerImpl::Finish(DitState& state, const ParallelContext& parallel) {
  const auto& c = config_;
  const int64_t b = state.batch, p = c.patch, rows = state.rows, cols = state.cols;
  auto final_mod = (final_table_.unsqueeze(0) + state.conditioning.unsqueeze(1)).unbind(1);
  auto x = Dense(final_linear_, Modulate(final_norm_(state.image), final_mod[0], final_mod[1]));
  x = parallel.GatherSequence(x, 1);  // [B, N, p * p * C_out]

  // Unpatchify: [B, rows, cols, p, p, C] -> [B, C, rows * p, cols * p].
  x = x.view({b, rows, cols, p, p, c.out_channels}).permute({0, 5, 1, 3, 2, 4});
  return x.reshape({b, c.out_channels, rows * p, cols * p});
}

namespace {

class PixArtDit final : public ModuleDit<PixArtTransformer> {
 public:
  using ModuleDit::ModuleDit;
  Guidance guidance() const override {
    return config().negative_prompt ? Guidance::kCfgBatch : Guidance::kNone;
  }
  double guidance_scale() const override { return 4.5; }  // PixArt's default
  Conditioning MakeConditioning(int64_t rows, const ImageShape& image) const override {
    Conditioning c;
    c.text = torch::randn({rows, config().text_tokens, config().text_dim});
    if (config().micro_conditions) {  // as PixArt's pipeline passes them: [height, width], h / w
      c.resolution = torch::tensor({float(image.height), float(image.width)}).repeat({rows, 1});
      c.aspect_ratio = torch::full({rows, 1}, double(image.height) / double(image.width),
                                   torch::kFloat32);
    }
    return c;
  }
  std::unique_ptr<Sampler> MakeSampler(int steps, int64_t) const override {
    return std::make_unique<DpmSolverMultistep>(steps);
  }
  torch::Tensor Prediction(const torch::Tensor& output) const override {
    return output.narrow(1, 0, config().in_channels);  // learned sigma dropped
  }
};

}  // namespace

std::unique_ptr<DitModel> MakePixArt(const ModelConfig& config) {
  return std::make_unique<PixArtDit>(config);
}

}  // namespace ditbench

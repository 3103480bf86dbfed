#include "model_zoo/families/flux.h"

#include "model_zoo/layers/single_stream_block.h"
#include "model_zoo/layers/timestep_features.h"

namespace ditbench {
namespace {

constexpr double kRopeTheta = 10000.0;

// Sinusoidal features of `value` as diffusers' Flux computes them: the value is cast to the
// activations' dtype first (value / 1000 is what the pipeline passes; the model scales by 1000).
// In fp32 that cast is the identity: the value is used as given (dividing and multiplying back
// by 1000 would move it by an ulp).
torch::Tensor ScaledFeatures(const torch::Tensor& value, torch::ScalarType dtype) {
  auto scaled = value.to(torch::kFloat32);
  if (dtype != torch::kFloat32) scaled = ((scaled / 1000.0).to(dtype) * 1000.0).to(torch::kFloat32);
  return TimestepFeatures(scaled, 256).to(dtype);
}

}  // namespace

torch::Tensor PackLatents(const torch::Tensor& latent) {
  const int64_t b = latent.size(0), c = latent.size(1);
  const int64_t rows = latent.size(2) / 2, cols = latent.size(3) / 2;
  return latent.view({b, c, rows, 2, cols, 2})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({b, rows * cols, c * 4});
}

torch::Tensor UnpackLatents(const torch::Tensor& tokens, int64_t rows, int64_t cols,
                            int64_t channels) {
  const int64_t b = tokens.size(0);
  return tokens.view({b, rows, cols, channels, 2, 2})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape({b, channels, rows * 2, cols * 2});
}

torch::Tensor FluxImageIds(int64_t rows, int64_t cols, const torch::TensorOptions& options) {
  auto mesh = torch::meshgrid({torch::arange(rows, options), torch::arange(cols, options)}, "ij");
  return torch::stack({torch::zeros_like(mesh[0]), mesh[0], mesh[1]}, -1).view({-1, 3});
}

FluxTransformerImpl::FluxTransformerImpl(const ModelConfig& c) : config_(c) {
  const int64_t d = c.hidden;
  const int64_t patch_in = int64_t(c.in_channels) * c.patch * c.patch;
  x_embedder_ = register_module("x_embedder", torch::nn::Linear(patch_in, d));
  context_embedder_ = register_module("context_embedder", torch::nn::Linear(c.text_dim, d));
  timestep_embedder_ = register_module("timestep_embedder", EmbedderMlp(256, d));
  if (c.guidance_embed)
    guidance_embedder_ = register_module("guidance_embedder", EmbedderMlp(256, d));
  text_embedder_ = register_module("text_embedder", EmbedderMlp(c.pooled_dim, d));
  transformer_blocks_ = register_module("transformer_blocks", torch::nn::ModuleList());
  JointBlockOptions options{d, c.heads, c.mlp_ratio, /*qk_norm=*/true, false};
  for (int i = 0; i < c.depth; ++i) transformer_blocks_->push_back(JointBlock(options));
  single_transformer_blocks_ =
      register_module("single_transformer_blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.single_blocks; ++i)
    single_transformer_blocks_->push_back(SingleStreamBlock(d, c.heads, c.mlp_ratio));
  norm_out_ = register_module("norm_out", torch::nn::Linear(d, 2 * d));
  norm_ = register_module("norm", PlainNorm(d));
  proj_out_ = register_module("proj_out", torch::nn::Linear(d, patch_in));
}

DitState FluxTransformerImpl::Embed(const torch::Tensor& latent, const torch::Tensor& time,
                                    const Conditioning& conditioning,
                                    const ParallelContext& parallel) {
  const auto& c = config_;
  const auto dtype = latent.scalar_type();
  const int64_t rows = latent.size(2) / 2, cols = latent.size(3) / 2;
  DitState state;
  state.batch = latent.size(0);
  state.rows = rows;
  state.cols = cols;
  state.image = parallel.ShardSequence(Dense(x_embedder_, PackLatents(latent)), 1);
  state.text = Dense(context_embedder_, conditioning.text);

  auto temb = timestep_embedder_(ScaledFeatures(time, dtype));
  if (c.guidance_embed) {
    TORCH_CHECK(conditioning.guidance.defined(), c.name, " needs a guidance input");
    temb = temb + guidance_embedder_(ScaledFeatures(conditioning.guidance * 1000.0, dtype));
  }
  state.conditioning = temb + text_embedder_(conditioning.pooled);

  if (rotary_rows_ != rows || rotary_cols_ != cols ||
      image_rotary_.rotation.device() != latent.device()) {
    // ids: text tokens (0, 0, 0); image tokens (0, row, column), row-major like the tokens.
    auto options = torch::TensorOptions().dtype(torch::kFloat64).device(latent.device());
    auto text_ids = torch::zeros({c.text_tokens, 3}, options);
    text_rotary_ = MakeRotaryTable(text_ids, c.rope_axes, kRopeTheta);
    image_rotary_ = MakeRotaryTable(FluxImageIds(rows, cols, options), c.rope_axes, kRopeTheta);
    rotary_rows_ = rows;
    rotary_cols_ = cols;
  }
  return state;
}

void FluxTransformerImpl::RunBlock(int index, DitState& state, const ParallelContext& parallel) {
  // This rank's rows of the image table, following the token shard (and PipeFusion's patch).
  RotaryTable image_rotary{parallel.ShardSequence(image_rotary_.rotation, 0),
                           image_rotary_.identity};
  if (index < config_.depth) {
    transformer_blocks_[index]->as<JointBlockImpl>()->forward(
        state.image, state.text, state.conditioning, &image_rotary, &text_rotary_, parallel);
  } else {
    single_transformer_blocks_[index - config_.depth]->as<SingleStreamBlockImpl>()->forward(
        state.image, state.text, state.conditioning, image_rotary, text_rotary_, parallel);
  }
}

torch::Tensor FluxTransformerImpl::TeaCacheInput(const DitState& state) {
  return transformer_blocks_[0]->as<JointBlockImpl>()->ModulatedImage(state.image,
                                                                      state.conditioning);
}

torch::Tensor FluxTransformerImpl::Finish(DitState& state, const ParallelContext& parallel) {
  auto mod = Dense(norm_out_, torch::silu(state.conditioning)).chunk(2, 1);  // scale, shift
  auto x = Dense(proj_out_, Modulate(norm_(state.image), mod[1], mod[0]));
  x = parallel.GatherSequence(x, 1);  // [B, N, 4 C]
  return UnpackLatents(x, state.rows, state.cols, config_.out_channels);
}

namespace {

class FluxDit final : public ModuleDit<FluxTransformer> {
 public:
  using ModuleDit::ModuleDit;
  torch::Tensor TeaCacheInput(const DitState& state) override {
    return module_->TeaCacheInput(state);
  }
  Guidance guidance() const override {
    return config().guidance_embed ? Guidance::kDistilled : Guidance::kNone;
  }
  double guidance_scale() const override { return 3.5; }  // FluxPipeline's default
  Conditioning MakeConditioning(int64_t rows, const ImageShape&) const override {
    Conditioning c;
    c.text = torch::randn({rows, config().text_tokens, config().text_dim});
    c.pooled = torch::randn({rows, config().pooled_dim});
    return c;
  }
  std::unique_ptr<Sampler> MakeSampler(int steps, int64_t image_tokens) const override {
    // dev shifts its schedule by resolution; schnell's scheduler does not.
    return std::make_unique<FlowMatchEuler>(
        FlowMatchEuler::Flux(steps, image_tokens, config().guidance_embed));
  }
};

}  // namespace

std::unique_ptr<DitModel> MakeFlux(const ModelConfig& config) {
  return std::make_unique<FluxDit>(config);
}

}  // namespace ditbench

#include "model_zoo/families/hunyuan_video.h"

#include "model_zoo/layers/joint_block.h"
#include "model_zoo/layers/single_stream_block.h"
#include "model_zoo/layers/timestep_features.h"
#include "model_zoo/shapes/hunyuan_video_shapes.h"

namespace ditbench {
namespace {

torch::nn::LayerNorm AffineNorm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-6));
}

// diffusers' Timesteps(256, flip_sin_to_cos, shift 0) of `value`, in the activations' dtype.
torch::Tensor Features(const torch::Tensor& value, torch::ScalarType dtype) {
  return TimestepFeatures(value, 256).to(dtype);
}

}  // namespace

RotaryTable HunyuanVideoRotaryTable(const std::array<int, 3>& axes, int64_t frames, int64_t rows,
                                    int64_t cols, torch::Device device, double theta) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto grid = torch::meshgrid(
      {torch::arange(frames, f32), torch::arange(rows, f32), torch::arange(cols, f32)}, "ij");
  std::vector<torch::Tensor> angles;
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t dim = axes[axis];
    // diffusers' get_1d_rotary_pos_embed: 1 / theta^(2i / dim), all in fp32.
    auto freqs = torch::reciprocal(torch::pow(theta, torch::arange(0, dim, 2, f32) / double(dim)));
    angles.push_back(torch::outer(grid[axis].reshape({-1}), freqs));
  }
  auto all = torch::cat(angles, 1);  // [N, head_dim / 2]
  return {torch::complex(all.cos(), all.sin()).to(device), false};
}

std::vector<double> HunyuanVideoSigmas(int steps, double shift) {
  // numpy's linspace(1, 0, steps + 1) is start + i * (-1 / steps) in fp64; the scheduler takes
  // it as fp32 and shifts it in fp32 (shift * s / (1 + (shift - 1) * s)).
  const float k = static_cast<float>(shift);
  std::vector<double> sigmas;
  for (int i = 0; i < steps; ++i) {
    const float s = static_cast<float>(i * (-1.0 / steps) + 1.0);
    const float scaled = (k - 1.0f) * s;
    const float denominator = 1.0f + scaled;
    sigmas.push_back(static_cast<double>((k * s) / denominator));
  }
  return sigmas;
}

HunyuanVideoRefinerBlockImpl::HunyuanVideoRefinerBlockImpl(int64_t dim, int64_t heads,
                                                           int64_t mlp_ratio)
    : heads_(heads) {
  norm1_ = register_module("norm1", AffineNorm(dim));
  qkv_ = register_module("qkv", torch::nn::Linear(dim, 3 * dim));
  to_out_ = register_module("to_out", torch::nn::Linear(dim, dim));
  norm2_ = register_module("norm2", AffineNorm(dim));
  ff_fc1_ = register_module("ff_fc1", torch::nn::Linear(dim, mlp_ratio * dim));
  ff_fc2_ = register_module("ff_fc2", torch::nn::Linear(mlp_ratio * dim, dim));
  norm_out_ = register_module("norm_out", torch::nn::Linear(dim, 2 * dim));
}

torch::Tensor HunyuanVideoRefinerBlockImpl::forward(const torch::Tensor& x,
                                                    const torch::Tensor& temb) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2);
  auto qkv = Dense(qkv_, norm1_(x)).view({b, t, 3, heads_, d / heads_}).unbind(2);
  auto attn = Attention(qkv[0], qkv[1], qkv[2]).reshape({b, t, d});
  auto gates = Dense(norm_out_, torch::silu(temb)).chunk(2, 1);  // attention, MLP
  auto out = GatedResidual(x, gates[0], Dense(to_out_, attn));
  auto ff = Dense(ff_fc2_, torch::silu(Dense(ff_fc1_, norm2_(out))));
  return GatedResidual(out, gates[1], ff);
}

HunyuanVideoTokenRefinerImpl::HunyuanVideoTokenRefinerImpl(const ModelConfig& c) {
  const int64_t d = c.hidden;
  time_embedder_ = register_module("time_embedder", EmbedderMlp(256, d));
  text_embedder_ = register_module("text_embedder", EmbedderMlp(c.text_dim, d));
  proj_in_ = register_module("proj_in", torch::nn::Linear(c.text_dim, d));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.refiner_blocks; ++i)
    blocks_->push_back(HunyuanVideoRefinerBlock(d, c.heads, kHunyuanRefinerMlpRatio));
}

torch::Tensor HunyuanVideoTokenRefinerImpl::forward(const torch::Tensor& text,
                                                    const torch::Tensor& time) {
  const auto dtype = text.scalar_type();
  // The prompt's mean token, summed in fp32 as diffusers' masked mean does.
  auto pooled = text.to(torch::kFloat32).mean(1).to(dtype);
  auto temb = time_embedder_(Features(time, dtype)) + text_embedder_(pooled);
  auto x = Dense(proj_in_, text);
  for (const auto& block : *blocks_) x = block->as<HunyuanVideoRefinerBlockImpl>()->forward(x, temb);
  return x;
}

HunyuanVideoTransformerImpl::HunyuanVideoTransformerImpl(const ModelConfig& c) : config_(c) {
  const int64_t d = c.hidden;
  x_embedder_ = register_module(
      "x_embedder",
      torch::nn::Conv3d(torch::nn::Conv3dOptions(c.in_channels, d, {c.patch_t, c.patch, c.patch})
                            .stride({c.patch_t, c.patch, c.patch})));
  context_embedder_ = register_module("context_embedder", HunyuanVideoTokenRefiner(c));
  timestep_embedder_ = register_module("timestep_embedder", EmbedderMlp(256, d));
  text_embedder_ = register_module("text_embedder", EmbedderMlp(c.pooled_dim, d));
  if (c.guidance_embed)
    guidance_embedder_ = register_module("guidance_embedder", EmbedderMlp(256, d));
  transformer_blocks_ = register_module("transformer_blocks", torch::nn::ModuleList());
  const JointBlockOptions options{d, c.heads, c.mlp_ratio, /*qk_norm=*/true,
                                  /*context_pre_only=*/false, /*dual_attention=*/false};
  for (int i = 0; i < c.depth; ++i) transformer_blocks_->push_back(JointBlock(options));
  single_transformer_blocks_ =
      register_module("single_transformer_blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.single_blocks; ++i)
    single_transformer_blocks_->push_back(SingleStreamBlock(d, c.heads, c.mlp_ratio));
  norm_out_ = register_module("norm_out", torch::nn::Linear(d, 2 * d));
  norm_ = register_module("norm", PlainNorm(d));
  proj_out_ = register_module(
      "proj_out",
      torch::nn::Linear(d, int64_t(c.out_channels) * c.patch_t * c.patch * c.patch));
}

DitState HunyuanVideoTransformerImpl::Embed(const torch::Tensor& latent, const torch::Tensor& time,
                                            const Conditioning& conditioning,
                                            const ParallelContext& parallel) {
  const auto& c = config_;
  TORCH_CHECK(latent.dim() == 5, c.name, " takes a [B, C, F, H, W] latent");
  const int64_t b = latent.size(0);
  const int64_t pt = c.patch_t, p = c.patch;
  const int64_t frames = latent.size(2) / pt, rows = latent.size(3) / p, cols = latent.size(4) / p;
  const auto dtype = latent.scalar_type();

  auto x = PatchEmbed3d(x_embedder_, latent);  // tokens frame-major
  DitState state;
  state.batch = b;
  state.image = parallel.ShardSequence(x, 1);

  // diffusers' order: (timestep + pooled text) + guidance.
  auto temb = timestep_embedder_(Features(time, dtype)) + text_embedder_(conditioning.pooled);
  if (c.guidance_embed) {
    TORCH_CHECK(conditioning.guidance.defined(), c.name, " needs a guidance input");
    temb = temb + guidance_embedder_(Features(conditioning.guidance, dtype));
  }
  state.conditioning = temb;
  state.text = context_embedder_(conditioning.text, time);

  const std::array<int64_t, 3> grid = {frames, rows, cols};
  if (grid != grid_ || rotary_.rotation.device() != latent.device()) {
    rotary_ =
        HunyuanVideoRotaryTable(c.rope_axes, frames, rows, cols, latent.device(), c.rope_theta);
    grid_ = grid;
  }
  return state;
}

torch::Tensor HunyuanVideoTransformerImpl::TeaCacheInput(const DitState& state) {
  return transformer_blocks_[0]->as<JointBlockImpl>()->ModulatedImage(state.image,
                                                                      state.conditioning);
}

void HunyuanVideoTransformerImpl::RunBlock(int index, DitState& state,
                                           const ParallelContext& parallel) {
  // This rank's rows of the video tokens' table; the text tokens are not rotated.
  RotaryTable rotary{parallel.ShardSequence(rotary_.rotation, 0), false};
  if (index < config_.depth) {
    transformer_blocks_[index]->as<JointBlockImpl>()->forward(
        state.image, state.text, state.conditioning, &rotary, nullptr, parallel);
  } else {
    const RotaryTable unrotated{torch::Tensor(), /*identity=*/true};
    single_transformer_blocks_[index - config_.depth]->as<SingleStreamBlockImpl>()->forward(
        state.image, state.text, state.conditioning, rotary, unrotated, parallel);
  }
}

torch::Tensor HunyuanVideoTransformerImpl::Finish(DitState& state,
                                                  const ParallelContext& parallel) {
  const auto& c = config_;
  const int64_t b = state.batch, pt = c.patch_t, p = c.patch;
  const auto [frames, rows, cols] = grid_;
  auto mod = Dense(norm_out_, torch::silu(state.conditioning)).chunk(2, 1);  // scale, shift
  auto x = Dense(proj_out_, Modulate(norm_(state.image), mod[1], mod[0]));
  x = parallel.GatherSequence(x, 1);  // [B, N, C * pt * p * p]
  // Unpatchify: [B, F, H, W, C, pt, p, p] -> [B, C, F * pt, H * p, W * p].
  return x.view({b, frames, rows, cols, c.out_channels, pt, p, p})
      .permute({0, 4, 1, 5, 2, 6, 3, 7})
      .reshape({b, c.out_channels, frames * pt, rows * p, cols * p});
}

namespace {

class HunyuanVideoDit final : public ModuleDit<HunyuanVideoTransformer> {
 public:
  using ModuleDit::ModuleDit;
  torch::Tensor TeaCacheInput(const DitState& state) override {
    return module_->TeaCacheInput(state);
  }
  Guidance guidance() const override {
    return config().guidance_embed ? Guidance::kDistilled : Guidance::kNone;
  }
  // HunyuanVideoPipeline's guidance_scale 6.0, which it passes to the model times 1000.
  double guidance_scale() const override { return 6.0 * 1000.0; }
  Conditioning MakeConditioning(int64_t rows, const ImageShape&) const override {
    Conditioning c;
    c.text = torch::randn({rows, config().text_tokens, config().text_dim});
    c.pooled = torch::randn({rows, config().pooled_dim});
    return c;
  }
  std::unique_ptr<Sampler> MakeSampler(int steps, int64_t) const override {
    return std::make_unique<FlowMatchEuler>(HunyuanVideoSigmas(steps));
  }
};

}  // namespace

std::unique_ptr<DitModel> MakeHunyuanVideo(const ModelConfig& config) {
  return std::make_unique<HunyuanVideoDit>(config);
}

WeightRules HunyuanVideoWeightRules(const ModelConfig& c) {
  WeightRules r;
  r["x_embedder"] = {"x_embedder.proj"};
  r["context_embedder.time_embedder"] = {"context_embedder.time_text_embed.timestep_embedder"};
  r["context_embedder.text_embedder"] = {"context_embedder.time_text_embed.text_embedder"};
  r["context_embedder.proj_in"] = {"context_embedder.proj_in"};
  for (int i = 0; i < c.refiner_blocks; ++i) {
    const std::string o = At("context_embedder.blocks", i) + ".",
                      t = At("context_embedder.token_refiner.refiner_blocks", i) + ".";
    r[o + "norm1"] = {t + "norm1"};
    r[o + "qkv"] = {t + "attn.to_q", t + "attn.to_k", t + "attn.to_v"};
    r[o + "to_out"] = {t + "attn.to_out.0"};
    r[o + "norm2"] = {t + "norm2"};
    r[o + "ff_fc1"] = {t + "ff.net.0.proj"};
    r[o + "ff_fc2"] = {t + "ff.net.2"};
    r[o + "norm_out"] = {t + "norm_out.linear"};
  }
  r["timestep_embedder"] = {"time_text_embed.timestep_embedder"};
  r["text_embedder"] = {"time_text_embed.text_embedder"};
  r["guidance_embedder"] = {"time_text_embed.guidance_embedder"};
  for (int i = 0; i < c.depth; ++i)
    JointBlockRules(r, At("transformer_blocks", i), At("transformer_blocks", i));
  for (int i = 0; i < c.single_blocks; ++i)
    SingleBlockRules(r, At("single_transformer_blocks", i), At("single_transformer_blocks", i));
  r["norm_out"] = {"norm_out.linear"};
  r["proj_out"] = {"proj_out"};
  return r;
}

}  // namespace ditbench

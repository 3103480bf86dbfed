#include "model_zoo/families/wan.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "model_zoo/layers/flow_unipc.h"
#include "model_zoo/layers/timestep_features.h"

namespace ditbench {
namespace {

constexpr double kRopeTheta = 10000.0;

torch::nn::LayerNorm AffineNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(eps));
}

// diffusers' FP32LayerNorm: the norm of x in fp32 (parameters cast up), returned in fp32.
torch::Tensor Fp32Norm(const torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  const auto& weight = norm->weight;
  return torch::layer_norm(
      x.to(torch::kFloat32), {x.size(-1)}, weight.defined() ? weight.to(torch::kFloat32) : weight,
      weight.defined() ? norm->bias.to(torch::kFloat32) : norm->bias, norm->options.eps());
}

}  // namespace

RotaryTable WanRotaryTable(int64_t head_dim, int64_t frames, int64_t rows, int64_t cols,
                           torch::Device device) {
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  // Each axis' frequencies, every one repeated for the two features of its pair.
  const int64_t spatial = 2 * (head_dim / 6);
  std::vector<torch::Tensor> freqs;
  for (int64_t dim : {head_dim - 2 * spatial, spatial, spatial})
    freqs.push_back(
        (1.0 / torch::pow(kRopeTheta, torch::arange(0, dim, 2, f64) / double(dim)))
            .repeat_interleave(2));
  auto freq = torch::cat(freqs);  // [head_dim]
  // The axis whose position each feature takes.
  const int64_t third = head_dim / 3;
  auto axis = torch::cat({torch::zeros({head_dim - 2 * third}, torch::kLong),
                          torch::ones({third}, torch::kLong),
                          torch::full({third}, 2, torch::kLong)});
  auto grid = torch::meshgrid({torch::arange(frames, f64), torch::arange(rows, f64),
                               torch::arange(cols, f64)},
                              "ij");
  auto positions = torch::stack({grid[0], grid[1], grid[2]}, -1).view({-1, 3});  // [N, 3]
  auto angles = positions.index_select(1, axis) * freq.unsqueeze(0);            // [N, head_dim]
  auto pairs = angles.view({angles.size(0), head_dim / 2, 2});
  auto cos = pairs.select(2, 0).cos().to(torch::kFloat32);
  auto sin = pairs.select(2, 1).sin().to(torch::kFloat32);
  return {torch::complex(cos, sin).to(device), false};
}

WanBlockImpl::WanBlockImpl(const ModelConfig& c) : heads_(c.heads) {
  const int64_t d = c.hidden;
  scale_shift_table_ =
      register_parameter("scale_shift_table", torch::randn({1, 6, d}) / std::sqrt(double(d)));
  const double eps = c.norm_eps;
  norm1_ = register_module("norm1", PlainNorm(d, eps));
  qkv_ = register_module("qkv", torch::nn::Linear(d, 3 * d));
  norm_q_ = register_module("norm_q", RmsNorm(d, eps));
  norm_k_ = register_module("norm_k", RmsNorm(d, eps));
  to_out_ = register_module("to_out", torch::nn::Linear(d, d));
  // cross_attn_norm false: diffusers' nn.Identity, no parameters.
  if (c.cross_attn_norm) norm2_ = register_module("norm2", AffineNorm(d, eps));
  cross_q_ = register_module("cross_q", torch::nn::Linear(d, d));
  cross_kv_ = register_module("cross_kv", torch::nn::Linear(d, 2 * d));
  cross_norm_q_ = register_module("cross_norm_q", RmsNorm(d, eps));
  cross_norm_k_ = register_module("cross_norm_k", RmsNorm(d, eps));
  cross_out_ = register_module("cross_out", torch::nn::Linear(d, d));
  norm3_ = register_module("norm3", PlainNorm(d, eps));
  ffn_fc1_ = register_module("ffn_fc1", torch::nn::Linear(d, c.mlp_width()));
  ffn_fc2_ = register_module("ffn_fc2", torch::nn::Linear(c.mlp_width(), d));
}

torch::Tensor WanBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& t6,
                                    const torch::Tensor& text, const RotaryTable& rotary,
                                    const ParallelContext& parallel) {
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2), t = text.size(1);
  const int64_t hd = d / heads_;
  const auto dtype = x.scalar_type();
  const auto f32 = torch::kFloat32;
  // Modulations, norms and residual adds in fp32, as diffusers' block computes them.
  auto mod = (scale_shift_table_.to(f32) + t6.to(f32)).unbind(1);  // 6 x [B, D]
  const auto &shift_msa = mod[0], &scale_msa = mod[1], &gate_msa = mod[2];
  const auto &c_shift_msa = mod[3], &c_scale_msa = mod[4], &c_gate_msa = mod[5];

  auto h = Modulate(Fp32Norm(norm1_, x), shift_msa, scale_msa).to(dtype);
  auto qkv = Dense(qkv_, h).chunk(3, -1);
  auto q = ApplyRotary(norm_q_(qkv[0]).view({b, n, heads_, hd}), rotary);
  auto k = ApplyRotary(norm_k_(qkv[1]).view({b, n, heads_, hd}), rotary);
  auto v = qkv[2].reshape({b, n, heads_, hd});
  auto attn = parallel.Attend(Qkv{q, k, v, {}}).image.reshape({b, n, d});
  auto out = GatedResidual(x.to(f32), gate_msa, Dense(to_out_, attn).to(f32)).to(dtype);

  // Cross-attention: local queries against the whole text; no communication.
  h = norm2_ ? Fp32Norm(norm2_, out).to(dtype) : out;
  auto cq = cross_norm_q_(Dense(cross_q_, h)).view({b, n, heads_, hd});
  auto kv = Dense(cross_kv_, text).chunk(2, -1);
  auto ck = cross_norm_k_(kv[0]).view({b, t, heads_, hd});
  auto cv = kv[1].reshape({b, t, heads_, hd});
  out = out + Dense(cross_out_, Attention(cq, ck, cv).reshape({b, n, d}));

  h = Modulate(Fp32Norm(norm3_, out), c_shift_msa, c_scale_msa).to(dtype);
  auto ff = Dense(ffn_fc2_, DenseGelu(ffn_fc1_, h));
  return GatedResidual(out.to(f32), c_gate_msa, ff.to(f32)).to(dtype);
}

WanTransformerImpl::WanTransformerImpl(const ModelConfig& c) : config_(c) {
  const int64_t d = c.hidden;
  patch_embedding_ = register_module(
      "patch_embedding",
      torch::nn::Conv3d(torch::nn::Conv3dOptions(c.in_channels, d, {c.patch_t, c.patch, c.patch})
                            .stride({c.patch_t, c.patch, c.patch})));
  time_embedder_ = register_module("time_embedder", EmbedderMlp(c.time_freq_dim, d));
  time_proj_ = register_module("time_proj", torch::nn::Linear(d, 6 * d));
  text_fc1_ = register_module("text_fc1", torch::nn::Linear(c.text_dim, d));
  text_fc2_ = register_module("text_fc2", torch::nn::Linear(d, d));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < c.depth; ++i) blocks_->push_back(WanBlock(c));
  norm_out_ = register_module("norm_out", PlainNorm(d, c.norm_eps));
  proj_out_ = register_module(
      "proj_out",
      torch::nn::Linear(d, int64_t(c.out_channels) * c.patch_t * c.patch * c.patch));
  scale_shift_table_ =
      register_parameter("scale_shift_table", torch::randn({1, 2, d}) / std::sqrt(double(d)));
}

DitState WanTransformerImpl::Embed(const torch::Tensor& latent, const torch::Tensor& time,
                                   const Conditioning& conditioning,
                                   const ParallelContext& parallel) {
  const auto& c = config_;
  TORCH_CHECK(latent.dim() == 5, c.name, " takes a [B, C, F, H, W] latent");
  const int64_t b = latent.size(0), d = c.hidden;
  const int64_t pt = c.patch_t, p = c.patch;
  const int64_t frames = latent.size(2) / pt, rows = latent.size(3) / p, cols = latent.size(4) / p;
  const auto dtype = latent.scalar_type();

  auto x = PatchEmbed3d(patch_embedding_, latent);  // tokens frame-major
  DitState state;
  state.batch = b;
  state.image = parallel.ShardSequence(x, 1);

  auto temb = time_embedder_(TimestepFeatures(time, c.time_freq_dim).to(dtype));
  state.conditioning = temb;
  state.modulation = Dense(time_proj_, torch::silu(temb)).view({b, 6, d});
  state.text = Dense(text_fc2_, DenseGelu(text_fc1_, conditioning.text));

  const std::array<int64_t, 3> grid = {frames, rows, cols};
  if (grid != grid_ || rotary_.rotation.device() != latent.device()) {
    rotary_ = WanRotaryTable(c.head_dim(), frames, rows, cols, latent.device());
    grid_ = grid;
  }
  return state;
}

// Wan's TeaCache watches the timestep embedding itself (TeaCache4Wan2.1 without
// use_ret_steps), the same on every rank.
torch::Tensor WanTransformerImpl::TeaCacheInput(const DitState& state) {
  return state.conditioning;
}

void WanTransformerImpl::RunBlock(int index, DitState& state, const ParallelContext& parallel) {
  RotaryTable rotary{parallel.ShardSequence(rotary_.rotation, 0), false};
  state.image = blocks_[index]->as<WanBlockImpl>()->forward(state.image, state.modulation,
                                                           state.text, rotary, parallel);
}

torch::Tensor WanTransformerImpl::Finish(DitState& state, const ParallelContext& parallel) {
  const auto& c = config_;
  const auto dtype = state.image.scalar_type();
  const int64_t b = state.batch, pt = c.patch_t, p = c.patch;
  const auto [frames, rows, cols] = grid_;
  auto mod = (scale_shift_table_.to(torch::kFloat32) +
              state.conditioning.to(torch::kFloat32).unsqueeze(1))
                 .unbind(1);  // shift, scale
  auto x = Modulate(Fp32Norm(norm_out_, state.image), mod[0], mod[1]).to(dtype);
  x = parallel.GatherSequence(Dense(proj_out_, x), 1);  // [B, N, pt * p * p * C]
  // Unpatchify: [B, F, H, W, pt, p, p, C] -> [B, C, F * pt, H * p, W * p].
  return x.view({b, frames, rows, cols, pt, p, p, c.out_channels})
      .permute({0, 7, 1, 4, 2, 5, 3, 6})
      .reshape({b, c.out_channels, frames * pt, rows * p, cols * p});
}

namespace {

// Wan 2.2 A14B's experts (ModelConfig::experts): `transformer` and `transformer_2` of one
// shape, as diffusers' pipeline folder names them. A model of one expert is that transformer.
class WanExpertsImpl : public torch::nn::Module {
 public:
  explicit WanExpertsImpl(const ModelConfig& config) {
    for (int i = 0; i < config.experts; ++i)
      experts_.push_back(register_module(
          i == 0 ? "transformer" : fmt::format("transformer_{}", i + 1), WanTransformer(config)));
  }
  int size() const { return static_cast<int>(experts_.size()); }
  WanTransformerImpl& at(int i) { return *experts_.at(i); }
  const WanTransformerImpl& at(int i) const { return *experts_.at(i); }

 private:
  std::vector<WanTransformer> experts_;
};
TORCH_MODULE(WanExperts);

// Wan 2.1 and 2.2: one transformer, or A14B's two experts, each step run by the one BeginStep
// picked.
class WanDit final : public DitModel {
 public:
  explicit WanDit(const ModelConfig& config) : experts_(config) {}
  const ModelConfig& config() const override { return experts_->at(0).config(); }
  void BeginStep(double model_time) override {
    // diffusers: t >= boundary_ratio x num_train_timesteps runs `transformer`.
    active_ = experts_->size() > 1 && model_time < config().expert_boundary * 1000.0 ? 1 : 0;
  }
  int expert() const override { return active_; }
  Guidance guidance() const override { return Guidance::kCfgBatch; }
  double guidance_scale() const override {
    const double scale = active_ == 0 ? config().guidance_scale : config().guidance_scale_2;
    return scale > 0 ? scale : 5.0;  // WanPipeline's default
  }
  Conditioning MakeConditioning(int64_t rows, const ImageShape&) const override {
    Conditioning c;
    c.text = torch::randn({rows, config().text_tokens, config().text_dim});
    return c;
  }
  // WanPipeline's UniPC on flow sigmas, its shift set by the clip's resolution.
  std::unique_ptr<Sampler> MakeSamplerFor(int steps, const ImageShape& shape) const override {
    return std::make_unique<FlowUniPcMultistep>(
        steps, FlowUniPcMultistep::WanFlowShift(shape.width, shape.height));
  }
  std::unique_ptr<Sampler> MakeSampler(int, int64_t) const override {
    throw std::logic_error(config().name +
                           ": Wan's flow shift depends on the resolution, not only the token "
                           "count: use MakeSamplerFor");
  }
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                 const Conditioning& conditioning, const ParallelContext& parallel) override {
    return experts_->at(active_).Embed(latent, time, conditioning, parallel);
  }
  int num_blocks() const override { return experts_->at(0).num_blocks(); }
  void RunBlock(int index, DitState& state, const ParallelContext& parallel) override {
    experts_->at(active_).RunBlock(index, state, parallel);
  }
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel) override {
    return experts_->at(active_).Finish(state, parallel);
  }
  torch::Tensor TeaCacheInput(const DitState& state) override {
    return experts_->at(active_).TeaCacheInput(state);
  }
  // One expert: the transformer itself, its weights named as a transformer folder names them.
  torch::nn::Module& module() override {
    return experts_->size() == 1 ? static_cast<torch::nn::Module&>(experts_->at(0)) : *experts_;
  }

 private:
  WanExperts experts_;
  int active_ = 0;
};

}  // namespace

std::unique_ptr<DitModel> MakeWan(const ModelConfig& config) {
  return std::make_unique<WanDit>(config);
}

WeightRules WanWeightRules(const ModelConfig& c) {
  WeightRules r;
  r["patch_embedding"] = {"patch_embedding"};
  r["time_embedder"] = {"condition_embedder.time_embedder"};
  r["time_proj"] = {"condition_embedder.time_proj"};
  r["text_fc1"] = {"condition_embedder.text_embedder.linear_1"};
  r["text_fc2"] = {"condition_embedder.text_embedder.linear_2"};
  for (int i = 0; i < c.depth; ++i) {
    const std::string o = At("blocks", i) + ".", t = o;
    r[o + "scale_shift_table"] = {t + "scale_shift_table"};
    r[o + "qkv"] = {t + "attn1.to_q", t + "attn1.to_k", t + "attn1.to_v"};
    r[o + "norm_q"] = {t + "attn1.norm_q"};
    r[o + "norm_k"] = {t + "attn1.norm_k"};
    r[o + "to_out"] = {t + "attn1.to_out.0"};
    r[o + "norm2"] = {t + "norm2"};
    r[o + "cross_q"] = {t + "attn2.to_q"};
    r[o + "cross_kv"] = {t + "attn2.to_k", t + "attn2.to_v"};
    r[o + "cross_norm_q"] = {t + "attn2.norm_q"};
    r[o + "cross_norm_k"] = {t + "attn2.norm_k"};
    r[o + "cross_out"] = {t + "attn2.to_out.0"};
    r[o + "ffn_fc1"] = {t + "ffn.net.0.proj"};
    r[o + "ffn_fc2"] = {t + "ffn.net.2"};
  }
  r["proj_out"] = {"proj_out"};
  r["scale_shift_table"] = {"scale_shift_table"};
  return r;
}

}  // namespace ditbench

#include "model_zoo/shapes/pixart_shapes.h"

#include "model_zoo/shapes/config_keys.h"

namespace ditbench {
namespace {

ModelConfig PixArt(std::string name, int depth, int hidden, int heads, int text_tokens,
                   int text_dim) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = ModelFamily::kPixArt;
  m.text_attention = TextAttention::kCross;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.text_tokens = text_tokens;
  m.text_dim = text_dim;
  return m;
}

ModelConfig WithMicroConditions(ModelConfig m) {
  m.micro_conditions = true;
  return m;
}

std::vector<ModelConfig> Presets() {
  return {
      // PixArt-alpha XL/2 (1024-MS): 28 blocks, 1152 wide, 16 heads x 72, 120 T5 tokens of
      // 4096, resolution and aspect-ratio micro-conditions.
      WithMicroConditions(PixArt("pixart-alpha", 28, 1152, 16, 120, 4096)),
      // PixArt-Sigma: the same trunk with 300 text tokens.
      PixArt("pixart-sigma", 28, 1152, 16, 300, 4096),
      // Same architecture, CPU-sized: 2 blocks, 64 wide, 4 heads x 16, 16 text tokens of 64.
      WithTinyVae(PixArt("pixart-alpha-tiny", 2, 64, 4, 16, 64)),
  };
}

ModelConfig FromDiffusers(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kPixArt;
  m.text_attention = TextAttention::kCross;
  SetWidth(keys, m, 16, 72);
  m.in_channels = keys.PositiveInt("in_channels", 4);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 8) : m.in_channels;
  m.depth = keys.PositiveInt("num_layers", 28);
  m.patch = keys.PositiveInt("patch_size", 2);
  m.sample_size = keys.PositiveInt("sample_size", 128);
  m.interpolation_scale = keys.Number("interpolation_scale", 0);
  m.micro_conditions = keys.Bool("use_additional_conditions", m.sample_size == 128);
  if (!keys.Has("caption_channels"))
    keys.Fail("caption_channels", "missing: ditbench needs the caption projection");
  m.text_dim = keys.PositiveInt("caption_channels", 4096);
  if (keys.Int("cross_attention_dim", 1152) != m.hidden)
    keys.Fail("cross_attention_dim", "must equal num_attention_heads x attention_head_dim (" +
                                         std::to_string(m.hidden) + ")");
  if (m.micro_conditions && m.hidden % 3 != 0)
    keys.Fail("use_additional_conditions", "needs a width divisible by 3, not " +
                                               std::to_string(m.hidden));
  keys.Expect("attention_bias", true);
  keys.Expect("activation_fn", "gelu-approximate");
  keys.Expect("norm_type", "ada_norm_single");
  keys.Expect("norm_elementwise_affine", false);
  m.norm_eps = keys.Number("norm_eps", 1e-6);  // the blocks' norms (the output norm's is 1e-6)
  if (!(m.norm_eps > 0 && m.norm_eps < 1)) keys.Fail("norm_eps", "expected a number in (0, 1)");
  keys.Expect("attention_type", "default");
  keys.Ignore("dropout");              // inference
  keys.Ignore("norm_num_groups");      // unused by ada_norm_single blocks
  keys.Ignore("num_embeds_ada_norm");  // unused by ada_norm_single blocks
  keys.Ignore("upcast_attention");     // scaled-dot-product attention computes in fp32 anyway
  return m;
}

// DiT blocks: self-attention, cross-attention to the text tokens, MLP; AdaLN-single.
double Flops(const ModelConfig& m, double n) {
  const double t = m.text_tokens;
  const double d = m.hidden;
  const double patch_in = double(m.in_channels) * m.patch * m.patch;
  const double patch_out = double(m.out_channels) * m.patch * m.patch;
  double block = 0;
  block += Matmul(n, d, 3 * d);          // self-attention q, k, v
  block += 2 * Matmul(n, d, n);          // scores and weighted sum (all heads together)
  block += Matmul(n, d, d);              // self-attention out projection
  block += Matmul(n, d, d);              // cross-attention q
  block += Matmul(t, d, 2 * d);          // cross-attention k, v from text tokens
  block += 2 * Matmul(n, d, t);          // cross scores and weighted sum
  block += Matmul(n, d, d);              // cross-attention out projection
  block += 2 * Matmul(n, d, m.mlp_ratio * d);  // MLP up and down

  double once = 0;
  once += Matmul(n, patch_in, d);                              // patch embedding
  once += Matmul(t, m.text_dim, d) + Matmul(t, d, d);          // caption projection
  once += Matmul(1, kTimestepFeatures, d) + Matmul(1, d, d) + Matmul(1, d, 6 * d);  // AdaLN-single
  once += Matmul(n, d, patch_out);                             // final layer
  return m.depth * block + once;
}

std::int64_t Parameters(const ModelConfig& m) {
  const std::int64_t d = m.hidden;
  const auto linear = LinearParameters;
  const std::int64_t patch_in = std::int64_t(m.in_channels) * m.patch * m.patch;
  const std::int64_t patch_out = std::int64_t(m.out_channels) * m.patch * m.patch;
  std::int64_t block = 0;
  block += 6 * d;                                       // scale-shift table
  block += linear(d, 3 * d) + linear(d, d);             // self-attention
  block += linear(d, d) + linear(d, 2 * d) + linear(d, d);  // cross-attention
  block += linear(d, m.mlp_ratio * d) + linear(m.mlp_ratio * d, d);  // MLP
  std::int64_t total = m.depth * block;
  total += patch_in * d + d;                             // patch embedding (conv)
  total += linear(256, d) + linear(d, d) + linear(d, 6 * d);  // timestep MLP + AdaLN-single
  total += linear(m.text_dim, d) + linear(d, d);         // caption projection
  if (m.micro_conditions)  // resolution and aspect-ratio embedders, d / 3 wide each
    total += 2 * (linear(256, d / 3) + linear(d / 3, d / 3));
  total += 2 * d + linear(d, patch_out);                 // final layer
  return total;
}

}  // namespace

FamilyShapes PixArtShapes() {
  return {ModelFamily::kPixArt,    "pixart", "PixArtTransformer2DModel",
          "caption_channels",      Presets,  FromDiffusers,
          NoSingleStreamBlocks,    Flops,    Parameters,
          /*has_module=*/true,
          /*tensor_parallel=*/true};
}

}  // namespace ditbench

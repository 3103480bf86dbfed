#include "model_zoo/shapes/flux_shapes.h"

#include "model_zoo/shapes/config_keys.h"
#include "model_zoo/shapes/joint_shapes.h"

namespace ditbench {
namespace {

ModelConfig Flux(std::string name, int depth, int single_blocks, int hidden, int heads,
                 int text_tokens, int text_dim, int pooled_dim, std::array<int, 3> rope_axes,
                 bool guidance_embed) {
  ModelConfig m = JointPreset(std::move(name), ModelFamily::kFlux, depth, hidden, heads, text_tokens,
                              text_dim, pooled_dim);
  m.single_blocks = single_blocks;
  m.packed_latents = true;
  m.negative_prompt = false;
  m.rope_axes = rope_axes;
  m.guidance_embed = guidance_embed;
  m.vae_scaling = 0.3611;  // Flux's VAE
  m.vae_shift = 0.1159;
  return m;
}

std::vector<ModelConfig> Presets() {
  return {
      // Flux.1: 19 double-stream + 38 single-stream blocks, 3072 wide (24 heads x 128),
      // 16 latent channels packed 2x2, 512 T5 tokens, pooled CLIP 768, RoPE axes (16, 56, 56).
      // dev distils guidance into an embedding (no negative-prompt batch), so cfg parallelism
      // does not apply; schnell has no guidance at all.
      Flux("flux-dev", 19, 38, 3072, 24, 512, 4096, 768, {16, 56, 56}, true),
      Flux("flux-schnell", 19, 38, 3072, 24, 512, 4096, 768, {16, 56, 56}, false),
      // Same architecture, CPU-sized: 2 + 2 blocks, 128 wide (4 heads x 32), 16 text tokens.
      WithTinyVae(Flux("flux-dev-tiny", 2, 2, 128, 4, 16, 64, 32, {4, 14, 14}, true)),
  };
}

ModelConfig FromDiffusers(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kFlux;
  m.text_attention = TextAttention::kJoint;
  SetWidth(keys, m, 24, 128);
  keys.Expect("patch_size", 1);
  const int packed = keys.PositiveInt("in_channels", 64);
  if (packed % 4) keys.Fail("in_channels", std::to_string(packed) + " is not 4 x latent channels");
  m.in_channels = m.out_channels = packed / 4;
  m.patch = 2;  // the 2x2 packing
  m.packed_latents = true;
  if (keys.Has("out_channels") && keys.Int("out_channels", packed) != packed)
    keys.Fail("out_channels", "must equal in_channels (" + std::to_string(packed) + ")");
  m.depth = keys.Int("num_layers", 19);
  m.single_blocks = keys.Int("num_single_layers", 38);
  if (m.depth < 0 || m.single_blocks < 0 || m.depth + m.single_blocks == 0)
    keys.Fail("num_layers", "no transformer blocks");
  m.text_dim = keys.PositiveInt("joint_attention_dim", 4096);
  m.pooled_dim = keys.PositiveInt("pooled_projection_dim", 768);
  m.guidance_embed = keys.Bool("guidance_embeds", false);
  m.negative_prompt = false;
  m.rope_axes = {16, 56, 56};
  auto axes = keys.List("axes_dims_rope");
  if (keys.Has("axes_dims_rope")) {
    if (axes.size() != 3) keys.Fail("axes_dims_rope", "expected 3 axes");
    for (int i = 0; i < 3; ++i) m.rope_axes[i] = axes[i].get<int>();
  }
  if (m.rope_axes[0] + m.rope_axes[1] + m.rope_axes[2] != m.head_dim())
    keys.Fail("axes_dims_rope", "must sum to attention_head_dim (" +
                                    std::to_string(m.head_dim()) + ")");
  m.vae_scaling = 0.3611;
  m.vae_shift = 0.1159;
  return m;
}

// Double-stream blocks, then single-stream ones; every block normalises queries and keys.
constexpr JointBlocks kBlocks{.last_text_pre_only = false, .qk_norms = true};

double Flops(const ModelConfig& m, double n) { return JointForwardFlops(m, n, kBlocks); }

std::int64_t Parameters(const ModelConfig& m) { return JointParameterCount(m, kBlocks); }

// The rotary axes split the head dimension.
std::string Problem(const ModelConfig& m) {
  const auto& a = m.rope_axes;
  if (a[0] + a[1] + a[2] != m.head_dim() || a[0] % 2 || a[1] % 2 || a[2] % 2)
    return "head dimension " + std::to_string(m.head_dim()) +
           " (hidden / heads) must equal the sum of the rotary axes " + std::to_string(a[0]) +
           " + " + std::to_string(a[1]) + " + " + std::to_string(a[2]) + " of " + m.name;
  return "";
}

}  // namespace

FamilyShapes FluxShapes() {
  return {ModelFamily::kFlux,
          "flux",
          "FluxTransformer2DModel",
          "joint_attention_dim",
          Presets,
          FromDiffusers,
          Problem,
          Flops,
          Parameters,
          /*has_module=*/true,
          /*tensor_parallel=*/true};
}

}  // namespace ditbench

#include "model_zoo/shapes/hunyuan_video_shapes.h"

#include <fmt/format.h>

#include "model_zoo/shapes/config_keys.h"
#include "model_zoo/shapes/joint_shapes.h"

namespace ditbench {
namespace {

// Checked against diffusers' HunyuanVideoTransformer3DModel (src/diffusers/models/transformers/
// transformer_hunyuan_video.py: __init__ defaults, HunyuanVideoTokenRefiner, the dual- and
// single-stream blocks) and the text-to-video configuration of its conversion script
// (scripts/convert_hunyuan_video_to_diffusers.py, TRANSFORMER_CONFIGS), diffusers main of
// 2026-08-23; the pipeline's defaults: 256 LLaMA tokens of 4096, CLIP pooled 768, distilled
// guidance (guidance_scale 6.0, true_cfg_scale 1.0: no negative-prompt batch).
ModelConfig HunyuanVideo(std::string name, int depth, int single_blocks, int hidden, int heads,
                         int text_tokens, int text_dim, int pooled_dim,
                         std::array<int, 3> rope_axes) {
  ModelConfig m = JointPreset(std::move(name), ModelFamily::kHunyuanVideo, depth, hidden, heads,
                              text_tokens, text_dim, pooled_dim);
  m.single_blocks = single_blocks;
  m.refiner_blocks = 2;
  m.negative_prompt = false;
  m.guidance_embed = true;
  m.text_mask = true;
  m.rope_axes = rope_axes;
  m.patch = 2;
  m.patch_t = 1;
  m.vae_temporal = 4;
  // AutoencoderKLHunyuanVideo: block_out_channels (128, 256, 512, 512), 8x spatial, 4x temporal;
  // it decodes a clip in temporal tiles of 5 latent frames (diffusers' framewise decoding).
  m.vae_channels = {128, 256, 512, 512};
  m.vae_decode_chunk = 5;
  m.vae_scaling = 0.476986;
  m.vae_kind = VaeKind::kHunyuanVideo;
  return m;
}

std::vector<ModelConfig> Presets() {
  return {
      // HunyuanVideo: 20 dual-stream + 40 single-stream blocks, 3072 wide (24 heads x 128),
      // 2 token-refiner blocks, RoPE axes (16, 56, 56) over (frame, row, column).
      HunyuanVideo("hunyuanvideo", 20, 40, 3072, 24, 256, 4096, 768, {16, 56, 56}),
      // Same architecture, CPU-sized: 2 + 2 blocks, 64 wide (4 heads x 16), 16 text tokens.
      [] {
        ModelConfig m =
            WithTinyVae(HunyuanVideo("hunyuanvideo-tiny", 2, 2, 64, 4, 16, 32, 16, {4, 6, 6}));
        return m;
      }(),
  };
}

ModelConfig FromDiffusers(ConfigKeys& keys) {
  ModelConfig m = HunyuanVideo("", 20, 40, 3072, 24, 256, 4096, 768, {16, 56, 56});
  SetWidth(keys, m, 24, 128);
  m.in_channels = keys.PositiveInt("in_channels", 16);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 16) : m.in_channels;
  m.depth = keys.Int("num_layers", 20);
  m.single_blocks = keys.Int("num_single_layers", 40);
  if (m.depth < 0 || m.single_blocks < 0 || m.depth + m.single_blocks == 0)
    keys.Fail("num_layers", "no transformer blocks");
  m.refiner_blocks = keys.Int("num_refiner_layers", 2);
  if (m.refiner_blocks < 0) keys.Fail("num_refiner_layers", "expected at least 0");
  // The double- and single-stream blocks' MLP is int(width x mlp_ratio) wide (the token
  // refiner's stays at 4, as diffusers builds it); a whole ratio is computed.
  const double ratio = keys.Number("mlp_ratio", 4.0);
  if (!(ratio >= 1 && ratio <= 16 && ratio == static_cast<int>(ratio)))
    keys.Fail("mlp_ratio",
              fmt::format("{} is not supported, expected a whole number from 1 to 16", ratio));
  m.mlp_ratio = static_cast<int>(ratio);
  m.patch = keys.PositiveInt("patch_size", 2);
  m.patch_t = keys.PositiveInt("patch_size_t", 1);
  keys.Expect("qk_norm", "rms_norm");
  m.guidance_embed = keys.Bool("guidance_embeds", true);
  m.text_dim = keys.PositiveInt("text_embed_dim", 4096);
  m.pooled_dim = keys.PositiveInt("pooled_projection_dim", 768);
  m.rope_theta = keys.Number("rope_theta", 256.0);
  if (!(m.rope_theta > 1)) keys.Fail("rope_theta", "expected a number above 1");
  auto axes = keys.List("rope_axes_dim");
  if (keys.Has("rope_axes_dim")) {
    if (axes.size() != 3) keys.Fail("rope_axes_dim", "expected 3 axes");
    for (int i = 0; i < 3; ++i) m.rope_axes[i] = axes[i].get<int>();
  }
  if (keys.Has("image_condition_type"))
    keys.Fail("image_condition_type", "image-to-video conditioning is not supported");
  return m;
}

// Flux's blocks: every one normalises queries and keys.
constexpr JointBlocks kBlocks{.last_text_pre_only = false, .qk_norms = true};

// The token refiner over the t text tokens: a timestep + mean-pooled text embedding, then
// self-attention blocks with an MLP of kHunyuanRefinerMlpRatio x width (whatever the blocks'
// mlp_ratio) and a gate from the embedding. (Its input projection is the joint families' text
// embedding, counted there.)
double RefinerFlops(const ModelConfig& m) {
  const double t = m.text_tokens, d = m.hidden, r = kHunyuanRefinerMlpRatio;
  const double embed = Matmul(1, kTimestepFeatures, d) + Matmul(1, d, d) +
                       Matmul(1, m.text_dim, d) + Matmul(1, d, d);
  const double block = Matmul(t, d, 3 * d) + 2 * Matmul(t, d, t) + Matmul(t, d, d) +
                       2 * Matmul(t, d, r * d) + Matmul(1, d, 2 * d);
  return embed + m.refiner_blocks * block;
}

std::int64_t RefinerParameters(const ModelConfig& m) {
  const std::int64_t d = m.hidden, r = kHunyuanRefinerMlpRatio;
  const auto linear = LinearParameters;
  const std::int64_t embed = linear(256, d) + linear(d, d) + linear(m.text_dim, d) + linear(d, d);
  const std::int64_t block = 2 * d + 4 * linear(d, d) + 2 * d + linear(d, r * d) +
                             linear(r * d, d) + linear(d, 2 * d);
  return embed + m.refiner_blocks * block;
}

double Flops(const ModelConfig& m, double n) {
  return JointForwardFlops(m, n, kBlocks) + RefinerFlops(m);
}

std::int64_t Parameters(const ModelConfig& m) {
  return JointParameterCount(m, kBlocks) + RefinerParameters(m);
}

// The rotary axes split the head dimension.
std::string Problem(const ModelConfig& m) {
  const auto& a = m.rope_axes;
  if (a[0] + a[1] + a[2] != m.head_dim() || a[0] % 2 || a[1] % 2 || a[2] % 2)
    return "head dimension " + std::to_string(m.head_dim()) +
           " (hidden / heads) must equal the sum of the even rotary axes " +
           std::to_string(a[0]) + " + " + std::to_string(a[1]) + " + " + std::to_string(a[2]) +
           " of " + m.name;
  return "";
}

}  // namespace

FamilyShapes HunyuanVideoShapes() {
  return {ModelFamily::kHunyuanVideo,
          "hunyuanvideo",
          "HunyuanVideoTransformer3DModel",
          "text_embed_dim",
          Presets,
          FromDiffusers,
          Problem,
          Flops,
          Parameters,
          /*has_module=*/true,
          /*tensor_parallel=*/true};
}

}  // namespace ditbench

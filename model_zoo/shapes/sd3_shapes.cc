#include "model_zoo/shapes/sd3_shapes.h"

#include "model_zoo/shapes/config_keys.h"
#include "model_zoo/shapes/joint_shapes.h"

namespace ditbench {
namespace {

ModelConfig Sd3(std::string name, int depth, int hidden, int heads, int text_tokens,
                int text_dim, int pooled_dim) {
  ModelConfig m = JointPreset(std::move(name), ModelFamily::kMmDit, depth, hidden, heads, text_tokens,
                              text_dim, pooled_dim);
  m.negative_prompt = true;
  m.cropped_position_table = true;
  m.vae_scaling = 1.5305;  // SD3's VAE
  m.vae_shift = 0.0609;
  return m;
}

ModelConfig WithQkNorm(ModelConfig m) {
  m.qk_norm = true;
  return m;
}

ModelConfig WithDualAttention(ModelConfig m, int leading_blocks) {
  for (int i = 0; i < leading_blocks; ++i) m.dual_attention_layers.push_back(i);
  return m;
}

ModelConfig WithPositionTable(ModelConfig m, int max_size) {
  m.pos_embed_max_size = max_size;
  return m;
}

std::vector<ModelConfig> Presets() {
  return {
      // SD3-medium: 24 MM-DiT blocks, 1536 wide (24 heads x 64), 16 latent channels, joint
      // text of 77 CLIP + 256 T5 tokens, pooled CLIP-L + CLIP-G embedding of 2048;
      // classifier-free guidance batches a negative prompt.
      Sd3("sd3-medium", 24, 1536, 24, 333, 4096, 2048),
      // SD3.5-large: 38 MM-DiT blocks, 2432 wide (38 heads x 64), RMS-normalised queries and
      // keys in both streams; text, pooled embedding and VAE as SD3-medium's.
      WithQkNorm(Sd3("sd3.5-large", 38, 2432, 38, 333, 4096, 2048)),
      // SD3.5-medium (MMDiT-X): SD3-medium's shape with RMS-normalised queries and keys, a
      // second image-only self-attention in blocks 0-12, and a 384 x 384 position table.
      WithPositionTable(WithDualAttention(WithQkNorm(Sd3("sd3.5-medium", 24, 1536, 24, 333,
                                                         4096, 2048)), 13), 384),
      // Same architecture, CPU-sized: 2 blocks, 128 wide (4 heads x 32), 16 text tokens of 64.
      WithTinyVae(Sd3("sd3-medium-tiny", 2, 128, 4, 16, 64, 32)),
      // SD3.5-medium's architecture, CPU-sized: as sd3-medium-tiny, with qk norms and dual
      // attention in block 0 (block 1, the last, has none, as in SD3.5-medium).
      WithTinyVae(WithDualAttention(WithQkNorm(Sd3("sd3.5-medium-tiny", 2, 128, 4, 16, 64, 32)),
                                    1)),
  };
}

ModelConfig FromDiffusers(ConfigKeys& keys) {
  ModelConfig m;
  m.family = ModelFamily::kMmDit;
  m.text_attention = TextAttention::kJoint;
  SetWidth(keys, m, 18, 64);
  m.sample_size = keys.PositiveInt("sample_size", 128);
  m.patch = keys.PositiveInt("patch_size", 2);
  m.in_channels = keys.PositiveInt("in_channels", 16);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 16) : m.in_channels;
  m.depth = keys.PositiveInt("num_layers", 18);
  m.text_dim = keys.PositiveInt("joint_attention_dim", 4096);
  m.pooled_dim = keys.PositiveInt("pooled_projection_dim", 2048);
  m.pos_embed_max_size = keys.PositiveInt("pos_embed_max_size", 96);
  m.cropped_position_table = true;
  if (keys.Int("caption_projection_dim", 1152) != m.hidden)
    keys.Fail("caption_projection_dim", "must equal num_attention_heads x attention_head_dim (" +
                                            std::to_string(m.hidden) + ")");
  for (const auto& layer : keys.List("dual_attention_layers")) {
    if (!layer.is_number_integer() || layer.get<int>() < 0 || layer.get<int>() >= m.depth)
      keys.Fail("dual_attention_layers", layer.dump() + " is not a block index in [0, " +
                                             std::to_string(m.depth) + ")");
    m.dual_attention_layers.push_back(layer.get<int>());
  }
  if (keys.Has("qk_norm")) {
    keys.Expect("qk_norm", "rms_norm");
    m.qk_norm = true;
  }
  m.vae_scaling = 1.5305;
  m.vae_shift = 0.0609;
  return m;
}

// MM-DiT: the last block's text stream only feeds q/k/v (context_pre_only); SD3.5 adds q/k norms.
JointBlocks Blocks(const ModelConfig& m) { return {.last_text_pre_only = true, .qk_norms = m.qk_norm}; }

double Flops(const ModelConfig& m, double n) { return JointForwardFlops(m, n, Blocks(m)); }

std::int64_t Parameters(const ModelConfig& m) { return JointParameterCount(m, Blocks(m)); }

}  // namespace

FamilyShapes SD3Shapes() {
  return {ModelFamily::kMmDit,     "mmdit", "SD3Transformer2DModel",
          "joint_attention_dim",   Presets, FromDiffusers,
          NoSingleStreamBlocks,    Flops,   Parameters,
          /*has_module=*/true,
          /*tensor_parallel=*/true};
}

}  // namespace ditbench

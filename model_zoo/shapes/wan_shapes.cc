#include "model_zoo/shapes/wan_shapes.h"

#include "model_zoo/shapes/config_keys.h"

namespace ditbench {
namespace {

// Wan's VAE for latents of m.in_channels channels, `vae_downsample` times smaller than pixels.
void SetVae(ModelConfig& m, int vae_downsample) {
  m.vae_downsample = vae_downsample;
  m.vae_temporal = 4;
  // AutoencoderKLWan's decoder: dim_mult (1, 2, 4, 4), two residual blocks per level (+1), a
  // 1x1x1 post-quantisation convolution; it decodes one latent frame at a time with a cache of
  // causal-convolution features. Wan 2.1's: base_dim 96, 16 channels, its config's default
  // latent statistics. Wan 2.2's 16x VAE (vae/config.json of Wan-AI/Wan2.2-TI2V-5B-Diffusers):
  // is_residual, decoder_base_dim 256, z_dim 48, patch_size 2 (8x from the levels, 2x from the
  // patch), its 48 latent statistics.
  m.vae_kind = vae_downsample == 16 ? VaeKind::kWanResidual : VaeKind::kWan;
  m.vae_patch = vae_downsample == 16 ? 2 : 1;
  m.vae_channels = vae_downsample == 16 ? std::vector<int>{256, 512, 1024, 1024}
                                        : std::vector<int>{96, 192, 384, 384};
  m.vae_layers = 2;
  m.vae_decode_chunk = 1;
  m.vae_post_quant_conv = true;
  if (m.in_channels == 16) {
    m.vae_latents_mean = {-0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
                          0.4134,  -0.0715, 0.5517,  -0.3632, -0.1922, -0.9497, 0.2503, -0.2921};
    m.vae_latents_std = {2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                         3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160};
  } else if (m.in_channels == 48) {
    m.vae_latents_mean = {-0.2289, -0.0052, -0.1323, -0.2339, -0.2799, 0.0174,  0.1838,  0.1557,
                          -0.1382, 0.0542,  0.2813,  0.0891,  0.1570,  -0.0098, 0.0375,  -0.1825,
                          -0.2246, -0.1207, -0.0698, 0.5109,  0.2665,  -0.2108, -0.2158, 0.2502,
                          -0.2055, -0.0322, 0.1109,  0.1567,  -0.0729, 0.0899,  -0.2799, -0.1230,
                          -0.0313, -0.1649, 0.0117,  0.0723,  -0.2839, -0.2083, -0.0520, 0.3748,
                          0.0152,  0.1957,  0.1433,  -0.2944, 0.3573,  -0.0548, -0.1681, -0.0667};
    m.vae_latents_std = {0.4765, 1.0364, 0.4514, 1.1677, 0.5313, 0.4990, 0.4818, 0.5013,
                         0.8158, 1.0344, 0.5894, 1.0901, 0.6885, 0.6165, 0.8454, 0.4978,
                         0.5759, 0.3523, 0.7135, 0.6804, 0.5833, 1.4146, 0.8986, 0.5659,
                         0.7069, 0.5338, 0.4889, 0.4917, 0.4069, 0.4999, 0.6866, 0.4093,
                         0.5709, 0.6065, 0.6415, 0.4944, 0.5726, 1.2042, 0.5458, 1.6887,
                         0.3971, 1.0600, 0.3943, 0.5537, 0.5444, 0.4089, 0.7468, 0.7744};
  }
}

// Checked against diffusers' WanTransformer3DModel (src/diffusers/models/transformers/
// transformer_wan.py, its __init__ defaults and WanTransformerBlock) and the configurations its
// conversion script writes for the public checkpoints (scripts/convert_wan_to_diffusers.py:
// "Wan-T2V-1.3B", "Wan-T2V-14B", "Wan2.2-TI2V-5B"), diffusers main of 2026-08-23.
ModelConfig Wan(std::string name, int depth, int hidden, int heads, int ffn_dim, int channels,
                int vae_downsample) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = ModelFamily::kWan;
  m.text_attention = TextAttention::kCross;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.ffn_dim = ffn_dim;
  m.patch = 2;  // patch_size (1, 2, 2)
  m.patch_t = 1;
  m.in_channels = m.out_channels = channels;
  m.text_tokens = 512;  // WanPipeline's max_sequence_length of umT5 tokens
  m.text_dim = 4096;
  m.negative_prompt = true;  // guidance_scale 5.0: the negative prompt is batched
  SetVae(m, vae_downsample);
  return m;
}

ModelConfig Tiny(ModelConfig m) {
  m = WithTinyVae(std::move(m));
  m.vae_decode_chunk = 1;
  return m;
}

std::vector<ModelConfig> Presets() {
  return {
      // Wan 2.1 T2V 1.3B: 30 blocks, 1536 wide (12 heads x 128), FFN 8960, 16 latent channels.
      Wan("wan2.1-t2v-1.3b", 30, 1536, 12, 8960, 16, 8),
      // Wan 2.1 T2V 14B: 40 blocks, 5120 wide (40 heads x 128), FFN 13824.
      Wan("wan2.1-t2v-14b", 40, 5120, 40, 13824, 16, 8),
      // Wan 2.2 T2V A14B: two experts of Wan 2.1 14B's shape and its VAE (transformer and
      // transformer_2 of Wan-AI/Wan2.2-T2V-A14B-Diffusers), the high-noise one for timesteps at
      // or above 875 (model_index.json's boundary_ratio 0.875), CFG 4.0 then 3.0 (diffusers'
      // example for it: guidance_scale 4.0, guidance_scale_2 3.0).
      [] {
        ModelConfig m = Wan("wan2.2-t2v-a14b", 40, 5120, 40, 13824, 16, 8);
        m.experts = 2;
        m.expert_boundary = 0.875;
        m.guidance_scale = 4.0;
        m.guidance_scale_2 = 3.0;
        return m;
      }(),
      // Wan 2.2 TI2V-5B: 30 blocks, 3072 wide (24 heads x 128), FFN 14336, 48 latent channels
      // from a VAE of 16x spatial compression. (Its pipeline embeds a timestep per token,
      // expand_timesteps; the estimate counts one per sample, under 2% of the FLOPs.)
      Wan("wan2.2-ti2v-5b", 30, 3072, 24, 14336, 48, 16),
      // Same architecture, CPU-sized: 2 blocks, 64 wide (4 heads x 16: a head dimension the 3D
      // rotary split takes), FFN 128, 16 text tokens of 32.
      [] {
        ModelConfig m = Tiny(Wan("wan2.1-t2v-tiny", 2, 64, 4, 128, 16, 8));
        m.text_tokens = 16;
        m.text_dim = 32;
        return m;
      }(),
      // Wan 2.2 A14B's two experts at the same size.
      [] {
        ModelConfig m = Tiny(Wan("wan2.2-t2v-a14b-tiny", 2, 64, 4, 128, 16, 8));
        m.text_tokens = 16;
        m.text_dim = 32;
        m.experts = 2;
        m.expert_boundary = 0.875;
        m.guidance_scale = 4.0;
        m.guidance_scale_2 = 3.0;
        return m;
      }(),
      // Wan 2.2 TI2V-5B's structure at the same size: 48 latent channels and the residual 16x
      // VAE (patch 2) at four levels of 32 channels.
      [] {
        ModelConfig m = Tiny(Wan("wan2.2-ti2v-tiny", 2, 64, 4, 128, 48, 16));
        m.text_tokens = 16;
        m.text_dim = 32;
        return m;
      }(),
  };
}

ModelConfig FromDiffusers(ConfigKeys& keys) {
  ModelConfig m = Wan("", 40, 5120, 40, 13824, 16, 8);
  SetWidth(keys, m, 40, 128);
  const auto patch = keys.List("patch_size");
  if (keys.Has("patch_size")) {
    if (patch.size() != 3 || !patch[0].is_number_integer() || !patch[1].is_number_integer() ||
        patch[1] != patch[2] || patch[0].get<int>() < 1 || patch[1].get<int>() < 1)
      keys.Fail("patch_size", "expected [t, p, p] of positive integers");
    m.patch_t = patch[0].get<int>();
    m.patch = patch[1].get<int>();
  }
  m.in_channels = keys.PositiveInt("in_channels", 16);
  m.out_channels = keys.Has("out_channels") ? keys.PositiveInt("out_channels", 16) : m.in_channels;
  m.text_dim = keys.PositiveInt("text_dim", 4096);
  m.ffn_dim = keys.PositiveInt("ffn_dim", 13824);
  m.depth = keys.PositiveInt("num_layers", 40);
  SetVae(m, m.in_channels == 48 ? 16 : 8);  // Wan 2.2's 48-channel VAE is 16x
  m.time_freq_dim = keys.PositiveInt("freq_dim", 256);
  if (m.time_freq_dim % 2) keys.Fail("freq_dim", "expected an even width (sines and cosines)");
  m.cross_attn_norm = keys.Bool("cross_attn_norm", true);
  keys.Expect("qk_norm", "rms_norm_across_heads");
  m.norm_eps = keys.Number("eps", 1e-6);
  if (!(m.norm_eps > 0 && m.norm_eps < 1)) keys.Fail("eps", "expected a number in (0, 1)");
  if (keys.Has("image_dim")) keys.Fail("image_dim", "image-to-video conditioning is not supported");
  if (keys.Has("added_kv_proj_dim"))
    keys.Fail("added_kv_proj_dim", "image-to-video conditioning is not supported");
  if (keys.Has("pos_embed_seq_len"))
    keys.Fail("pos_embed_seq_len", "image-to-video conditioning is not supported");
  keys.Ignore("rope_max_seq_len");  // positions past the clip's are never read
  return m;
}

// Self-attention with 3D RoPE, cross-attention to the text, MLP; one time projection (6 x d)
// shared by every block.
double Flops(const ModelConfig& m, double n) {
  const double t = m.text_tokens;
  const double d = m.hidden;
  const double f = m.mlp_width();
  const double patch = double(m.patch_t) * m.patch * m.patch;
  double block = 0;
  block += Matmul(n, d, 3 * d) + 2 * Matmul(n, d, n) + Matmul(n, d, d);  // self-attention
  block += Matmul(n, d, d) + Matmul(t, d, 2 * d) + 2 * Matmul(n, d, t) + Matmul(n, d, d);  // cross
  block += Matmul(n, d, f) + Matmul(n, f, d);  // MLP
  double once = 0;
  once += Matmul(n, m.in_channels * patch, d);                          // patch embedding
  once += Matmul(t, m.text_dim, d) + Matmul(t, d, d);                   // text projection
  once += Matmul(1, m.time_freq_dim, d) + Matmul(1, d, d) + Matmul(1, d, 6 * d);  // time
  once += Matmul(n, d, m.out_channels * patch);                         // output projection
  return m.depth * block + once;
}

std::int64_t Parameters(const ModelConfig& m) {
  const std::int64_t d = m.hidden, f = m.mlp_width();
  const auto linear = LinearParameters;
  const std::int64_t patch = std::int64_t(m.patch_t) * m.patch * m.patch;
  // q, k, v, out with biases, and RMS norms of q and k across heads (d weights each).
  const std::int64_t attention = 4 * linear(d, d) + 2 * d;
  std::int64_t block = 6 * d;            // scale-shift table
  block += 2 * attention;                // self- and cross-attention
  if (m.cross_attn_norm) block += 2 * d;  // norm2 before cross-attention
  block += linear(d, f) + linear(f, d);  // MLP
  std::int64_t total = m.depth * block;
  total += m.in_channels * patch * d + d;                              // patch embedding (conv)
  total += linear(m.time_freq_dim, d) + linear(d, d) + linear(d, 6 * d);  // time embedding
  total += linear(m.text_dim, d) + linear(d, d);                       // text projection
  total += linear(d, m.out_channels * patch) + 2 * d;                  // output, its table
  return total;
}

// The 3D rotary split: head_dim - 2 x 2(head_dim / 6) temporal and 2(head_dim / 6) per spatial
// axis, each even.
std::string Problem(const ModelConfig& m) {
  if (m.single_blocks != 0) return "single_blocks applies to Flux and HunyuanVideo models only";
  const int hd = m.head_dim();
  if (hd % 2 != 0 || hd < 6)
    return "head dimension " + std::to_string(hd) + " (hidden / heads) of " + m.name +
           " must be even and at least 6 for Wan's 3D rotary embedding";
  return "";
}

}  // namespace

FamilyShapes WanShapes() {
  return {ModelFamily::kWan,
          "wan",
          "WanTransformer3DModel",
          "text_dim",
          Presets,
          FromDiffusers,
          Problem,
          Flops,
          Parameters,
          /*has_module=*/true,
          /*tensor_parallel=*/false};
}

}  // namespace ditbench

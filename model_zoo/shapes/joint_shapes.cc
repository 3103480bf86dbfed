#include "model_zoo/shapes/joint_shapes.h"

#include "model_zoo/shapes/family.h"

namespace ditbench {

ModelConfig JointPreset(std::string name, ModelFamily family, int depth, int hidden, int heads,
                        int text_tokens, int text_dim, int pooled_dim) {
  ModelConfig m;
  m.name = std::move(name);
  m.family = family;
  m.text_attention = TextAttention::kJoint;
  m.depth = depth;
  m.hidden = hidden;
  m.heads = heads;
  m.in_channels = 16;
  m.out_channels = 16;  // no learned sigma
  m.text_tokens = text_tokens;
  m.text_dim = text_dim;
  m.pooled_dim = pooled_dim;
  m.vae_post_quant_conv = false;  // the 16-channel VAEs have none
  return m;
}

namespace {

// One MM-DiT (double-stream) block over n image and t text tokens: each stream has its own
// modulation, q/k/v, output projection and MLP; attention runs over the joint n + t sequence.
// With `text_pre_only` (SD3's last block) the text stream only feeds q/k/v.
double DoubleStreamBlockFlops(const ModelConfig& m, double n, double t, bool text_pre_only) {
  const double d = m.hidden, l = n + t, r = m.mlp_ratio;
  const double out = text_pre_only ? n : l;     // tokens that keep their output
  double f = 0;
  f += Matmul(1, d, 6 * d) + Matmul(1, d, (text_pre_only ? 2 : 6) * d);  // modulation
  f += Matmul(l, d, 3 * d);                    // q, k, v of both streams
  f += 2 * Matmul(l, d, l);                    // joint scores and weighted sum
  f += Matmul(out, d, d);                      // output projections
  f += 2 * Matmul(out, d, r * d);              // MLPs
  return f;
}

// SD3.5's second image self-attention in a dual-attention block: three more modulation
// chunks, q/k/v, scores and weighted sum over the n image tokens, output projection.
double DualAttentionFlops(const ModelConfig& m, double n) {
  const double d = m.hidden;
  return Matmul(1, d, 3 * d) + Matmul(n, d, 3 * d) + 2 * Matmul(n, d, n) + Matmul(n, d, d);
}

// One Flux single-stream block: modulation, a projection to q, k, v and the MLP input,
// attention over the joint sequence, and a projection back from [attention, MLP].
double SingleStreamBlockFlops(const ModelConfig& m, double n, double t) {
  const double d = m.hidden, l = n + t, r = m.mlp_ratio;
  return Matmul(1, d, 3 * d) + Matmul(l, d, 3 * d + r * d) + 2 * Matmul(l, d, l) +
         Matmul(l, d + r * d, d);
}

}  // namespace

double JointForwardFlops(const ModelConfig& m, double n, JointBlocks blocks) {
  const double t = m.text_tokens;
  const double d = m.hidden;
  const double patch_in = double(m.in_channels) * m.patch * m.patch;
  const double patch_out = double(m.out_channels) * m.patch * m.patch;
  double total = 0;
  for (int i = 0; i < m.depth; ++i) {
    total += DoubleStreamBlockFlops(m, n, t, blocks.last_text_pre_only && i + 1 == m.depth);
    if (m.dual_attention(i)) total += DualAttentionFlops(m, n);
  }
  total += m.single_blocks * SingleStreamBlockFlops(m, n, t);
  total += Matmul(n, patch_in, d) + Matmul(t, m.text_dim, d);  // image and text embedding
  const double embedder = Matmul(1, d, d);  // second layer of each conditioning MLP
  total += Matmul(1, kTimestepFeatures, d) + embedder;                   // timestep
  if (m.guidance_embed) total += Matmul(1, kTimestepFeatures, d) + embedder;  // guidance
  if (m.pooled_dim > 0) total += Matmul(1, m.pooled_dim, d) + embedder;  // pooled text
  total += Matmul(1, d, 2 * d) + Matmul(n, d, patch_out);  // final modulation, projection
  return total;
}

std::int64_t JointParameterCount(const ModelConfig& m, JointBlocks blocks) {
  const std::int64_t d = m.hidden;
  const auto linear = LinearParameters;
  const std::int64_t r = m.mlp_ratio, hd = m.head_dim();
  const std::int64_t qk_norms = blocks.qk_norms ? 2 * hd : 0;
  // A double-stream block's stream: modulation, q/k/v (+ q/k norms), output projection, MLP.
  const std::int64_t stream = linear(d, 6 * d) + linear(d, 3 * d) + qk_norms + linear(d, d) +
                              linear(d, r * d) + linear(r * d, d);
  const std::int64_t text_pre_only = linear(d, 2 * d) + linear(d, 3 * d) + qk_norms;
  const std::int64_t single = linear(d, 3 * d) + linear(d, 3 * d + r * d) + qk_norms +
                              linear(d + r * d, d);
  // SD3.5's dual attention: three more modulation chunks, q/k/v (+ norms), output projection.
  const std::int64_t dual = 3 * d * d + 3 * d + linear(d, 3 * d) + qk_norms + linear(d, d);
  std::int64_t total = 0;
  for (int i = 0; i < m.depth; ++i)
    total += stream + (blocks.last_text_pre_only && i + 1 == m.depth ? text_pre_only : stream);
  total += std::int64_t(m.dual_attention_blocks()) * dual;
  total += m.single_blocks * single;
  total += linear(std::int64_t(m.in_channels) * m.patch * m.patch, d);  // image embedding
  total += linear(m.text_dim, d);                                      // text embedding
  total += linear(256, d) + linear(d, d);                              // timestep
  if (m.guidance_embed) total += linear(256, d) + linear(d, d);
  if (m.pooled_dim > 0) total += linear(m.pooled_dim, d) + linear(d, d);
  total += linear(d, 2 * d) + linear(d, std::int64_t(m.out_channels) * m.patch * m.patch);
  return total;
}

}  // namespace ditbench

#include "model_zoo/shapes/memory_traffic.h"

namespace ditbench {

ForwardElements ForwardMemoryElements(const ModelConfig& m, const ImageShape& shape,
                                      int samples) {
  const double n = double(ImageTokens(m, shape)), t = m.text_tokens, h = m.heads, d = m.hidden;
  const bool joint = m.text_attention == TextAttention::kJoint;
  ForwardElements e;
  // Blocks over the image (and, joint, the text) tokens: one attention each, over the joint
  // sequence or over the image tokens plus a cross-attention to the text.
  const double l = joint ? n + t : n;
  const double block_scores = joint ? h * l * l : h * (n * n + n * t);
  const int blocks = m.total_blocks();
  e.scores = blocks * block_scores + m.dual_attention_blocks() * h * n * n;
  e.activations = blocks * l * d + m.dual_attention_blocks() * n * d;
  // HunyuanVideo's token refiner: self-attention over the text tokens.
  e.scores += m.refiner_blocks * h * t * t;
  e.activations += m.refiner_blocks * t * d;
  e.scores *= samples;
  e.activations *= samples;
  return e;
}

int PaddedHeads(int heads, int tp, int ulysses) {
  const int per_rank = heads / tp;
  return (per_rank + ulysses - 1) / ulysses * ulysses * tp;
}

double HeadPaddingFlops(const ModelConfig& m, const ImageShape& shape, int samples, int tp,
                        int ulysses) {
  const int padded = PaddedHeads(m.heads, tp, ulysses);
  if (padded == m.heads) return 0;
  const double n = double(ImageTokens(m, shape)), t = m.text_tokens;
  const double l = m.text_attention == TextAttention::kJoint ? n + t : n;
  // Scores of one padded head over every attention Ulysses splits.
  const double per_head = m.total_blocks() * l * l + m.dual_attention_blocks() * n * n;
  return 4.0 * m.head_dim() * per_head * (padded - m.heads) * samples;
}

}  // namespace ditbench

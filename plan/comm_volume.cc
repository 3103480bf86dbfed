#include "plan/comm_volume.h"

#include <algorithm>

#include "experiments/trial_rows.h"
#include "model_zoo/shapes/memory_traffic.h"

namespace ditbench {
namespace {

constexpr std::size_t kA2a = std::size_t(Collective::kAllToAll);
constexpr std::size_t kP2p = std::size_t(Collective::kSendRecv);
constexpr std::size_t kGather = std::size_t(Collective::kAllGather);
constexpr std::size_t kReduce = std::size_t(Collective::kAllReduce);

// Adds `count` collectives of kind `kind` moving `bytes` in all (nothing when no bytes move);
// the total is the caller's to keep.
void Add(CommPerStep& comm, std::size_t kind, double bytes, double count) {
  if (bytes <= 0) return;
  comm.bytes[kind] += bytes;
  comm.calls[kind] += count;
}

// a + b kind by kind, the totals added.
CommPerStep operator+(CommPerStep a, const CommPerStep& b) {
  for (std::size_t k = 0; k < kCollectiveKinds; ++k) {
    a.bytes[k] += b.bytes[k];
    a.calls[k] += b.calls[k];
  }
  a.total_bytes += b.total_bytes;
  return a;
}

// (x * a + y * b) / n kind by kind and for the total.
CommPerStep Mean(const CommPerStep& a, double x, const CommPerStep& b, double y, double n) {
  CommPerStep mean;
  for (std::size_t k = 0; k < kCollectiveKinds; ++k) {
    mean.bytes[k] = (x * a.bytes[k] + y * b.bytes[k]) / n;
    mean.calls[k] = (x * a.calls[k] + y * b.calls[k]) / n;
  }
  mean.total_bytes = (x * a.total_bytes + y * b.total_bytes) / n;
  return mean;
}

// Tensor parallelism's all-reduces in block i (model_zoo/weights/weight_shard.h): each
// row-parallel layer's partial output is all-reduced over the tp group, 2 (tp-1)/tp of it sent.
// A block with cross-attention (PixArt) reduces three outputs over its `image_rows` rows of
// tokens: self-attention, cross-attention and MLP; a joint block (SD3, Flux, HunyuanVideo) its
// attention's and its MLP's output over the image and over the text stream (four; SD3's last
// block, whose text stream only feeds attention, two), and SD3.5's second attention one more
// over the image; a single-stream block its output over the image and over the text.
CommPerStep TensorParallelBlock(const ModelConfig& m, const TrialConfig& c, int i,
                                double image_rows, double patches) {
  CommPerStep comm;
  if (c.tp == 1) return comm;
  const bool joint = m.text_attention == TextAttention::kJoint;
  const double share = 2.0 * (c.tp - 1) / c.tp, row = m.hidden * BytesPerElement(c.precision);
  const double image = image_rows * row * share;
  const double text = joint ? RowsPerRank(c, m) * m.text_tokens * row * share : 0;
  if (!joint) {
    Add(comm, kReduce, 3 * image, 3 * patches);
  } else if (i < m.depth) {
    const bool text_out = !(m.family == ModelFamily::kMmDit && i == m.depth - 1);
    const int dual = m.dual_attention(i) ? 1 : 0;
    Add(comm, kReduce, (2 + dual) * image + (text_out ? 2 * text : 0),
        (2 + dual + (text_out ? 2 : 0)) * patches);
  } else {
    Add(comm, kReduce, image + text, 2 * patches);
  }
  comm.total_bytes = comm.bytes[kReduce];
  return comm;
}

// The width a rank attends with per token: heads / tp of the model's, padded to a multiple of
// the Ulysses degree (pad_heads); what the sequence-parallel collectives move of each token.
double AttendedWidth(const ModelConfig& m, const TrialConfig& c) {
  return double(m.hidden) / c.tp * PaddedHeads(m.heads, c.tp, c.ulysses) / m.heads;
}

}  // namespace

std::optional<double> CommBytesPerStep(const ModelConfig& m, const TrialConfig& c) {
  const auto comm = CommByKindPerStep(m, c);
  if (!comm) return std::nullopt;
  return comm->total_bytes;
}

std::optional<CommPerStep> CommByKindPerStep(const ModelConfig& m, const TrialConfig& c) {
  const bool joint = m.text_attention == TextAttention::kJoint;
  const double e = BytesPerElement(c.precision);
  const double tokens = double(ImageTokens(m, c.image_shape()));
  // Latent elements per channel of one sample: frames x rows x columns.
  const double latent = double(LatentFrames(m, c.frames)) * (c.image_height() / m.vae_downsample) *
                        (c.resolution / m.vae_downsample);
  const int u = c.ulysses, r = c.ring, s = u * r, p = c.pipefusion;
  const double d = m.hidden, head_width = AttendedWidth(m, c);
  // Rows through the transformer on one rank: CFG batches the negative prompt unless cfg=2.
  const double rows = RowsPerRank(c, m);
  const double local = tokens / s;
  // The joint families' text stream, replicated on every rank: one copy of it.
  const double text = joint ? rows * m.text_tokens * d * e : 0;

  // One attention over the image tokens on one rank: Ulysses' two all-to-alls (q, k, v out; the
  // output back), and ring's R - 1 transfers of a K/V block (R's share of the tokens, U's share
  // of the heads).
  const double ulysses_block = u > 1 ? 4.0 * rows * local * head_width * e * (u - 1) / u : 0;
  const double ring_block = r > 1 ? (r - 1) * 2.0 * rows * (tokens / r) * (head_width / u) * e : 0;
  // Joint attention (SD3, Flux: every block, single-stream ones included): the text tokens are
  // replicated, so Ulysses slices their heads without communication, ring passes only image
  // K/V, and the text output is all-gathered over the Ulysses group (all heads on every rank).
  const double text_gather =
      joint && u > 1 ? rows * m.text_tokens * (head_width / u) * e * (u - 1) : 0;
  // Block i's attentions in a step whose sequence passes in `patches` patches (1: synchronous).
  // In a patch step each of the M patches passes every block once: Ulysses moves the patch's
  // tokens (M patches: the whole sequence once) but gathers the text output for each patch,
  // and ring circulates the whole KV cache (this ring rank's chunk of every patch) for each
  // patch: M times a synchronous step's. SD3.5's dual-attention blocks attend a second time,
  // over the image tokens only.
  // Ulysses: one all-to-all out (q, k, v stacked) and one back; ring: one K/V transfer per
  // ring step; joint text: one all-gather.
  const auto block = [&](int i, double patches) {
    CommPerStep comm;
    const int attentions = joint && m.dual_attention(i) ? 2 : 1;
    Add(comm, kA2a, attentions * ulysses_block, attentions * patches * 2);
    Add(comm, kP2p, attentions * patches * ring_block, attentions * patches * (r - 1));
    if (joint) Add(comm, kGather, patches * text_gather, patches);
    const double image = ulysses_block + patches * ring_block;
    comm.total_bytes =
        joint ? image + patches * text_gather + (m.dual_attention(i) ? image : 0) : image;
    return comm + TensorParallelBlock(m, c, i, rows * local, patches);
  };

  const double out_channels = m.out_channels, patch_area = double(m.patch_t) * m.patch * m.patch;
  const double gather_output = s > 1 ? rows * local * patch_area * out_channels * e * (s - 1) : 0;
  const double gather_hidden = s > 1 ? rows * local * d * e * (s - 1) : 0;
  const double cfg_gather =
      c.cfg == 2 ? double(c.batch) * m.in_channels * latent * e : 0;

  const int steps = c.scope == Scope::kForward ? 1 : c.steps;
  const int blocks = m.total_blocks();
  CommPerStep cfg_comm;
  Add(cfg_comm, kGather, cfg_gather, 1);
  if (p == 1) {
    CommPerStep sum;
    for (int i = 0; i < blocks; ++i) sum = sum + block(i, 1);
    Add(sum, kGather, gather_output, 1);
    Add(sum, kGather, cfg_gather, 1);
    sum.total_bytes = sum.total_bytes + gather_output + cfg_gather;
    return sum;
  }

  // PipeFusion: stage k runs blocks/p blocks (the first blocks % p stages one more), sends its
  // activations on (all but the last; the joint families' text stream with them, once per
  // patch in a patch step), and the last stage gathers and broadcasts the output.
  const int sync_steps = std::min(std::max(c.pipefusion_warmup_steps, 0), steps);
  const double broadcast = (p - 1) * rows * out_channels * latent * e;
  const double patches = c.effective_pipefusion_patches();
  CommPerStep worst;
  for (int stage = 0, begin = 0; stage < p; ++stage) {
    const int end = begin + blocks / p + (stage < blocks % p ? 1 : 0);
    const bool last = stage == p - 1;
    CommPerStep sync = cfg_comm, patched = cfg_comm;
    sync.total_bytes = patched.total_bytes = cfg_gather;
    for (int i = begin; i < end; ++i) {
      sync = sync + block(i, 1);
      patched = patched + block(i, patches);
    }
    if (last) {
      Add(sync, kGather, broadcast, 1);
      Add(sync, kGather, gather_output, 1);
      Add(patched, kGather, broadcast, 1);
      Add(patched, kGather, gather_hidden, 1);
      sync.total_bytes += broadcast + gather_output;
      patched.total_bytes += broadcast + gather_hidden;
    } else {
      Add(sync, kP2p, rows * local * d * e + text, joint ? 2 : 1);
      Add(patched, kP2p, rows * local * d * e + patches * text, patches * (joint ? 2 : 1));
      sync.total_bytes += rows * local * d * e + text;
      patched.total_bytes += rows * local * d * e + patches * text;
    }
    const CommPerStep mean = Mean(sync, sync_steps, patched, steps - sync_steps, steps);
    if (mean.total_bytes > worst.total_bytes) worst = mean;
    begin = end;
  }
  return worst;
}

}  // namespace ditbench

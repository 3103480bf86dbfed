#include "plan/comm_volume.h"

#include <algorithm>

namespace ditbench {
namespace {

CommVolume& operator+=(CommVolume& a, const CommVolume& b) {
  a.all_to_all += b.all_to_all;
  a.ring += b.ring;
  a.gather += b.gather;
  a.all_to_all_calls += b.all_to_all_calls;
  a.ring_calls += b.ring_calls;
  a.gather_calls += b.gather_calls;
  return a;
}

CommVolume Scaled(CommVolume v, double k) {
  v.all_to_all *= k;
  v.ring *= k;
  v.gather *= k;
  v.all_to_all_calls *= k;
  v.ring_calls *= k;
  v.gather_calls *= k;
  return v;
}

// A gather-kind collective of `bytes` (none when there is nothing to send).
CommVolume Gather(double bytes, double calls = 1) {
  CommVolume v;
  if (bytes > 0) {
    v.gather = bytes;
    v.gather_calls = calls;
  }
  return v;
}

}  // namespace

std::optional<double> CommBytesPerStep(const ModelConfig& m, const TrialConfig& c) {
  const std::optional<CommVolume> v = CommVolumePerStep(m, c);
  if (!v) return std::nullopt;
  return v->bytes();
}

std::optional<CommVolume> CommVolumePerStep(const ModelConfig& m, const TrialConfig& c) {
  const bool joint = m.text_attention == TextAttention::kJoint;
  const double e = BytesPerElement(c.precision);
  const double tokens = double(ImageTokens(m, c.resolution));
  const double latent = LatentSize(m, c.resolution);
  const int u = c.ulysses, r = c.ring, s = u * r, p = c.pipefusion;
  const double d = m.hidden;
  // Rows through the transformer on one rank: CFG batches the negative prompt unless cfg=2.
  const double rows = double(c.batch) * (m.negative_prompt && c.cfg == 1 ? 2 : 1);
  const double local = tokens / s;
  // The joint families' text stream, replicated on every rank: one copy of it.
  const double text = joint ? rows * m.text_tokens * d * e : 0;

  // One attention over the image tokens on one rank: Ulysses' two all-to-alls (q, k, v out; the
  // output back), and ring's R - 1 transfers of a K/V block (R's share of the tokens, U's share
  // of the heads).
  const double ulysses_block = u > 1 ? 4.0 * rows * local * d * e * (u - 1) / u : 0;
  const double ring_block = r > 1 ? (r - 1) * 2.0 * rows * (tokens / r) * (d / u) * e : 0;
  // Joint attention (SD3, Flux: every block, single-stream ones included): the text tokens are
  // replicated, so Ulysses slices their heads without communication, ring passes only image
  // K/V, and the text output is all-gathered over the Ulysses group (all heads on every rank).
  const double text_gather = joint && u > 1 ? rows * m.text_tokens * (d / u) * e * (u - 1) : 0;
  // Block i's attentions in a step whose sequence passes in `patches` patches (1: synchronous).
  // In a patch step each of the M patches passes every block once: Ulysses moves the patch's
  // tokens (M patches: the whole sequence once) but gathers the text output for each patch,
  // and ring circulates the whole KV cache (this ring rank's chunk of every patch) for each
  // patch: M times a synchronous step's. SD3.5's dual-attention blocks attend a second time,
  // over the image tokens only.
  const auto block = [&](int i, double patches) {
    CommVolume image;
    if (ulysses_block > 0) {
      image.all_to_all = ulysses_block;
      image.all_to_all_calls = 4 * patches;  // q, k, v out and the output back, per patch
    }
    if (ring_block > 0) {
      image.ring = patches * ring_block;
      image.ring_calls = patches * (r - 1);
    }
    if (!joint) return image;
    CommVolume v = image;
    v += Gather(patches * text_gather, patches);
    if (m.dual_attention(i)) v += image;
    return v;
  };

  const double out_channels = m.out_channels, patch_area = double(m.patch) * m.patch;
  const double gather_output = s > 1 ? rows * local * patch_area * out_channels * e * (s - 1) : 0;
  const double gather_hidden = s > 1 ? rows * local * d * e * (s - 1) : 0;
  const double cfg_gather =
      c.cfg == 2 ? double(c.batch) * m.in_channels * latent * latent * e : 0;

  const int steps = c.scope == Scope::kForward ? 1 : c.steps;
  const int blocks = m.total_blocks();
  if (p == 1) {
    CommVolume sum;
    for (int i = 0; i < blocks; ++i) sum += block(i, 1);
    sum += Gather(gather_output);
    sum += Gather(cfg_gather);
    return sum;
  }

  // PipeFusion: stage k runs blocks/p blocks (the first blocks % p stages one more), sends its
  // activations on (all but the last; the joint families' text stream with them, once per
  // patch in a patch step), and the last stage gathers and broadcasts the output.
  const int sync_steps = std::min(std::max(c.pipefusion_warmup_steps, 0), steps);
  const double broadcast = (p - 1) * rows * out_channels * latent * latent * e;
  const double patches = c.effective_pipefusion_patches();
  CommVolume worst;
  for (int stage = 0, begin = 0; stage < p; ++stage) {
    const int end = begin + blocks / p + (stage < blocks % p ? 1 : 0);
    const bool last = stage == p - 1;
    CommVolume sync = Gather(cfg_gather), patched = Gather(cfg_gather);
    for (int i = begin; i < end; ++i) {
      sync += block(i, 1);
      patched += block(i, patches);
    }
    if (last) {
      sync += Gather(broadcast);
      sync += Gather(gather_output);
      patched += Gather(broadcast);
      patched += Gather(gather_hidden);
    } else {
      sync += Gather(rows * local * d * e + text);
      patched += Gather(rows * local * d * e + patches * text, patches);
    }
    CommVolume mean = Scaled(sync, double(sync_steps) / steps);
    mean += Scaled(patched, double(steps - sync_steps) / steps);
    if (mean.bytes() > worst.bytes()) worst = mean;
    begin = end;
  }
  return worst;
}

}  // namespace ditbench

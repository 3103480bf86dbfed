#include "experiments/comm_volume.h"

#include <algorithm>

namespace ditbench {
namespace {

double ElementBytes(Precision p) {
  return p == Precision::kBf16 || p == Precision::kFp16 ? 2.0 : 4.0;
}

}  // namespace

std::optional<double> CommBytesPerStep(const ModelConfig& m, const TrialConfig& c) {
  const bool joint = m.family != ModelFamily::kPixArt;
  // PipeFusion of the joint families (stages pass the text stream on too) is not modelled yet.
  if (joint && c.pipefusion > 1) return std::nullopt;
  const double e = ElementBytes(c.precision);
  const double tokens = double(ImageTokens(m, c.resolution));
  const double latent = LatentSize(m, c.resolution);
  const int u = c.ulysses, r = c.ring, s = u * r, p = c.pipefusion;
  const double d = m.hidden;
  // Rows through the transformer on one rank: CFG batches the negative prompt unless cfg=2.
  const double rows = double(c.batch) * (m.negative_prompt && c.cfg == 1 ? 2 : 1);
  const double local = tokens / s;

  // One block on one rank: Ulysses' two all-to-alls (q, k, v out; the output back), and ring's
  // R - 1 transfers of a K/V block (R's share of the tokens, U's share of the heads).
  const double ulysses_block = u > 1 ? 4.0 * rows * local * d * e * (u - 1) / u : 0;
  const double ring_block = r > 1 ? (r - 1) * 2.0 * rows * (tokens / r) * (d / u) * e : 0;
  const double block = ulysses_block + ring_block;
  // Joint attention (SD3, Flux: every block, single-stream ones included): the text tokens are
  // replicated, so Ulysses slices their heads without communication, ring passes only image
  // K/V, and the text output is all-gathered over the Ulysses group (all heads on every rank).
  const double text_gather = u > 1 ? rows * m.text_tokens * (d / u) * e * (u - 1) : 0;
  const double joint_block = block + text_gather;

  const double out_channels = m.out_channels, patch_area = double(m.patch) * m.patch;
  const double gather_output = s > 1 ? rows * local * patch_area * out_channels * e * (s - 1) : 0;
  const double gather_hidden = s > 1 ? rows * local * d * e * (s - 1) : 0;
  const double cfg_gather =
      c.cfg == 2 ? double(c.batch) * m.in_channels * latent * latent * e : 0;

  const int steps = c.scope == Scope::kForward ? 1 : c.steps;
  const int blocks = m.total_blocks();
  // SD3.5's dual-attention blocks attend a second time, over the image tokens only.
  if (joint)
    return blocks * joint_block + m.dual_attention_blocks() * block + gather_output + cfg_gather;
  if (p == 1) return blocks * block + gather_output + cfg_gather;

  // PipeFusion: stage k runs blocks/p blocks (the first blocks % p stages one more), sends its
  // activations on (all but the last), and the last stage gathers and broadcasts the output.
  const int sync_steps = std::min(std::max(c.pipefusion_warmup_steps, 0), steps);
  // In a patch step each of the M patches passes every block once: Ulysses moves the patch's
  // tokens (M patches: the whole sequence once), but ring circulates the whole KV cache (this
  // ring rank's chunk of every patch) for each patch: M times a synchronous step's.
  const double broadcast = (p - 1) * rows * out_channels * latent * latent * e;
  const double patches = c.effective_pipefusion_patches();
  const double patched_block = ulysses_block + patches * ring_block;
  double worst = 0;
  for (int stage = 0; stage < p; ++stage) {
    const int stage_blocks = blocks / p + (stage < blocks % p ? 1 : 0);
    const bool last = stage == p - 1;
    const double common = (last ? broadcast : rows * local * d * e) + cfg_gather;
    const double sync = stage_blocks * block + common + (last ? gather_output : 0);
    const double patched = stage_blocks * patched_block + common + (last ? gather_hidden : 0);
    worst = std::max(worst, (sync_steps * sync + (steps - sync_steps) * patched) / steps);
  }
  return worst;
}

}  // namespace ditbench

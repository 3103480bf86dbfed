#include "model_zoo/shapes/vae_decode_flops.h"

#include <algorithm>

namespace ditbench {
namespace {

// A convolution (or linear) from `in` to `out` channels with `taps` kernel taps, at `positions`
// output positions.
double Conv(double in, double out, double taps, double positions) {
  return 2.0 * in * out * taps * positions;
}

// A ResNet block: two convolutions, and a 1x1 shortcut where the width changes.
double Resnet(double in, double out, double taps, double positions) {
  return Conv(in, out, taps, positions) + Conv(out, out, taps, positions) +
         (in != out ? Conv(in, out, 1, positions) : 0.0);
}

// Single-head attention of width `c` over `n` positions, `groups` times: the query, key, value
// and output projections, and the two n x n products.
double Attention(double c, double n, double groups) {
  return groups * (4.0 * Conv(c, c, 1, n) + 2.0 * 2.0 * n * n * c);
}

// diffusers' AutoencoderKL (images): 3x3 convolutions, every level but the last upsampled 2x by
// a convolution that keeps its width.
double ImageVaeFlops(const ModelConfig& m, double rows, double cols) {
  const auto& widths = m.vae_channels;
  const double z = m.in_channels, top = widths.back();
  double pixels = rows * cols;
  double flops = m.vae_post_quant_conv ? Conv(z, z, 1, pixels) : 0.0;
  flops += Conv(z, top, 9, pixels) + 2 * Resnet(top, top, 9, pixels) + Attention(top, pixels, 1);
  double in = top;
  for (int level = static_cast<int>(widths.size()) - 1; level >= 0; --level) {
    const double out = widths[level];
    for (int i = 0; i <= m.vae_layers; ++i, in = out) flops += Resnet(in, out, 9, pixels);
    if (level > 0) {
      pixels *= 4;
      flops += Conv(out, out, 9, pixels);
    }
  }
  return flops + Conv(widths.front(), 3, 9, pixels);
}

// Temporal upsampling levels of a 4x temporal VAE: log2(vae_temporal).
int TemporalLevels(const ModelConfig& m) {
  int levels = 0;
  for (int t = m.vae_temporal; t > 1; t /= 2) ++levels;
  return levels;
}

// AutoencoderKLWan: causal 3x3x3 convolutions; the mid block's attention per frame; levels from
// the widest, each but the last upsampled 2x in space by a 3x3 convolution that halves the width
// (Wan 2.2's residual levels: keeps it; their shortcuts only repeat values), the first
// TemporalLevels ones also in time by a 3-tap convolution that doubles the channels into
// frames, skipped for the first latent frame; the last convolution to 3 x vae_patch^2 channels.
double WanVaeFlops(const ModelConfig& m, double latent_frames, double rows, double cols) {
  const bool residual = m.vae_kind == VaeKind::kWanResidual;
  const auto& widths = m.vae_channels;
  const int levels = static_cast<int>(widths.size()), temporal = TemporalLevels(m);
  const double z = m.in_channels, top = widths.back();
  double frames = latent_frames, pixels = rows * cols;
  double flops = Conv(z, z, 1, frames * pixels) + Conv(z, top, 27, frames * pixels) +
                 2 * Resnet(top, top, 27, frames * pixels) + Attention(top, pixels, frames);
  double in = top;
  for (int i = 0; i < levels; ++i) {
    const double out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) flops += Resnet(in, out, 27, frames * pixels);
    if (i + 1 == levels) break;
    if (i < temporal) {
      flops += Conv(out, 2 * out, 3, (frames - 1) * pixels);
      frames = 1 + 2 * (frames - 1);
    }
    pixels *= 4;
    in = residual ? out : out / 2;
    flops += Conv(out, in, 9, frames * pixels);
  }
  return flops + Conv(widths.front(), 3.0 * m.vae_patch * m.vae_patch, 27, frames * pixels);
}

// AutoencoderKLHunyuanVideo's decode of one temporal tile: causal 3x3x3 convolutions, the mid
// block's attention over every pixel of the tile, every level but the last upsampled 2x in
// space (the two before the last also doubling the frames after the first) by a convolution that
// keeps its width.
double HunyuanVideoVaeTileFlops(const ModelConfig& m, double latent_frames, double rows,
                                double cols) {
  const auto& widths = m.vae_channels;
  const int levels = static_cast<int>(widths.size());
  const double z = m.in_channels, top = widths.back();
  double frames = latent_frames, pixels = rows * cols;
  double flops = Conv(z, z, 1, frames * pixels) + Conv(z, top, 27, frames * pixels) +
                 2 * Resnet(top, top, 27, frames * pixels) + Attention(top, frames * pixels, 1);
  double in = top;
  for (int i = 0; i < levels; ++i) {
    const double out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) flops += Resnet(in, out, 27, frames * pixels);
    if (i + 1 == levels) break;
    if (i >= levels - 3) frames = 1 + 2 * (frames - 1);
    pixels *= 4;
    flops += Conv(out, out, 27, frames * pixels);
  }
  return flops + Conv(widths.front(), 3, 27, frames * pixels);
}

// Its default temporal tiles: 5 latent frames every 3 when the clip has more than 4.
double HunyuanVideoVaeFlops(const ModelConfig& m, int latent_frames, double rows, double cols) {
  constexpr int kTile = 4, kStride = 3;
  if (latent_frames <= kTile) return HunyuanVideoVaeTileFlops(m, latent_frames, rows, cols);
  double flops = 0;
  for (int i = 0; i < latent_frames; i += kStride)
    flops += HunyuanVideoVaeTileFlops(m, std::min(kTile + 1, latent_frames - i), rows, cols);
  return flops;
}

}  // namespace

double VaeDecodeFlops(const ModelConfig& model, const ImageShape& shape) {
  if (model.vae_channels.empty() || model.vae_downsample <= 0) return 0;
  const double rows = shape.height / model.vae_downsample, cols = shape.width / model.vae_downsample;
  const int frames = LatentFrames(model, shape.frames);
  switch (model.vae_kind) {
    case VaeKind::kAutoencoderKL: return ImageVaeFlops(model, rows, cols);
    case VaeKind::kWan:
    case VaeKind::kWanResidual: return WanVaeFlops(model, frames, rows, cols);
    case VaeKind::kHunyuanVideo: return HunyuanVideoVaeFlops(model, frames, rows, cols);
  }
  return 0;
}

}  // namespace ditbench

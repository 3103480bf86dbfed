#include "model_zoo/shapes/vae_shapes.h"

#include <algorithm>

namespace ditbench {
namespace {

// Temporal upsampling levels of a 4x temporal VAE: log2(vae_temporal).
int TemporalLevels(const ModelConfig& m) {
  int levels = 0;
  for (int t = m.vae_temporal; t > 1; t /= 2) ++levels;
  return levels;
}

// A convolution's weights and biases: `taps` kernel taps from `in` to `out` channels.
std::int64_t ConvParameters(std::int64_t in, std::int64_t out, std::int64_t taps) {
  return in * out * taps + out;
}

// AutoencoderKLWan's decoder (model_zoo/families/wan_vae.h): causal 3D convolutions of kernel 3,
// RMS norms with one gain per channel, levels from the widest. Wan 2.1's: every level but the
// last halves the width in its upsampler, which the next level's first block takes. Wan 2.2's
// residual one: the upsamplers keep the width (their shortcuts have no parameters) and the last
// convolution gives 3 x vae_patch^2 channels.
std::int64_t WanVaeDecoderParameterCount(const ModelConfig& m) {
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return in + ConvParameters(in, out, 27) + out + ConvParameters(out, out, 27) +
           (in != out ? ConvParameters(in, out, 1) : 0);
  };
  const bool residual = m.vae_kind == VaeKind::kWanResidual;
  const auto& widths = m.vae_channels;
  const std::int64_t z = m.in_channels, top = widths.back();
  const int levels = static_cast<int>(widths.size());
  const int temporal = TemporalLevels(m);
  std::int64_t total = ConvParameters(z, z, 1) + ConvParameters(z, top, 27) + 2 * resnet(top, top);
  // The mid attention: norm, qkv, proj.
  total += top + ConvParameters(top, 3 * top, 1) + ConvParameters(top, top, 1);
  std::int64_t in = top;
  for (int i = 0; i < levels; ++i) {
    const std::int64_t out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) total += resnet(in, out);
    if (i + 1 < levels) {
      const std::int64_t upsampled = residual ? out : out / 2;
      total += ConvParameters(out, upsampled, 9);                  // the 2D upsampler
      if (i < temporal) total += ConvParameters(out, 2 * out, 3);  // and the temporal one
      in = upsampled;
    }
  }
  const std::int64_t pixels = 3 * std::int64_t(m.vae_patch) * m.vae_patch;
  return total + widths.front() + ConvParameters(widths.front(), pixels, 27);
}

// AutoencoderKLHunyuanVideo's decoder (model_zoo/families/hunyuan_video_vae.h): causal 3D
// convolutions of kernel 3, GroupNorms, every level but the last upsampled by a convolution that
// keeps its width.
std::int64_t HunyuanVideoVaeDecoderParameterCount(const ModelConfig& m) {
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return 2 * in + ConvParameters(in, out, 27) + 2 * out + ConvParameters(out, out, 27) +
           (in != out ? ConvParameters(in, out, 1) : 0);
  };
  const auto& widths = m.vae_channels;
  const std::int64_t z = m.in_channels, top = widths.back();
  const int levels = static_cast<int>(widths.size());
  std::int64_t total = ConvParameters(z, z, 1) + ConvParameters(z, top, 27) + 2 * resnet(top, top);
  total += 2 * top + 4 * (top * top + top);  // mid attention: group norm, q, k, v, out
  std::int64_t in = top;
  for (int i = 0; i < levels; ++i) {
    const std::int64_t out = widths[levels - 1 - i];
    for (int j = 0; j <= m.vae_layers; ++j, in = out) total += resnet(in, out);
    if (i + 1 < levels) total += ConvParameters(out, out, 27);
  }
  return total + 2 * widths.front() + ConvParameters(widths.front(), 3, 27);
}

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

std::int64_t VaeDecoderParameterCount(const ModelConfig& m) {
  if (m.vae_kind == VaeKind::kWan || m.vae_kind == VaeKind::kWanResidual)
    return WanVaeDecoderParameterCount(m);
  if (m.vae_kind == VaeKind::kHunyuanVideo) return HunyuanVideoVaeDecoderParameterCount(m);
  auto conv = [](std::int64_t in, std::int64_t out, std::int64_t k) {
    return ConvParameters(in, out, k * k);
  };
  auto norm = [](std::int64_t c) { return 2 * c; };
  auto resnet = [&](std::int64_t in, std::int64_t out) {
    return norm(in) + conv(in, out, 3) + norm(out) + conv(out, out, 3) +
           (in != out ? conv(in, out, 1) : 0);
  };
  const auto& widths = m.vae_channels;
  if (widths.empty()) return 0;
  const std::int64_t z = m.in_channels, top = widths.back();
  std::int64_t total = m.vae_post_quant_conv ? conv(z, z, 1) : 0;
  total += conv(z, top, 3) + 2 * resnet(top, top);
  total += norm(top) + 4 * (top * top + top);  // mid-block attention: norm, q, k, v, out
  std::int64_t in = top;
  for (int level = static_cast<int>(widths.size()) - 1; level >= 0; --level) {
    const std::int64_t out = widths[level];
    for (int i = 0; i <= m.vae_layers; ++i, in = out) total += resnet(in, out);
    if (level > 0) total += conv(out, out, 3);
  }
  return total + norm(widths.front()) + conv(widths.front(), 3, 3);
}

double VaeDecodeFlops(const ModelConfig& model, const ImageShape& shape) {
  if (model.vae_channels.empty() || model.vae_downsample <= 0) return 0;
  const double rows = shape.height / model.vae_downsample;
  const double cols = shape.width / model.vae_downsample;
  const int frames = LatentFrames(model, shape.frames);
  switch (model.vae_kind) {
    case VaeKind::kAutoencoderKL: return ImageVaeFlops(model, rows, cols);
    case VaeKind::kWan:
    case VaeKind::kWanResidual: return WanVaeFlops(model, frames, rows, cols);
    case VaeKind::kHunyuanVideo: return HunyuanVideoVaeFlops(model, frames, rows, cols);
  }
  return 0;
}

std::int64_t VaeSplitCollectives(const ModelConfig& m, const ImageShape& shape) {
  if (m.vae_channels.empty()) return 0;
  const std::int64_t levels = static_cast<std::int64_t>(m.vae_channels.size());
  const std::int64_t resnets = 2 + levels * (m.vae_layers + 1);  // mid block's, then the levels'
  // conv_in, two per ResNet block, an upsampler per level but the last, conv_out.
  const std::int64_t convs = 1 + 2 * resnets + (levels - 1) + 1;
  const bool group_norms =
      m.vae_kind == VaeKind::kAutoencoderKL || m.vae_kind == VaeKind::kHunyuanVideo;
  // Two per ResNet block, the attention's and the output's.
  const std::int64_t norms = group_norms ? 2 * resnets + 2 : 0;
  const std::int64_t per_pass = convs + 2 * norms + 1;
  const int latent_frames = LatentFrames(m, shape.frames);
  std::int64_t passes = 1;
  if (m.vae_kind == VaeKind::kWan || m.vae_kind == VaeKind::kWanResidual) passes = latent_frames;
  if (m.vae_kind == VaeKind::kHunyuanVideo && latent_frames > 4) passes = (latent_frames + 2) / 3;
  return passes * per_pass + 1;
}

int VaeDecodeTiles(const ModelConfig& m, const ImageShape& shape, int tile) {
  const int down = std::max(1, m.vae_downsample);
  const int rows = shape.height / down, cols = shape.width / down, latent_tile = tile / down;
  if (rows <= latent_tile && cols <= latent_tile) return 1;
  const int stride = std::max(1, latent_tile * 3 / 4);
  return ((rows + stride - 1) / stride) * ((cols + stride - 1) / stride);
}

double VaeSplitShare(const ModelConfig& m, const ImageShape& shape, int tile, int parts) {
  if (parts <= 1) return 1.0;
  const int whole = tile > 0 ? VaeDecodeTiles(m, shape, tile)
                             : std::max(1, shape.height / std::max(1, m.vae_downsample));
  return double((whole + parts - 1) / parts) / whole;
}

}  // namespace ditbench

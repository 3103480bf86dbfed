// What a user sees of a decoded output: the float32 array world rank 0 leaves as output.npy
// for scope `pipeline` (runner/output_error.h) as 8-bit RGB pictures. Pure and torch-free.
//
// Layouts (the VAE decoder's, channels first):
//  * an image: [batch, channels, height, width];
//  * a video:  [batch, channels, frames, height, width].
// Channels are 3 (RGB) or 1 (grey, shown as RGB). Only the first sample of a batch is shown;
// of a video, its first, middle and last frames (fewer when it has fewer). Values are on the
// VAE's range [-1, 1]: clamped to it (as diffusers' image processor does), then mapped
// linearly to 0..255 and rounded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "contract/npy.h"

namespace ditbench {

// Row-major 8-bit RGB, 3 bytes per pixel.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // width * height * 3
};

// One picture of an output, with the frame it shows (0 for an image).
struct DecodedFrame {
  std::int64_t frame = 0;
  RgbImage image;
};

// A value on [-1, 1] as an 8-bit level: clamped, then round((v + 1) / 2 * 255).
std::uint8_t ToLevel(float value);

// The pictures of `output` (an image: one; a video: first, middle, last). Throws
// std::invalid_argument, naming the shape, for any other layout, channel count, or a picture
// wider or taller than kMaxPictureSide.
std::vector<DecodedFrame> DecodedFrames(const NpyArray& output);

inline constexpr std::int64_t kMaxPictureSide = 16384;

}  // namespace ditbench

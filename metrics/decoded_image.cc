#include "metrics/decoded_image.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ditbench {
namespace {

std::invalid_argument BadShape(const NpyArray& output, const std::string& why) {
  return std::invalid_argument(fmt::format(
      "output of shape [{}] is not a decoded image: {}", fmt::join(output.shape, ", "), why));
}

}  // namespace

std::uint8_t ToLevel(float value) {
  const double clamped = std::clamp(static_cast<double>(value), -1.0, 1.0);
  if (std::isnan(value)) return 0;
  return static_cast<std::uint8_t>(std::lround((clamped + 1.0) / 2.0 * 255.0));
}

std::vector<DecodedFrame> DecodedFrames(const NpyArray& output) {
  const std::vector<std::int64_t>& s = output.shape;
  if (s.size() != 4 && s.size() != 5)
    throw BadShape(output, "expected [batch, channels, height, width] or [batch, channels, "
                           "frames, height, width]");
  const bool video = s.size() == 5;
  const std::int64_t channels = s[1], frames = video ? s[2] : 1;
  const std::int64_t height = s[s.size() - 2], width = s[s.size() - 1];
  if (s[0] < 1 || frames < 1) throw BadShape(output, "no sample to show");
  if (channels != 3 && channels != 1)
    throw BadShape(output, "expected 3 channels (RGB) or 1 (grey)");
  if (height < 1 || width < 1 || height > kMaxPictureSide || width > kMaxPictureSide)
    throw BadShape(output, fmt::format("expected a height and width of 1 to {} pixels",
                                       kMaxPictureSide));
  std::int64_t count = 1;
  for (std::int64_t d : s) count *= d;
  if (static_cast<std::int64_t>(output.data.size()) != count)
    throw BadShape(output, "the data does not fill the shape");

  std::vector<std::int64_t> shown = {0};
  if (video) shown = {0, (frames - 1) / 2, frames - 1};
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  const std::int64_t plane = height * width;
  std::vector<DecodedFrame> pictures;
  for (std::int64_t frame : shown) {
    DecodedFrame picture{frame, {static_cast<int>(width), static_cast<int>(height), {}}};
    picture.image.pixels.resize(static_cast<std::size_t>(plane * 3));
    for (int rgb = 0; rgb < 3; ++rgb) {
      const std::int64_t channel = channels == 3 ? rgb : 0;
      // Sample 0, this channel, this frame: channels first, frames (video) next.
      const float* from = output.data.data() + (channel * frames + frame) * plane;
      for (std::int64_t p = 0; p < plane; ++p)
        picture.image.pixels[static_cast<std::size_t>(p * 3 + rgb)] = ToLevel(from[p]);
    }
    pictures.push_back(std::move(picture));
  }
  return pictures;
}

}  // namespace ditbench

// PNG files of RgbImage pictures (metrics/decoded_image.h), through libpng's simplified API
// (libpng 1.6: png_image_write_to_memory, png_image_finish_read). The coordinator writes the
// decoded output of a scope `pipeline` trial as PNG in its run folder; tests read them back.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "metrics/decoded_image.h"

namespace ditbench {

// The PNG bytes of `image` (8-bit RGB, no interlace). Throws std::runtime_error with libpng's
// message when it cannot be encoded (an empty image).
std::string EncodePng(const RgbImage& image);

// The picture a PNG holds, converted to 8-bit RGB (a grey or alpha PNG included). Throws
// std::runtime_error with libpng's message for bytes that are not a PNG, or a picture wider or
// taller than kMaxPictureSide.
RgbImage DecodePng(std::string_view bytes);

// EncodePng, written atomically (base/atomic_file.h; FileWriteError when it cannot be).
void WritePng(const std::filesystem::path& path, const RgbImage& image);

}  // namespace ditbench

#include "metrics/png_image.h"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <png.h>

#include "base/atomic_file.h"

namespace ditbench {
namespace {

// libpng's simplified API keeps its state in a png_image: released by png_image_free on
// every path.
class PngImage {
 public:
  PngImage() {
    std::memset(&image_, 0, sizeof image_);
    image_.version = PNG_IMAGE_VERSION;
  }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
  ~PngImage() { png_image_free(&image_); }
  png_image* get() { return &image_; }
  std::string Message() const { return image_.message; }

 private:
  png_image image_;
};

}  // namespace

std::string EncodePng(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3)
    throw std::runtime_error(fmt::format("cannot encode a {}x{} image of {} bytes as PNG",
                                         image.width, image.height, image.pixels.size()));
  PngImage png;
  png.get()->width = static_cast<png_uint_32>(image.width);
  png.get()->height = static_cast<png_uint_32>(image.height);
  png.get()->format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  // First the size, then the bytes.
  if (!png_image_write_to_memory(png.get(), nullptr, &size, 0, image.pixels.data(), 0, nullptr))
    throw std::runtime_error("cannot encode PNG: " + png.Message());
  std::string bytes(size, '\0');
  if (!png_image_write_to_memory(png.get(), bytes.data(), &size, 0, image.pixels.data(), 0,
                                 nullptr))
    throw std::runtime_error("cannot encode PNG: " + png.Message());
  bytes.resize(size);
  return bytes;
}

RgbImage DecodePng(std::string_view bytes) {
  PngImage png;
  if (!png_image_begin_read_from_memory(png.get(), bytes.data(), bytes.size()))
    throw std::runtime_error("not a readable PNG: " + png.Message());
  if (png.get()->width > kMaxPictureSide || png.get()->height > kMaxPictureSide)
    throw std::runtime_error(fmt::format("a {}x{} PNG is larger than {} pixels a side",
                                         png.get()->width, png.get()->height, kMaxPictureSide));
  png.get()->format = PNG_FORMAT_RGB;
  RgbImage image{static_cast<int>(png.get()->width), static_cast<int>(png.get()->height), {}};
  image.pixels.resize(PNG_IMAGE_SIZE(*png.get()));
  if (!png_image_finish_read(png.get(), nullptr, image.pixels.data(), 0, nullptr))
    throw std::runtime_error("not a readable PNG: " + png.Message());
  return image;
}

void WritePng(const std::filesystem::path& path, const RgbImage& image) {
  WriteFileAtomically(path, EncodePng(image), /*durable=*/false);
}

}  // namespace ditbench

// The answer of an OpenAI-style images endpoint (`POST /v1/images/generations` with
// `response_format: b64_json`), read as untrusted input:
//   {"created": 1700000000, "data": [{"b64_json": "<base64 of a PNG>"}, ...]}
// The text is parsed with its depth and count of values capped (base/untrusted_input.h), the
// number of images and the size of each are capped before anything is decoded, and base64 is
// decoded strictly, in one linear pass. Errors are one line that starts with the caller's
// `where` (the request: "POST http://127.0.0.1:8000/v1/images/generations").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

// What a server's output is, by its first bytes: an image, or a video's container (MP4 or
// QuickTime: "ftyp" at byte 4).
enum class ImageFormat { kPng, kJpeg, kMp4, kOther };

// "png", "jpeg", "mp4", "other".
const char* ImageFormatName(ImageFormat format);

// What the first bytes of an image say it is.
ImageFormat SniffImageFormat(std::string_view bytes);

struct GeneratedImage {
  std::string bytes;  // the decoded file, as the server made it
  ImageFormat format = ImageFormat::kOther;
};

struct ImageResponseLimits {
  std::size_t max_images = 16;
  std::uint64_t max_image_bytes = std::uint64_t{64} << 20;  // decoded, per image
};

// The images of a response, or `error` (then `images` is empty).
struct ImageResponse {
  std::vector<GeneratedImage> images;
  std::string error;
};

// The images of `body`. Refused, each with its reason: text that is not JSON or passes the caps,
// an answer that is not an object with a `data` array of 1 to max_images objects, an image given
// as a `url` rather than `b64_json`, base64 that is not, an image larger than max_image_bytes.
// An object with an `error` member and no `data` is refused with the server's message. Never
// throws for what `body` holds.
ImageResponse ParseImageResponse(std::string_view body, const std::string& where,
                                 const ImageResponseLimits& limits = {});

// `text` decoded from base64 (RFC 4648's alphabet, '=' padding required to a multiple of 4
// characters, no whitespace), appended to `out`. Returns the offset of the first character
// that is not valid there, or nullopt when all of it is (then `out` holds the bytes).
std::optional<std::size_t> DecodeBase64(std::string_view text, std::string& out);

}  // namespace ditbench

#include "engine/image_response.h"

#include <array>
#include <exception>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/untrusted_input.h"

namespace ditbench {
namespace {

// The deepest an images answer needs: {"data": [{"b64_json": ...}]} is 3 levels; servers add
// a few fields of their own (a "usage" object, "timings").
constexpr int kMaxResponseDepth = 8;
constexpr std::uint64_t kMaxResponseValues = 4096;
// How much of a server's own error message is kept in ours.
constexpr std::size_t kShownMessageBytes = 300;

// 0..63 for a base64 character, -1 for any other byte.
constexpr std::array<signed char, 256> Base64Values() {
  std::array<signed char, 256> values{};
  for (signed char& v : values) v = -1;
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    values[static_cast<unsigned char>(kAlphabet[i])] = static_cast<signed char>(i);
  }
  return values;
}
constexpr std::array<signed char, 256> kBase64Values = Base64Values();

// The one image of `element` (data[index]), or an error without `where`.
std::string ReadImage(const nlohmann::json& element, std::size_t index,
                      const ImageResponseLimits& limits, GeneratedImage& image) {
  const std::string name = fmt::format("data[{}]", index);
  if (!element.is_object()) return name + " is not an object";
  const auto b64 = element.find("b64_json");
  if (b64 == element.end()) {
    if (element.contains("url")) {
      return name + " holds a 'url', not 'b64_json' (ask for response_format b64_json)";
    }
    return name + " has no 'b64_json'";
  }
  if (!b64->is_string()) return name + ".b64_json is not a string";
  const std::string& text = b64->get_ref<const std::string&>();
  // Four characters carry three bytes: the size is known before anything is decoded.
  const std::uint64_t decoded_at_most = text.size() / 4 * 3;
  if (decoded_at_most > limits.max_image_bytes + 2) {
    return fmt::format("{} is about {} bytes; expected at most {}", name, decoded_at_most,
                       limits.max_image_bytes);
  }
  if (const auto bad = DecodeBase64(text, image.bytes)) {
    return fmt::format("{}.b64_json is not base64 (character {} of {})", name, *bad, text.size());
  }
  if (image.bytes.empty()) return name + ".b64_json is empty";
  if (image.bytes.size() > limits.max_image_bytes) {
    return fmt::format("{} is {} bytes; expected at most {}", name, image.bytes.size(),
                       limits.max_image_bytes);
  }
  image.format = SniffImageFormat(image.bytes);
  return "";
}

// The answer's images, or an error without `where`.
std::string ReadImages(const nlohmann::json& answer, const ImageResponseLimits& limits,
                       std::vector<GeneratedImage>& images) {
  if (!answer.is_object()) return "not a JSON object; expected {\"data\": [...]}";
  const auto data = answer.find("data");
  if (data == answer.end()) {
    const auto error = answer.find("error");
    if (error != answer.end()) {
      const nlohmann::json& message =
          error->is_object() && error->contains("message") ? (*error)["message"] : *error;
      const std::string text = message.is_string() ? message.get<std::string>() : message.dump();
      return "the server answered an error: " +
             OneLine(std::string_view(text).substr(0, kShownMessageBytes));
    }
    return "no 'data' member";
  }
  if (!data->is_array()) return "'data' is not an array";
  if (data->empty()) return "'data' holds no image";
  if (data->size() > limits.max_images) {
    return fmt::format("'data' holds {} images; expected at most {}", data->size(),
                       limits.max_images);
  }
  for (std::size_t i = 0; i < data->size(); ++i) {
    GeneratedImage image;
    if (std::string error = ReadImage((*data)[i], i, limits, image); !error.empty()) {
      return error;
    }
    images.push_back(std::move(image));
  }
  return "";
}

}  // namespace

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kMp4:
      return "mp4";
    case ImageFormat::kOther:
      break;
  }
  return "other";
}

ImageFormat SniffImageFormat(std::string_view bytes) {
  if (bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (bytes.substr(0, 3) == "\xff\xd8\xff") return ImageFormat::kJpeg;
  if (bytes.size() >= 12 && bytes.substr(4, 4) == "ftyp") return ImageFormat::kMp4;
  return ImageFormat::kOther;
}

std::optional<std::size_t> DecodeBase64(std::string_view text, std::string& out) {
  if (text.size() % 4 != 0) return text.size() - text.size() % 4;
  const std::size_t start = out.size();
  out.reserve(start + text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    // Padding only at the very end: "xx==" or "xxx=".
    const int padding =
        last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    std::uint32_t group = 0;
    for (int k = 0; k < 4; ++k) {
      const signed char value =
          k >= 4 - padding ? 0 : kBase64Values[static_cast<unsigned char>(text[i + k])];
      if (value < 0) {
        out.resize(start);
        return i + k;
      }
      group = group << 6 | static_cast<std::uint32_t>(value);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (padding < 2) out.push_back(static_cast<char>(group >> 8 & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(group & 0xff));
  }
  return std::nullopt;
}

ImageResponse ParseImageResponse(std::string_view body, const std::string& where,
                                 const ImageResponseLimits& limits) {
  ImageResponse response;
  nlohmann::json answer;
  try {
    JsonLimits json_limits;
    json_limits.max_depth = kMaxResponseDepth;
    json_limits.max_values = kMaxResponseValues;
    answer = ParseBoundedJson(body, json_limits, where);
  } catch (const std::exception& e) {
    response.error = OneLine(e.what());
    return response;
  }
  if (std::string error = ReadImages(answer, limits, response.images); !error.empty()) {
    response.images.clear();
    response.error = fmt::format("{}: {}", OneLine(where), error);
  }
  return response;
}

}  // namespace ditbench

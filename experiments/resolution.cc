#include "experiments/resolution.h"

#include <charconv>
#include <string>

namespace ditbench {

const char* ResolutionExpected() {
  return "an integer from 16 to 16384 (a square image) or WIDTHxHEIGHT such as 1280x720, each "
         "from 16 to 16384";
}

std::optional<std::pair<int, int>> ParseResolution(const nlohmann::json& value) {
  const auto in_range = [](long long side) {
    return side >= kMinResolutionSide && side <= kMaxResolutionSide;
  };
  if (value.is_number_integer()) {
    const long long side = value.get<long long>();
    if (!in_range(side)) return std::nullopt;
    return std::pair{static_cast<int>(side), static_cast<int>(side)};
  }
  if (!value.is_string()) return std::nullopt;
  const std::string text = value.get<std::string>();
  const std::size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) return std::nullopt;
  int width = 0, height = 0;
  const char* end = text.data() + text.size();
  const auto [w_end, w_error] = std::from_chars(text.data(), text.data() + x, width);
  const auto [h_end, h_error] = std::from_chars(text.data() + x + 1, end, height);
  if (w_error != std::errc() || h_error != std::errc() || w_end != text.data() + x ||
      h_end != end || !in_range(width) || !in_range(height))
    return std::nullopt;
  return std::pair{width, height};
}

}  // namespace ditbench

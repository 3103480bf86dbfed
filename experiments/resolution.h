// A resolution as a sweep writes it: an integer (a square image) or "WIDTHxHEIGHT", each side
// within [kMinSide, kMaxSide]. One parser for the trial's `resolution` and a serving mix's
// shapes (experiments/trial_settings.cc, experiments/serve_load.cc).
#pragma once

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace ditbench {

inline constexpr int kMinResolutionSide = 16, kMaxResolutionSide = 16384;

// What ParseResolution expects, for errors: "an integer from 16 to 16384 (a square image) or
// WIDTHxHEIGHT such as 1280x720, each from 16 to 16384".
const char* ResolutionExpected();

// {width, height}, or nullopt for anything else (a side out of range, "512x", "x512", text
// after the height, a non-integer number).
std::optional<std::pair<int, int>> ParseResolution(const nlohmann::json& value);

}  // namespace ditbench

#include "experiments/setting_values.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/did_you_mean.h"
#include "experiments/resolution.h"
#include "experiments/trial_settings.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/diffusers_files.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

using Json = nlohmann::json;

bool AsInt(const Json& v, int lo, int hi, int* out) {
  if (!v.is_number_integer()) return false;
  auto i = v.get<std::int64_t>();
  if (i < lo || i > hi) return false;
  *out = static_cast<int>(i);
  return true;
}

bool AsNumber(const Json& v, double lo, double hi, double* out) {
  if (!v.is_number()) return false;
  double d = v.get<double>();
  if (!(d >= lo && d <= hi)) return false;
  *out = d;
  return true;
}

bool ParseModelValue(const Json& v, std::string* name, std::map<std::string, int>* overrides,
                     std::map<std::string, std::string>* folders, std::string* expected) {
  if (v.is_string()) {
    *name = v.get<std::string>();
    return true;
  }
  if (!v.is_object() || !v.contains("preset") || !v["preset"].is_string()) {
    *expected = "a model preset name, or {preset: NAME, <dimension>: N, ..., weights: DIR}";
    return false;
  }
  *name = v["preset"].get<std::string>();
  for (const auto& [key, value] : v.items()) {
    if (key == "preset") continue;
    if (key == "weights_variant") {
      if (!value.is_string() || !IsValidWeightsVariant(value.get<std::string>())) {
        *expected =
            "a weights variant for weights_variant: 1 to 32 letters, digits, '_' or '-' "
            "(e.g. fp16)";
        return false;
      }
      (*folders)[key] = value.get<std::string>();
      continue;
    }
    if (key == "weights" || key == "vae_weights") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        *expected = fmt::format("a folder in diffusers' format for '{}'", key);
        return false;
      }
      (*folders)[key] = std::filesystem::absolute(value.get<std::string>()).lexically_normal();
      continue;
    }
    int dim = 0;
    if (std::find(OverridableDimensions().begin(), OverridableDimensions().end(), key) ==
        OverridableDimensions().end()) {
      *expected = fmt::format(
          "model dimensions from: {}, or weights, vae_weights, weights_variant; not '{}'",
          fmt::join(OverridableDimensions(), ", "), key);
      auto guess = DidYouMean(key, OverridableDimensions());
      if (!guess.empty()) *expected += fmt::format("; did you mean '{}'?", guess);
      return false;
    }
    if (!AsInt(value, 0, 1 << 20, &dim)) {
      *expected = fmt::format("an integer for model dimension '{}'", key);
      return false;
    }
    (*overrides)[key] = dim;
  }
  return true;
}

void AssignModel(TrialConfig& c, std::string name, std::map<std::string, int> overrides,
                 std::map<std::string, std::string> folders) {
  c.model = std::move(name);
  c.model_overrides = std::move(overrides);
  c.weights = folders.count("weights") ? folders["weights"] : "";
  c.vae_weights = folders.count("vae_weights") ? folders["vae_weights"] : "";
  c.weights_variant = folders.count("weights_variant") ? folders["weights_variant"] : "";
}

bool SetModel(TrialConfig& c, const Json& v, std::string* expected) {
  std::string name;
  std::map<std::string, int> overrides;
  std::map<std::string, std::string> folders;  // weights, vae_weights; and weights_variant
  if (!ParseModelValue(v, &name, &overrides, &folders, expected)) return false;
  const std::string variant = folders.count("weights_variant") ? folders["weights_variant"] : "";
  if (!variant.empty() && !folders.count("weights") && !folders.count("vae_weights")) {
    *expected = "weights_variant together with weights or vae_weights (a folder to pick from)";
    return false;
  }
  std::string error;
  auto resolved = ResolveModel(name, overrides, &error);
  if (!resolved) {
    if (!FindModelPreset(name)) {
      *expected = fmt::format("a model preset: {}", fmt::join(ModelPresetNames(), ", "));
      auto guess = DidYouMean(name, ModelPresetNames());
      if (!guess.empty()) *expected += fmt::format("; did you mean '{}'?", guess);
    } else {
      *expected = "valid model dimensions (" + error + ")";
    }
    return false;
  }
  // A weights folder is checked now, not when its trial starts: its config.json must describe
  // the preset's architecture (model_zoo/shapes/diffusers_config.h).
  for (const auto& [key, folder] : folders) {
    if (key == "weights_variant") continue;
    try {
      const DiffusersModel diffusers = ReadDiffusersConfig(folder);
      DiffusersWeightFiles(folder, variant);  // the files diffusers would load exist
      const std::string file = (std::filesystem::path(folder) / "config.json").string();
      *resolved = key == "weights" ? ModelWithDiffusersWeights(*resolved, diffusers, file)
                                   : ModelWithDiffusersVae(*resolved, diffusers, file);
    } catch (const std::invalid_argument& e) {
      *expected = fmt::format("{} matching model '{}' ({})", key, name, e.what());
      return false;
    }
  }
  AssignModel(c, name, std::move(overrides), std::move(folders));
  return true;
}

// `resolution`: a number (a square image) or "WIDTHxHEIGHT"; a square written as WIDTHxHEIGHT
// is the number, so that it has one key.
bool SetResolution(TrialConfig& c, const Json& v, std::string* expected) {
  *expected = ResolutionExpected();
  const auto resolution = ParseResolution(v);
  if (!resolution) return false;
  const auto [width, height] = *resolution;
  c.resolution = width;
  c.height = height == width ? 0 : height;
  return true;
}

// `schedule`: {high_precision_first, high_precision_last}, each a number of steps (0 to 1000).
bool SetSchedule(TrialConfig& c, const Json& v, std::string* expected) {
  *expected = kScheduleExpected;
  if (!v.is_object()) return false;
  StepSchedule schedule;
  for (const auto& [key, value] : v.items()) {
    int* field = key == "high_precision_first"  ? &schedule.high_precision_first
                 : key == "high_precision_last" ? &schedule.high_precision_last
                                                : nullptr;
    if (!field || !AsInt(value, 0, 1000, field)) return false;
  }
  c.schedule = schedule;
  return true;
}

// `cache`: none, or {kind: fbcache | teacache, threshold, warmup_steps}; a map without `kind`,
// or with keys of neither, is refused (the sweep parser names the key).
bool SetCache(TrialConfig& c, const Json& v, std::string* expected) {
  *expected = kStepCacheExpected;
  if (v.is_string() && v.get<std::string>() == "none") {
    c.cache = StepCache{};
    return true;
  }
  if (!v.is_object() || !v.contains("kind") || !v["kind"].is_string()) return false;
  // A typo names what it got and the nearest word it may have meant.
  auto refuse = [&](const std::string& what, const std::string& got,
                    const std::vector<std::string>& words) {
    *expected = fmt::format("{} {}, not '{}'", what, fmt::join(words, ", "), got);
    const std::string guess = DidYouMean(got, words);
    if (!guess.empty()) *expected += fmt::format(" (did you mean '{}'?)", guess);
    return false;
  };
  StepCache cache;
  const std::string kind = v["kind"].get<std::string>();
  if (kind == "fbcache")
    cache.kind = StepCache::Kind::kFbCache;
  else if (kind == "teacache")
    cache.kind = StepCache::Kind::kTeaCache;
  else if (kind == "none")
    cache.kind = StepCache::Kind::kNone;
  else
    return refuse("a cache kind of", kind, {"fbcache", "teacache", "none"});
  for (const auto& [key, value] : v.items()) {
    if (key == "kind") continue;
    if (key == "threshold") {
      if (AsNumber(value, 0.0, 10.0, &cache.threshold)) continue;
      *expected = "a cache threshold from 0 to 10 (a relative change)";
      return false;
    }
    if (key == "warmup_steps") {
      if (AsInt(value, 0, 1000, &cache.warmup_steps)) continue;
      *expected = "cache warmup_steps as an integer from 0 to 1000";
      return false;
    }
    return refuse("cache keys", key, {"kind", "threshold", "warmup_steps"});
  }
  // `kind: none` with parameters is one value, none: it has a single key.
  c.cache = cache.kind == StepCache::Kind::kNone ? StepCache{} : cache;
  return true;
}

// `quant_exclude`: module-path patterns, each of letters, digits, '_', '.', '*' and '?'.
bool SetQuantExclude(TrialConfig& c, const Json& v, std::string* expected) {
  *expected = kQuantExcludeExpected;
  if (!v.is_array() || v.size() > 64) return false;
  std::vector<std::string> patterns;
  for (const Json& item : v) {
    if (!item.is_string()) return false;
    const std::string pattern = item.get<std::string>();
    if (pattern.empty() || pattern.size() > 128) return false;
    for (char ch : pattern)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '*' &&
          ch != '?')
        return false;
    patterns.push_back(pattern);
  }
  c.quant_exclude = std::move(patterns);
  return true;
}

bool SetRepeats(TrialConfig& c, const Json& v, std::string* expected) {
  int n = 0;
  if (AsInt(v, 1, 1000000, &n)) {
    c.repeats = Repeats{n, n, 0.0, 0.0};
    return true;
  }
  *expected =
      "a positive integer or a map {min, max, target_rel_ci, max_seconds} with 1 <= min <= max";
  if (!v.is_object()) return false;
  Repeats r{5, 5, 0.0, 0.0};
  bool has_max = false;
  for (const auto& [key, value] : v.items()) {
    if (key == "min") {
      if (!AsInt(value, 1, 1000000, &r.min)) return false;
    } else if (key == "max") {
      if (!AsInt(value, 1, 1000000, &r.max)) return false;
      has_max = true;
    } else if (key == "target_rel_ci") {
      if (!AsNumber(value, 0.0, 1.0, &r.target_rel_ci)) return false;
    } else if (key == "max_seconds") {
      if (!ParseDuration(value, &r.max_seconds)) return false;
    } else {
      *expected = fmt::format("repeats keys min, max, target_rel_ci, max_seconds, not '{}'", key);
      return false;
    }
  }
  if (!has_max) r.max = std::max(r.min, r.max);
  if (r.min > r.max) return false;
  c.repeats = r;
  return true;
}

}  // namespace ditbench

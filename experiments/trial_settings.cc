#include "experiments/trial_settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "experiments/resolution.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/diffusers_files.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

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

// The built-in key a program workload takes as a custom axis of its own.
constexpr const char* kProgramsOwnAxis = "attention";

using Setter = std::function<bool(TrialConfig&, const Json&, std::string*)>;

Setter IntSetter(int TrialConfig::*field, int lo, int hi) {
  return [=](TrialConfig& c, const Json& v, std::string* expected) {
    if (AsInt(v, lo, hi, &(c.*field))) return true;
    *expected = fmt::format("an integer from {} to {}", lo, hi);
    return false;
  };
}

// The model value in either form, parsed without resolving it: a preset name, or
// {preset, <dimension>: N..., weights, vae_weights} with folders made absolute.
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

const std::map<std::string, Setter>& Setters() {
  static const std::map<std::string, Setter> setters = [] {
    std::map<std::string, Setter> table = {
        {"model", SetModel},
        {"resolution", SetResolution},
        // Video families only (experiments/validity.cc says which frame counts each takes).
        {"frames", IntSetter(&TrialConfig::frames, 1, 100000)},
        {"precision",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           auto p = v.is_string() ? ParsePrecision(v.get<std::string>()) : std::nullopt;
           if (p) c.precision = *p;
           *expected = "one of fp32, tf32, bf16, fp16";
           return p.has_value();
         }},
        {"scope",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           auto s = v.is_string() ? ParseScope(v.get<std::string>()) : std::nullopt;
           if (s) c.scope = *s;
           *expected = "one of forward, denoise, pipeline";
           return s.has_value();
         }},
        {"batch", IntSetter(&TrialConfig::batch, 1, 4096)},
        {"steps", IntSetter(&TrialConfig::steps, 1, 10000)},
        {"warmup", IntSetter(&TrialConfig::warmup, 0, 10000)},
        {"repeats", SetRepeats},
        {"timeout",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           double s = 0;
           *expected = "a duration such as 90s, 30m or 2h";
           if (!ParseDuration(v, &s) || s <= 0) return false;
           c.timeout_s = s;
           return true;
         }},
        {"seed",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           *expected = "an integer";
           if (!v.is_number_integer()) return false;
           c.seed = v.get<std::int64_t>();
           return true;
         }},
        {"pipefusion_patches", IntSetter(&TrialConfig::pipefusion_patches, 1, 4096)},
        {"pipefusion_warmup_steps", IntSetter(&TrialConfig::pipefusion_warmup_steps, 0, 100000)},
        {"profile_blocks",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           *expected = "true or false";
           if (!v.is_boolean()) return false;
           c.profile_blocks = v.get<bool>();
           return true;
         }},
        {"graph",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           auto g = v.is_string() ? ParseGraphMode(v.get<std::string>()) : std::nullopt;
           if (g) c.graph = *g;
           *expected = "one of eager, cuda_graph";
           return g.has_value();
         }},
        {"attention",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           auto a = v.is_string() ? ParseAttentionBackend(v.get<std::string>()) : std::nullopt;
           if (a) c.attention = *a;
           *expected = kAttentionBackendsExpected;
           return a.has_value();
         }},
        {"quant",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           auto q = v.is_string() ? ParseQuantization(v.get<std::string>()) : std::nullopt;
           if (q) c.quant = *q;
           *expected = kQuantizationsExpected;
           return q.has_value();
         }},
        {"quant_exclude", SetQuantExclude},
        {"schedule", SetSchedule},
        {"cache", SetCache},
        {"serve", [](TrialConfig& c, const Json& v,
                     std::string* expected) { return ParseServeLoad(v, &c.serve, expected); }},
        {"vae_tile",
         [](TrialConfig& c, const Json& v, std::string* expected) {
           *expected = kVaeTileExpected;
           int tile = 0;
           if (!AsInt(v, 0, kVaeTileMax, &tile) || !IsValidVaeTile(tile)) return false;
           c.vae_tile = tile;
           return true;
         }},
    };
    table.emplace("vae_parallel", IntSetter(&TrialConfig::vae_parallel, 1, kMaxVaeParallel));
    // The parallel degrees: integers from 1 to the degree's maximum (kDegreeTable).
    for (const DegreeInfo& d : kDegreeTable)
      table.emplace(std::string(d.name), IntSetter(d.member, 1, d.max));
    return table;
  }();
  return setters;
}

// A YAML scalar as JSON: integer, then float, then boolean, else string. Quoted scalars
// (tag "!") stay strings.
Json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;
  if (s.empty()) return s;
  std::int64_t i = 0;
  auto [iend, iec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (iec == std::errc() && iend == s.data() + s.size()) return i;
  double d = 0;
  auto [dend, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (dec == std::errc() && dend == s.data() + s.size()) return d;
  if (s == "true") return true;
  if (s == "false") return false;
  return s;
}

}  // namespace

const std::vector<std::string>& TrialKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& [name, setter] : Setters()) k.push_back(name);
    return k;
  }();
  return keys;
}

bool ApplySetting(TrialConfig& config, const std::string& key, const Json& value,
                  std::string* expected) {
  const bool program = TraitsOf(config.workload).launch == WorkloadLaunch::kProgram;
  // A program chooses its own attention kernel (FlashAttention 3, SageAttention, ...): in a
  // command sweep `attention` is a custom axis, its values passed to the program as written.
  auto it = key == kProgramsOwnAxis && program ? Setters().end() : Setters().find(key);
  if (it != Setters().end()) return it->second(config, value, expected);
  if (program && IsCustomAxisName(key)) {
    *expected = "a number, a string or true/false (a custom axis takes scalar values)";
    if (!value.is_primitive() || value.is_null()) return false;
    config.custom[key] = value;
    return true;
  }
  *expected = "a known key";
  return false;
}

bool ApplyCanonicalField(TrialConfig& c, const std::string& key, const Json& value,
                         ModelFolders folders, std::string* expected) {
  if (key == "workload") {
    *expected = WorkloadNameList();
    const auto workload =
        value.is_string() ? ParseWorkload(value.get<std::string>()) : std::nullopt;
    if (workload) c.workload = *workload;
    return workload.has_value();
  }
  if (key == "profile") {
    *expected = kProfileExpected;
    if (value != kProfileTrace && value != kProfileNone) return false;
    c.profile_trace = value == kProfileTrace;
    return true;
  }
  if (key == "quality") return QualityGateFromJson(value, &c.quality, expected);
  if (key == "command") {
    *expected = "a list of strings";
    if (!value.is_array()) return false;
    std::vector<std::string> command;
    for (const auto& part : value) {
      if (!part.is_string()) return false;
      command.push_back(part.get<std::string>());
    }
    c.command = std::move(command);
    return true;
  }
  if (key == "custom") {
    *expected = "an object of custom axes, each a name and a scalar value";
    if (!value.is_object()) return false;
    for (const auto& [name, axis] : value.items())
      if (!IsCustomAxisName(name) || !axis.is_primitive() || axis.is_null()) return false;
    for (const auto& [name, axis] : value.items()) c.custom[name] = axis;
    return true;
  }
  // 0 is the canonical form of "as many patches as PipeFusion stages".
  if (key == "pipefusion_patches" && value.is_number_integer() && value.get<std::int64_t>() == 0) {
    c.pipefusion_patches = 0;
    return true;
  }
  if (key == "model" && folders == ModelFolders::kTrust) {
    std::string name;
    std::map<std::string, int> overrides;
    std::map<std::string, std::string> model_folders;
    if (!ParseModelValue(value, &name, &overrides, &model_folders, expected)) return false;
    AssignModel(c, std::move(name), std::move(overrides), std::move(model_folders));
    return true;
  }
  const auto setter = Setters().find(SettingOfCanonicalKey(key));
  if (setter == Setters().end()) {
    *expected = "a key of a trial configuration";
    return false;
  }
  return setter->second(c, value, expected);
}

bool IsConfigurationKey(const std::string& key) {
  return key == "workload" || key == "command" || key == "custom" || key == "profile" ||
         key == "quality" || Setters().contains(SettingOfCanonicalKey(key));
}

TrialConfig TrialConfigFromJson(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("a trial configuration must be an object");
  // Every key CanonicalJson has always written; later additions (workload, command, custom,
  // vae_tile, pipefusion_warmup_steps, graph, frames, profile, quality) keep their defaults when
  // absent.
  std::vector<std::string> required = {"model",
                                       "resolution",
                                       "precision",
                                       "scope",
                                       "batch",
                                       "steps",
                                       "warmup",
                                       "timeout_s",
                                       "seed",
                                       "repeats",
                                       "pipefusion_patches",
                                       "profile_blocks"};
  for (const DegreeInfo& d : kDegreeTable) required.emplace_back(d.name);
  for (const std::string& key : required)
    if (!json.contains(key)) throw std::invalid_argument(fmt::format("missing key '{}'", key));
  TrialConfig config;
  for (const auto& [key, value] : json.items()) {
    if (!IsConfigurationKey(key)) throw std::invalid_argument(fmt::format("unknown key '{}'", key));
    std::string expected;
    if (!ApplyCanonicalField(config, key, value, ModelFolders::kTrust, &expected)) {
      std::string shown = value.dump();
      if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
      throw std::invalid_argument(
          fmt::format("key '{}': expected {}, got {}", key, expected, shown));
    }
  }
  return config;
}

bool IsReservedName(const std::string& name) {
  static const std::vector<std::string> reserved = {
      "name",      "description", "workload",  "defaults", "matrix", "zip",
      "include",   "exclude",     "where",     "command",  "custom", "world_size",
      "trial_key", "sweep",       "timeout_s", "gpus"};
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end();
}

bool IsCustomAxisName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  // A built-in key is no custom axis, except the one a program takes as its own.
  if (Setters().contains(name) && name != kProgramsOwnAxis) return false;
  return !IsReservedName(name);
}

// The settings whose canonical key is another name: {setting, canonical key}. Every other
// setting's canonical key is its own name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kRenamedKeys{
    {{"timeout", "timeout_s"}}};

std::string CanonicalKeyOf(const std::string& setting_key) {
  for (const auto& [setting, canonical] : kRenamedKeys)
    if (setting == setting_key) return std::string(canonical);
  return setting_key;
}

std::string SettingOfCanonicalKey(const std::string& canonical_key) {
  for (const auto& [setting, canonical] : kRenamedKeys)
    if (canonical == canonical_key) return std::string(setting);
  return canonical_key;
}

bool ParseDuration(const Json& value, double* seconds) {
  if (value.is_number()) {
    *seconds = value.get<double>();
    return *seconds >= 0 && *seconds < 1e9;
  }
  if (!value.is_string()) return false;
  const std::string s = value.get<std::string>();
  if (s.size() < 2) return false;
  double scale = 0;
  switch (s.back()) {
    case 's':
      scale = 1;
      break;
    case 'm':
      scale = 60;
      break;
    case 'h':
      scale = 3600;
      break;
    default:
      return false;
  }
  double number = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size() - 1, number);
  if (ec != std::errc() || end != s.data() + s.size() - 1 || !(number >= 0) || number > 1e7)
    return false;
  *seconds = number * scale;
  return true;
}

Json YamlToJson::Convert(const YAML::Node& node) { return Convert(node, 0); }

Json YamlToJson::Convert(const YAML::Node& node, int depth) {
  if (budget_ == 0)
    throw std::length_error("the document expands to too many nodes (an alias bomb?)");
  --budget_;
  if (depth > 64) throw std::invalid_argument("nesting deeper than 64 levels");
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) out.push_back(Convert(item, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw std::invalid_argument("map keys must be plain strings");
        out[kv.first.Scalar()] = Convert(kv.second, depth + 1);
      }
      return out;
    }
    default:
      return nullptr;
  }
}

}  // namespace ditbench

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

#include "experiments/setting_values.h"
#include "experiments/trial_fields.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/diffusers_files.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {
namespace {

using Json = nlohmann::json;

// The built-in key a program workload takes as a custom axis of its own.
constexpr const char* kProgramsOwnAxis = "attention";

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
    for (const TrialField& field : TrialFields())
      if (!field.setting.empty()) k.push_back(field.setting);
    std::sort(k.begin(), k.end());
    return k;
  }();
  return keys;
}

bool ApplySetting(TrialConfig& config, const std::string& key, const Json& value,
                  std::string* expected) {
  const bool program = TraitsOf(config.workload).launch == WorkloadLaunch::kProgram;
  // A program chooses its own attention kernel (FlashAttention 3, SageAttention, ...): in a
  // command sweep `attention` is a custom axis, its values passed to the program as written.
  const TrialField* field = key == kProgramsOwnAxis && program ? nullptr : FieldBySetting(key);
  if (field) return field->set(config, value, expected);
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
  const TrialField* field = FieldByKey(key);
  if (!field) {
    *expected = "a key of a trial configuration";
    return false;
  }
  return field->set(c, value, expected);
}

bool IsConfigurationKey(const std::string& key) { return FieldByKey(key) != nullptr; }

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
  for (const DegreeInfo& d : kDegreeTable)
    if (d.shown_at_one) required.emplace_back(d.name);  // tp is written only above 1
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
  if (FieldBySetting(name) && name != kProgramsOwnAxis) return false;
  return !IsReservedName(name);
}

std::string CanonicalKeyOf(const std::string& setting_key) {
  const TrialField* field = FieldBySetting(setting_key);
  return field ? field->key : setting_key;
}

std::string SettingOfCanonicalKey(const std::string& canonical_key) {
  const TrialField* field = FieldByKey(canonical_key);
  return field && !field->setting.empty() ? field->setting : canonical_key;
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

// Reading one diffusers config.json object key by key (model_zoo/shapes/diffusers_config.h):
// each family's reader (model_zoo/shapes/family.h) asks for the keys its class takes, and
// whatever it did not read is refused afterwards. Torch-free.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// No width, depth or count of a real diffusers model comes near this (the widest DiT is 5,120
// wide, the deepest 60 blocks).
inline constexpr std::int64_t kLargestDimension = 1 << 16;

// Reads keys of one config object, remembering which were read; a null value reads as absent
// (diffusers' None).
class ConfigKeys {
 public:
  ConfigKeys(const nlohmann::json& json, std::string file) : json_(json), file_(std::move(file)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& what) const {
    throw std::invalid_argument(file_ + ": key '" + key + "': " + what);
  }

  bool Has(const std::string& key) {
    read_.insert(key);
    return json_.contains(key) && !json_.at(key).is_null();
  }
  int Int(const std::string& key, int fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_number_integer()) Fail(key, v.dump() + " is not an integer");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > kLargestDimension
                               : std::abs(v.get<std::int64_t>()) > kLargestDimension)
      Fail(key, v.dump() + " is out of range, expected at most " +
                    std::to_string(kLargestDimension));
    return static_cast<int>(v.get<std::int64_t>());
  }
  // At least 1 and at most kLargestDimension: every product of two such values fits in 64 bits,
  // so that the analytic parameter count that checks the model against memory cannot overflow.
  int PositiveInt(const std::string& key, int fallback) {
    const int v = Int(key, fallback);
    if (v < 1) Fail(key, std::to_string(v) + ", expected at least 1");
    return v;
  }
  double Number(const std::string& key, double fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_number()) Fail(key, v.dump() + " is not a number");
    return v.get<double>();
  }
  bool Bool(const std::string& key, bool fallback) {
    if (!Has(key)) return fallback;
    const auto& v = json_.at(key);
    if (!v.is_boolean()) Fail(key, v.dump() + " is not true or false");
    return v.get<bool>();
  }
  std::vector<nlohmann::json> List(const std::string& key) {
    if (!Has(key)) return {};
    const auto& v = json_.at(key);
    if (!v.is_array()) Fail(key, v.dump() + " is not a list");
    return v.get<std::vector<nlohmann::json>>();
  }
  // The key, when present, must hold `expected` (ditbench computes only that).
  void Expect(const std::string& key, const nlohmann::json& expected) {
    if (!Has(key)) return;
    const auto& v = json_.at(key);
    const bool same = v.is_number() && expected.is_number()
                          ? v.get<double>() == expected.get<double>()
                          : v == expected;
    if (!same) Fail(key, v.dump() + " is not supported, expected " + expected.dump());
  }
  // Read and ignored: the key does not change what the forward computes.
  void Ignore(const std::string& key) { read_.insert(key); }
  // Refuses keys that were not read.
  void RefuseOthers(const std::string& class_name) const {
    for (const auto& [key, value] : json_.items())
      if (!key.empty() && key[0] != '_' && !read_.count(key))
        Fail(key, "not a parameter of " + class_name + " that ditbench knows");
  }

 private:
  const nlohmann::json& json_;
  std::string file_;
  std::set<std::string> read_;
};

// Width from num_attention_heads x attention_head_dim, capped at kLargestDimension.
inline void SetWidth(ConfigKeys& keys, ModelConfig& m, int default_heads, int default_head_dim) {
  m.heads = keys.PositiveInt("num_attention_heads", default_heads);
  const std::int64_t hidden =
      std::int64_t(m.heads) * keys.PositiveInt("attention_head_dim", default_head_dim);
  if (hidden > kLargestDimension)
    keys.Fail("attention_head_dim", "num_attention_heads x attention_head_dim is " +
                                        std::to_string(hidden) + ", expected at most " +
                                        std::to_string(kLargestDimension));
  m.hidden = static_cast<int>(hidden);
}

}  // namespace ditbench

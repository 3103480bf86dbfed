// Every configuration diffusers' classes accept (issue 38): for each class ditbench reads and
// each __init__ parameter of it at the pinned diffusers version (tests/reference/data/
// class_parameters.json, written by tests/reference/make_reference.py --class-parameters-only
// from the classes' signatures), the reader reads the key (no "not a parameter ... that
// ditbench knows"), and a value other than the reference case's is either computed or refused
// in one line naming a key. The keys refused for their own value (not for a relation with
// another key the probe broke) are the limited ones docs/cli.md lists: a reader that starts
// computing one, or stops, fails here until the list (and the docs) say so. A new diffusers
// version's signatures (regenerated file) with a parameter no reader reads fail here too.
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model_zoo/shapes/diffusers_config.h"

namespace ditbench::class_parameters_test {
namespace {

const std::string kData = std::string(DITBENCH_FIXTURES) + "/../reference/data";

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

// The reference case whose folder holds a valid config of each class.
const std::map<std::string, std::string> kCaseOfClass = {
    {"PixArtTransformer2DModel", "pixart"},
    {"SD3Transformer2DModel", "sd3"},
    {"FluxTransformer2DModel", "flux"},
    {"WanTransformer3DModel", "wan"},
    {"HunyuanVideoTransformer3DModel", "hunyuan_video"},
    {"AutoencoderKL", "vae4"},
    {"AutoencoderKLWan", "wan_vae"},
    {"AutoencoderKLHunyuanVideo", "hunyuan_vae"},
};

// A value of the same kind as `v` but other: a flipped boolean, a number one larger (a float
// doubled), a string renamed, a list with its last entry changed, 1 for null.
nlohmann::json Other(const nlohmann::json& v) {
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>() + 1;
  if (v.is_number()) return v.get<double>() == 0 ? 0.5 : v.get<double>() * 2;
  if (v.is_string()) return v.get<std::string>() + "_other";
  if (v.is_array() && !v.empty()) {
    nlohmann::json list = v;
    list.back() = Other(list.back());
    return list;
  }
  if (v.is_array()) return nlohmann::json::array({1});
  return 1;
}

// What reading `config` says: "" when it reads.
std::string Refusal(const nlohmann::json& config) {
  try {
    DiffusersConfigFromJson(config, "m/config.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Whether a refusal says the value disagrees with another key (a width that must equal heads x
// head dim, rotary axes that must sum to it, a width GroupNorm must divide, ...): the probe's
// value broke a relation the class needs too, which says nothing about the key's range.
bool RelationRefused(const std::string& refusal) {
  for (const char* relation :
       {"must equal", "must sum", "positive multiple", "(from ", "expected z_dim",
        "giving an even width", "is not 4 x latent", "temporal levels last"})
    if (refusal.find(relation) != std::string::npos) return true;
  return false;
}

// The keys of which the reader computes only some values the class accepts, per class
// (docs/cli.md, "forward": the limited keys); every other value of them is refused in one line.
const std::map<std::string, std::set<std::string>> kLimited = {
    {"AutoencoderKL",
     {"act_fn", "in_channels", "mid_block_add_attention", "out_channels", "up_block_types"}},
    {"AutoencoderKLHunyuanVideo",
     {"act_fn", "in_channels", "mid_block_add_attention", "out_channels",
      "spatial_compression_ratio", "temporal_compression_ratio", "up_block_types"}},
    {"AutoencoderKLWan", {"in_channels", "out_channels"}},
    {"FluxTransformer2DModel", {"patch_size"}},
    {"HunyuanVideoTransformer3DModel", {"image_condition_type", "qk_norm"}},
    {"PixArtTransformer2DModel",
     {"activation_fn", "attention_bias", "attention_type", "norm_elementwise_affine", "norm_type"}},
    {"SD3Transformer2DModel", {"qk_norm"}},
    {"WanTransformer3DModel",
     {"added_kv_proj_dim", "freq_dim", "image_dim", "patch_size", "pos_embed_seq_len", "qk_norm"}},
};

TEST(ClassParametersTest, EveryParameterOfEveryReadClassIsReadAndAnOtherValueComputedOrRefused) {
  const nlohmann::json pinned = ReadJson(kData + "/class_parameters.json");
  EXPECT_EQ(pinned.at("diffusers"), "0.35.2");
  ASSERT_EQ(pinned.at("classes").size(), kCaseOfClass.size());
  for (const auto& [name, parameters] : pinned.at("classes").items()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(kCaseOfClass.contains(name)) << "no reference case for " << name;
    const nlohmann::json base =
        ReadJson(kData + "/" + kCaseOfClass.at(name) + "/model/config.json");
    ASSERT_EQ(Refusal(base), "");
    std::set<std::string> limited;
    for (const auto& [key, fallback] : parameters.items()) {
      SCOPED_TRACE(key);
      nlohmann::json config = base;
      // save_pretrained writes every parameter: a key missing from the case is a new one.
      ASSERT_TRUE(config.contains(key)) << "the reference case lacks " << key;
      config[key] = Other(config[key].is_null() && !fallback.is_null() && fallback != "<required>"
                              ? fallback
                              : config[key]);
      const std::string refusal = Refusal(config);
      if (refusal.empty()) continue;
      EXPECT_EQ(refusal.find("that ditbench knows"), std::string::npos) << refusal;
      EXPECT_EQ(refusal.find('\n'), std::string::npos) << refusal;
      EXPECT_NE(refusal.find("m/config.json: key '"), std::string::npos) << refusal;
      if (!RelationRefused(refusal)) limited.insert(key);
    }
    const auto expected = kLimited.find(name);
    EXPECT_EQ(limited, expected == kLimited.end() ? std::set<std::string>{} : expected->second);
  }
}

// A key the pinned class does not take is refused, never ignored: ditbench cannot tell what it
// would change.
TEST(ClassParametersTest, AKeyThePinnedClassDoesNotTakeIsRefused) {
  nlohmann::json config = ReadJson(kData + "/wan/model/config.json");
  config["rope_scaling"] = 2;
  EXPECT_EQ(Refusal(config),
            "m/config.json: key 'rope_scaling': not a parameter of WanTransformer3DModel that "
            "ditbench knows");
}

}  // namespace
}  // namespace ditbench::class_parameters_test

// The field table (experiments/trial_fields.h): every member of TrialConfig has a row, every
// row sets, writes, keys and resets its field as its role says, and the rules that walk the
// table (reference trial, "not built" pairs, "one of" texts) hold for every row.
#include "experiments/trial_fields.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "experiments/trial_identity.h"
#include "experiments/trial_settings.h"

namespace ditbench::trial_fields_test {
namespace {

// Converts to any type: counts how many initializers an aggregate takes (one per member, its
// base class one more). Used in unevaluated contexts only.
struct AnyValue {
  template <typename T>
  operator T() const;  // NOLINT: implicit on purpose
};

template <typename T, std::size_t... I>
constexpr bool TakesInitializers(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyValue{})...}; };
}

template <typename T, std::size_t N = 0>
constexpr std::size_t AggregateInitializers() {
  if constexpr (N < 64 && TakesInitializers<T>(std::make_index_sequence<N + 1>()))
    return AggregateInitializers<T, N + 1>();
  else
    return N;
}

// TrialConfig's own members (its ParallelDegrees base aside). A new member fails to compile
// here: give it a row in experiments/trial_fields.cc (or say below which row holds it), then
// count it.
constexpr std::size_t kTrialConfigMembers = 35;
static_assert(AggregateInitializers<TrialConfig>() == 1 + kTrialConfigMembers,
              "TrialConfig has a member the field table does not know: add its row to "
              "experiments/trial_fields.cc, a sample below, and count it here");
static_assert(AggregateInitializers<ParallelDegrees>() == kDegreeTable.size(),
              "ParallelDegrees has a member kDegreeTable does not list");

// Members that share another member's row: model_overrides, weights, vae_weights and
// weights_variant are `model`'s; height is `resolution`'s.
constexpr std::size_t kMembersInAnotherRow = 5;

// A value away from the default for every row but the degrees (whose rows are kDegreeTable's).
const std::map<std::string, nlohmann::json>& Samples() {
  static const std::map<std::string, nlohmann::json> samples = {
      {"attention", "math"},
      {"batch", 2},
      {"cache", {{"kind", "fbcache"}, {"threshold", 0.1}, {"warmup_steps", 1}}},
      {"command", {"prog", "{seed}"}},
      {"custom", {{"heads", 3}}},
      {"engine", {{"start", {"server", "{port}"}}}},
      {"frames", 17},
      {"graph", "cuda_graph"},
      {"model", "pixart-alpha-tiny"},
      {"pad_heads", true},
      {"pipefusion_patches", 4},
      {"pipefusion_warmup_steps", 2},
      {"precision", "fp16"},
      {"profile", "trace"},
      {"profile_blocks", true},
      {"quality", {{"max_output_error", 0.1}}},
      {"quant", "fp8_rowwise"},
      {"quant_exclude", {"proj_out"}},
      {"repeats", 9},
      {"resolution", 512},
      {"schedule", {{"high_precision_first", 1}, {"high_precision_last", 0}}},
      {"scope", "pipeline"},
      {"seed", 3},
      {"serve", {{"rate", 2.5}, {"requests", 8}}},
      {"steps", 7},
      {"timeout_s", "90s"},
      {"vae_parallel", 2},
      {"vae_tile", 128},
      {"warmup", 1},
      {"workload", "command"},
  };
  return samples;
}

// `base` with `key` set to `value` through the row's own setter.
TrialConfig With(TrialConfig base, const std::string& key, const nlohmann::json& value) {
  const TrialField* field = FieldByKey(key);
  std::string expected;
  EXPECT_TRUE(field && field->set(base, value, &expected)) << key << ": " << expected;
  return base;
}

// A trial the quantization and schedule rows apply to: PipeFusion 2 (so its patches and
// warm-up count), quantized (so its exclusions count).
TrialConfig Base() {
  TrialConfig base;
  base.pipefusion = 2;
  return base;
}

TEST(TrialFieldsTest, EveryMemberHasARowAndEveryRowASample) {
  std::size_t rows = 0;
  for (const TrialField& field : TrialFields()) {
    if (field.role == FieldRole::kDegree) continue;
    ++rows;
    EXPECT_TRUE(Samples().count(field.key)) << "no sample for field '" << field.key << "'";
  }
  EXPECT_EQ(rows + kMembersInAnotherRow, kTrialConfigMembers);
  EXPECT_EQ(Samples().size(), rows);
}

TEST(TrialFieldsTest, RowsAreSortedByKeyAndFoundBySettingAndKey) {
  std::string last;
  for (const TrialField& field : TrialFields()) {
    EXPECT_LT(last, field.key);
    last = field.key;
    EXPECT_EQ(FieldByKey(field.key), &field);
    if (!field.setting.empty()) {
      EXPECT_EQ(FieldBySetting(field.setting), &field);
    }
  }
  EXPECT_EQ(FieldBySetting("timeout")->key, "timeout_s");
  EXPECT_EQ(FieldBySetting("workload"), nullptr);  // the sweep's own key, not a setting
}

// Every computation field is in the key when set; no policy field ever is.
// A field whose identity default is another field's value names a row of the table, and a
// configuration at that value keeps it out of the key (pipefusion_patches at pipefusion).
TEST(TrialFieldsTest, AnIdentityDefaultFromAnotherFieldNamesARow) {
  int with_default_field = 0;
  for (const TrialField& field : TrialFields()) {
    if (field.identity_default_field.empty()) continue;
    ++with_default_field;
    EXPECT_NE(FieldByKey(field.identity_default_field), nullptr) << field.key;
    EXPECT_FALSE(field.identity_default) << field.key << ": two defaults";
  }
  EXPECT_GE(with_default_field, 1);
  TrialConfig patches_at_stages;
  patches_at_stages.pipefusion = 4;
  patches_at_stages.pipefusion_patches = 4;
  EXPECT_EQ(IdentityText(patches_at_stages).find("pipefusion_patches"), std::string::npos);
  patches_at_stages.pipefusion_patches = 8;
  EXPECT_NE(IdentityText(patches_at_stages).find("\"pipefusion_patches\":8"), std::string::npos);
  EXPECT_EQ(IdentityText(patches_at_stages),
            IdentityJson(ComputationJson(patches_at_stages)).dump());
}

TEST(TrialFieldsTest, ComputationFieldsKeyAndPolicyFieldsDoNot) {
  for (const TrialField& field : TrialFields()) {
    if (field.role == FieldRole::kDegree) continue;
    TrialConfig base = Base();
    if (field.key == "quant_exclude") base.quant = Quantization::kFp8Rowwise;
    const TrialConfig set = With(base, field.key, Samples().at(field.key));
    if (field.role == FieldRole::kPolicy) {
      EXPECT_EQ(TrialKey(set), TrialKey(base)) << field.key;
      EXPECT_NE(CanonicalText(set), CanonicalText(base)) << field.key;  // still in trial.json
    } else {
      EXPECT_NE(TrialKey(set), TrialKey(base)) << field.key;
      EXPECT_TRUE(field.is_set(set)) << field.key;
      EXPECT_FALSE(field.is_set(TrialConfig{})) << field.key;
    }
  }
}

// The canonical JSON written field by field (the plan's JSON) is CanonicalJson's dump, byte for
// byte, with every field set in turn.
TEST(TrialFieldsTest, CanonicalJsonWrittenFieldByFieldIsTheDump) {
  std::vector<TrialConfig> configs = {TrialConfig{}, Base()};
  for (const TrialField& field : TrialFields())
    if (field.role != FieldRole::kDegree)
      configs.push_back(With(Base(), field.key, Samples().at(field.key)));
  for (const TrialConfig& config : configs) {
    std::string out;
    JsonAppender json(out);
    AppendCanonicalJson(config, json, out, 2, 0);
    EXPECT_EQ(out, CanonicalJson(config).dump(2));
  }
}

// The identity text written from the table is the stored computation's (KeyOfComputation reads
// a database's), with every field set in turn: one key for one trial, however it is computed.
TEST(TrialFieldsTest, TheKeyFromTheTableIsTheKeyOfTheStoredComputation) {
  std::vector<TrialConfig> configs = {TrialConfig{}, Base()};
  for (const TrialField& field : TrialFields())
    if (field.role != FieldRole::kDegree)
      configs.push_back(With(Base(), field.key, Samples().at(field.key)));
  for (const TrialConfig& config : configs) {
    EXPECT_EQ(IdentityText(config), IdentityJson(ComputationJson(config)).dump());
    EXPECT_EQ(TrialKey(config), KeyOfComputation(ComputationJson(config)));
  }
}

// The reference trial resets exactly the fields whose role says so, and keeps the others.
TEST(TrialFieldsTest, TheReferenceResetsEveryFieldItsRoleSaysAndKeepsTheRest) {
  for (const TrialField& field : TrialFields()) {
    if (field.role == FieldRole::kPolicy || field.role == FieldRole::kDegree) continue;
    TrialConfig base = Base();
    if (field.key == "quant_exclude") base.quant = Quantization::kFp8Rowwise;
    const TrialConfig set = With(base, field.key, Samples().at(field.key));
    const nlohmann::json reference = ComputationJson(ReferenceConfig(set));
    const nlohmann::json of_base = ComputationJson(ReferenceConfig(base));
    if (ResetInReference(field.role))
      EXPECT_EQ(reference, of_base) << field.key << " (" << FieldRoleName(field.role) << ")";
    else
      EXPECT_NE(reference, of_base) << field.key << " (" << FieldRoleName(field.role) << ")";
  }
  TrialConfig parallel;
  for (const DegreeInfo& d : kDegreeTable) parallel.*d.member = 2;
  EXPECT_EQ(TrialKey(ReferenceConfig(parallel)), TrialKey(TrialConfig{}));
}

// The roles the knobs declare, pinned: a knob that changed role would change every reference.
TEST(TrialFieldsTest, TheKnobsDeclareTheirRoles) {
  const std::map<std::string, FieldRole> roles = {{"attention", FieldRole::kApproximates},
                                                  {"quant", FieldRole::kApproximates},
                                                  {"quant_exclude", FieldRole::kApproximates},
                                                  {"schedule", FieldRole::kApproximates},
                                                  {"cache", FieldRole::kSkipsWork},
                                                  {"vae_parallel", FieldRole::kSplitsWork},
                                                  {"pipefusion_patches", FieldRole::kSplitsWork},
                                                  {"graph", FieldRole::kPlain},
                                                  {"serve", FieldRole::kPlain},
                                                  {"ulysses", FieldRole::kDegree},
                                                  {"warmup", FieldRole::kPolicy}};
  for (const auto& [key, role] : roles) EXPECT_EQ(FieldByKey(key)->role, role) << key;
  EXPECT_EQ(FieldsWithRole({FieldRole::kSkipsWork}), std::vector<std::string>{"cache"});
}

// Key format v2's identity defaults are frozen: a field, once listed, keeps its default forever
// (experiments/trial_identity.h). Pinned here as they were before the table held them; a new
// field appends its own.
TEST(TrialFieldsTest, IdentityDefaultsAreFrozen) {
  const std::map<std::string, nlohmann::json> frozen = {
      {"attention", "auto"},
      {"batch", 1},
      {"cache", "none"},
      {"cfg", 1},
      {"command", nlohmann::json::array()},
      {"custom", nlohmann::json::object()},
      {"dp", 1},
      {"engine", nlohmann::json::object()},
      {"frames", 0},
      {"graph", "eager"},
      {"model", "pixart-alpha"},
      {"pipefusion", 1},
      {"pipefusion_warmup_steps", 1},
      {"precision", "bf16"},
      {"quant", "none"},
      {"quant_exclude", nlohmann::json::array()},
      {"resolution", 1024},
      {"ring", 1},
      {"schedule", nlohmann::json::object()},
      {"scope", "denoise"},
      {"seed", 0},
      {"serve", "none"},
      {"steps", 20},
      {"tp", 1},
      {"ulysses", 1},
      {"vae_parallel", 1},
      {"vae_tile", 0},
      {"workload", "dit"},
  };
  std::map<std::string, nlohmann::json> table;
  for (const TrialField& field : TrialFields())
    if (field.identity_default) table.emplace(field.key, *field.identity_default);
  EXPECT_EQ(table, frozen);
  // pipefusion_patches defaults to the PipeFusion degree (trial_identity.cc), not to a constant.
  EXPECT_EQ(IdentityDefault("pipefusion_patches", {{"pipefusion", 4}}), nlohmann::json(4));
}

// An enum field's error lists exactly the names its parser takes.
TEST(TrialFieldsTest, AnEnumFieldExpectsTheNamesItsParserTakes) {
  const std::map<std::string, const std::vector<std::string_view>*> enums = {
      {"attention", &AttentionBackendNames()},
      {"quant", &QuantizationNames()},
      {"graph", &GraphModeNames()},
      {"precision", &PrecisionNames()},
      {"scope", &ScopeNames()}};
  for (const auto& [key, names] : enums) {
    TrialConfig config;
    std::string expected;
    EXPECT_FALSE(FieldByKey(key)->set(config, "nonsense", &expected));
    EXPECT_EQ(expected, OneOf(*names)) << key;
    for (std::string_view name : *names)
      EXPECT_TRUE(FieldByKey(key)->set(config, std::string(name), &expected)) << name;
  }
}

// Every "not built" pair names both fields as set and is found whichever else is set.
TEST(TrialFieldsTest, EveryNotBuiltPairIsFoundAndNamesBothFields) {
  for (const NotBuiltPair& pair : NotBuiltPairs()) {
    TrialConfig config;
    for (std::string_view key : {pair.a, pair.b}) {
      if (const auto* d = std::find_if(kDegreeTable.begin(), kDegreeTable.end(),
                                       [&](const DegreeInfo& info) { return info.name == key; });
          d != kDegreeTable.end())
        config.*d->member = 2;
      else
        config = With(config, std::string(key), Samples().at(std::string(key)));
    }
    const auto problem = NotBuiltProblem(config);
    ASSERT_TRUE(problem) << pair.a << " with " << pair.b;
    EXPECT_NE(problem->find(std::string(pair.a)), std::string::npos) << *problem;
    EXPECT_NE(problem->find(std::string(pair.b)), std::string::npos) << *problem;
    EXPECT_NE(problem->find(std::string(pair.why)), std::string::npos) << *problem;
  }
  TrialConfig cached = With(TrialConfig{}, "cache", Samples().at("cache"));
  cached.pipefusion = 2;
  EXPECT_EQ(NotBuiltProblem(cached).value_or(""),
            "cache: fbcache with pipefusion=2 is not built: PipeFusion's stages run different "
            "blocks, so no rank holds the first block's residual and the others' at once");
  EXPECT_FALSE(NotBuiltProblem(TrialConfig{}));
}

}  // namespace
}  // namespace ditbench::trial_fields_test

#include "experiments/trial.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ditbench {
namespace {

// The canonical form and key of the built-in default trial. These goldens pin trial identity:
// if one changes, every stored result stops matching its trial. Change them only on purpose,
// with a note in docs/sweep-spec.md.
constexpr const char* kDefaultCanonical =
    R"({"batch":1,"cfg":1,"dp":1,"model":"pixart-alpha","pipefusion":1,"pipefusion_patches":1,)"
    R"("precision":"bf16","profile_blocks":false,)"
    R"("repeats":{"max":5,"max_seconds":0.0,"min":5,"target_rel_ci":0.0},"resolution":1024,)"
    R"("ring":1,"scope":"denoise","seed":0,"steps":20,"timeout_s":1800.0,"ulysses":1,"warmup":5})";

TEST(TrialTest, CanonicalTextIsSortedCompactAndPinned) {
  EXPECT_EQ(CanonicalText(TrialConfig{}), kDefaultCanonical);
}

TEST(TrialTest, KeyIsTheSha256PrefixOfTheCanonicalText) {
  EXPECT_EQ(TrialKey(TrialConfig{}), Sha256Hex(kDefaultCanonical).substr(0, 16));
  EXPECT_EQ(TrialKey(TrialConfig{}), "af93956f36c55cea");
  TrialConfig tiny;
  tiny.model = "pixart-alpha-tiny";
  tiny.resolution = 256;
  tiny.ulysses = 2;
  EXPECT_EQ(TrialKey(tiny), "beceb9a9cd047d17");
}

TEST(TrialTest, Sha256MatchesAKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TrialTest, AnyAxisChangesTheKey) {
  TrialConfig base;
  TrialConfig other = base;
  other.precision = Precision::kFp16;
  EXPECT_NE(TrialKey(base), TrialKey(other));
  other = base;
  other.repeats.target_rel_ci = 0.01;
  EXPECT_NE(TrialKey(base), TrialKey(other));
}

TEST(TrialTest, JsonRoundTripPreservesTheConfig) {
  TrialConfig c;
  c.model = "pixart-sigma";
  c.precision = Precision::kTf32;
  c.scope = Scope::kForward;
  c.repeats = {3, 9, 0.02, 60};
  c.cfg = 2;
  c.seed = -7;
  c.pipefusion_patches = 4;
  c.model_overrides = {{"depth", 14}, {"hidden", 768}};
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(c)), c);
}

TEST(TrialTest, OverriddenModelIsAnObjectAndPlainPresetAString) {
  TrialConfig c;
  EXPECT_TRUE(CanonicalJson(c)["model"].is_string());
  c.model_overrides = {{"depth", 14}};
  EXPECT_EQ(CanonicalJson(c)["model"].dump(), R"({"depth":14,"preset":"pixart-alpha"})");
  EXPECT_NE(TrialKey(c), TrialKey(TrialConfig{}));
}

TEST(TrialTest, PipefusionPatchesDefaultToTheDegree) {
  TrialConfig c;
  c.pipefusion = 4;
  EXPECT_EQ(CanonicalJson(c)["pipefusion_patches"], 4);
  TrialConfig explicit_patches = c;
  explicit_patches.pipefusion_patches = 4;
  EXPECT_EQ(TrialKey(c), TrialKey(explicit_patches));  // same trial, same key
}

TEST(TrialTest, MalformedJsonNamesTheKey) {
  auto j = CanonicalJson(TrialConfig{});
  j["precision"] = "fp64";
  try {
    TrialConfigFromJson(j);
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp64"), std::string::npos);
  }
}

TEST(TrialTest, StatusNamesRoundTrip) {
  for (auto s : {TrialStatus::kPending, TrialStatus::kRunning, TrialStatus::kOk,
                 TrialStatus::kSkipped, TrialStatus::kOom, TrialStatus::kTimeout,
                 TrialStatus::kCrashed, TrialStatus::kFailed, TrialStatus::kInterrupted})
    EXPECT_EQ(ParseStatus(StatusName(s)), s);
}

}  // namespace
}  // namespace ditbench

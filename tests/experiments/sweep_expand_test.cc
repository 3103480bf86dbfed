#include "experiments/sweep_expand.h"

#include <cstdint>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/sweeps.h"

namespace ditbench::sweep_expand_test {
namespace {

SweepSpec Parse(const std::string& yaml) { return test::ParseValidSweep(yaml); }

std::vector<SpecDiagnostic> Errors(const std::string& yaml) {
  return ParseSweep(yaml, "t.yaml").errors;
}

TEST(SweepExpandTest, ZipAdvancesAxesTogetherAndCrossesTheMatrix) {
  auto spec = Parse(R"(name: z
matrix: {ulysses: [1, 2]}
zip:
  - {resolution: [1024, 2048], pipefusion_patches: [4, 8]}
)");
  auto trials = ExpandSweep(spec, 8).trials;
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_EQ(trials[0].resolution, 1024);
  EXPECT_EQ(trials[0].pipefusion_patches, 4);
  EXPECT_EQ(trials[1].resolution, 2048);
  EXPECT_EQ(trials[1].pipefusion_patches, 8);
  EXPECT_EQ(trials[1].ulysses, 1);
  EXPECT_EQ(trials[2].ulysses, 2);
}

// A sweep of `axes` matrix axes of two values each: 2^axes trials.
SweepSpec PowerOfTwoSweep(int axes) {
  SweepSpec spec;
  for (int i = 0; i < axes; ++i) spec.matrix.push_back(Axis{fmt::format("a{}", i), {{}, {}}});
  return spec;
}

// 2^64 trials does not fit in 64 bits: the message still says the count, not "more than".
TEST(SweepExpandTest, TrialCountTextIsExactBeyond64Bits) {
  EXPECT_EQ(UnfilteredTrialCountText(PowerOfTwoSweep(3)), "8");
  EXPECT_EQ(UnfilteredTrialCountText(PowerOfTwoSweep(64)), "18446744073709551616");
  EXPECT_EQ(UnfilteredTrialCount(PowerOfTwoSweep(64)), SIZE_MAX);  // saturated
  EXPECT_EQ(UnfilteredTrialCountText(PowerOfTwoSweep(127)),
            "170141183460469231731687303715884105728");
  EXPECT_EQ(UnfilteredTrialCountText(PowerOfTwoSweep(128)), "more than 2^127");
}

TEST(SweepExpandTest, MismatchedZipLengthsAreLocated) {
  auto errors = Errors("name: z\nzip:\n  - {resolution: [1024, 2048], ulysses: [1]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_NE(errors[0].message.find("resolution=2, ulysses=1"), std::string::npos)
      << errors[0].message;
}

TEST(SweepExpandTest, AKeyMaySweepInOnePlaceOnly) {
  auto errors =
      Errors("name: z\nmatrix: {ulysses: [1, 2]}\nzip:\n  - {ulysses: [1, 2], ring: [1, 2]}\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("matrix and zip"), std::string::npos);
}

TEST(SweepExpandTest, IncludeAddsPointsOnTheDefaults) {
  auto spec = Parse(R"(name: i
defaults: {steps: 7}
matrix: {ulysses: [1, 2]}
include:
  - {model: pixart-sigma, ulysses: 8}
)");
  auto trials = ExpandSweep(spec, 8).trials;
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_EQ(trials[2].model, "pixart-sigma");
  EXPECT_EQ(trials[2].ulysses, 8);
  EXPECT_EQ(trials[2].steps, 7);
}

TEST(SweepExpandTest, ExcludeRemovesPartialMatchesAndCountsThem) {
  auto spec = Parse(R"(name: e
matrix: {precision: [bf16, fp16], resolution: [1024, 2048], ulysses: [1, 2]}
exclude:
  - {precision: fp16, resolution: 2048}
)");
  auto expanded = ExpandSweep(spec, 8);
  EXPECT_EQ(expanded.trials.size(), 6u);
  EXPECT_EQ(expanded.excluded, 2u);
  for (const auto& t : expanded.trials)
    EXPECT_FALSE(t.precision == Precision::kFp16 && t.resolution == 2048);
}

TEST(SweepExpandTest, ExcludeComparesNormalisedValues) {
  // 30m and 1800 are the same timeout.
  auto spec = Parse("name: e\nmatrix: {timeout: [30m, 1h]}\nexclude:\n  - {timeout: 1800}\n");
  auto expanded = ExpandSweep(spec, 8);
  ASSERT_EQ(expanded.trials.size(), 1u);
  EXPECT_DOUBLE_EQ(expanded.trials[0].timeout_s, 3600);
}

TEST(SweepExpandTest, WhereFiltersWithGpusAndNamedPrecisions) {
  auto spec = Parse(R"(name: w
matrix: {ulysses: [1, 2, 4, 8], ring: [1, 2], precision: [bf16, fp32]}
where:
  - "ulysses * ring <= gpus"
  - "precision == bf16 || world_size == 1"
)");
  auto expanded = ExpandSweep(spec, 4);
  // ulysses*ring <= 4: (1,1) (1,2) (2,1) (2,2) (4,1) -> 5 x 2 precisions = 10; fp32 only at 1.
  EXPECT_EQ(expanded.trials.size(), 6u);
  EXPECT_EQ(expanded.failed_where[0], 6u);
  EXPECT_EQ(expanded.failed_where[1], 4u);
}

TEST(SweepExpandTest, WhereSeesTheResolvedModel) {
  auto spec = Parse(
      "name: w\nmatrix: {ulysses: [1, 2, 4, 8]}\nwhere: \"heads % ulysses == 0 && tokens / sp >= "
      "1024\"\n");
  // pixart-alpha at 1024 px: 4096 tokens; ulysses 8 leaves 512 per rank.
  EXPECT_EQ(ExpandSweep(spec, 8).trials.size(), 3u);
}

TEST(SweepExpandTest, BadExpressionsAreLocatedErrors) {
  auto errors =
      Errors("name: w\nwhere:\n  - \"ulysses * \"\n  - \"ulysses = 2\"\n  - \"gpu > 1\"\n");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_NE(errors[1].message.find("compare with '=='"), std::string::npos) << errors[1].message;
  EXPECT_NE(errors[2].message.find("gpu"), std::string::npos) << errors[2].message;
}

TEST(SweepExpandTest, ModelOverridesResizeThePreset) {
  auto spec = Parse(
      "name: m\nmatrix:\n  model: [pixart-alpha, {preset: pixart-alpha, depth: 14, hidden: 768, "
      "heads: 12}]\n");
  auto trials = ExpandSweep(spec, 8).trials;
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_TRUE(trials[0].model_overrides.empty());
  EXPECT_EQ(trials[1].model_overrides.at("depth"), 14);
  EXPECT_NE(TrialKey(trials[0]), TrialKey(trials[1]));
}

TEST(SweepExpandTest, BadModelOverridesAreLocatedWithSuggestions) {
  auto errors = Errors(
      "name: m\ndefaults:\n  model: {preset: pixart-alpha, dept: 14}\nmatrix:\n  model: [{preset: "
      "pixart-alpha, hidden: 1000}]\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].message.find("did you mean 'depth'?"), std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[1].message.find("not divisible by heads"), std::string::npos)
      << errors[1].message;
}

TEST(SweepExpandTest, OversizedSweepIsRejectedBeforeExpanding) {
  std::string yaml = "name: big\nmatrix:\n";
  for (const char* key : {"seed", "steps", "warmup", "batch"}) {
    yaml += std::string("  ") + key + ": [";
    for (int i = 1; i <= 40; ++i) yaml += std::to_string(i) + (i < 40 ? ", " : "]\n");
  }
  auto errors = Errors(yaml);  // 40^4 = 2,560,000 trials
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("2560000 trials"), std::string::npos) << errors[0].message;
}

TEST(SweepExpandTest, AliasBombIsAnErrorNotAHang) {
  // Nine levels of ten aliases each: 10^9 nodes if expanded naively.
  std::string anchored = "x:\n";
  for (int i = 0; i < 9; ++i) {
    std::string item = i == 0 ? std::string("1") : std::string("*a") + std::to_string(i - 1);
    std::string line = std::string("  - &a") + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) {
      line += item;
      line += j < 9 ? ", " : "]\n";
    }
    anchored += line;
  }
  anchored += "name: bomb\ndefaults:\n  repeats: *a8\n";
  auto errors = Errors(anchored);
  ASSERT_FALSE(errors.empty());
  bool mentions_size = false;
  for (const auto& e : errors)
    mentions_size |= e.message.find("too many nodes") != std::string::npos;
  EXPECT_TRUE(mentions_size) << errors[0].ToString();
}

TEST(SweepExpandTest, HostileInputsGiveDiagnostics) {
  for (const std::string& text :
       {std::string("\x00\x01\x02garbage", 10), std::string("name: x\nmatrix: [[[[[[[[[["),
        std::string(5000, '['), std::string("name: x\nmatrix: {resolution: [1e400]}\n"),
        std::string("name: x\ndefaults: {steps: 99999999999999999999}\n"),
        std::string("{name: x, name: y}"), std::string("name: x\ndefaults: {timeout: -5s}\n"),
        std::string("name: x\nwhere: [\"" + std::string(3000, '(') + "\"]\n"),
        std::string("name: x\nmatrix: {ulysses: []}\n"), std::string("? [a, b]\n: c\n")}) {
    ParseResult r = ParseSweep(text, "hostile.yaml");
    EXPECT_FALSE(r.ok()) << text.substr(0, 40);
    for (const auto& e : r.errors) {
      EXPECT_GE(e.line, 1);
      EXPECT_EQ(e.ToString().find('\n'), std::string::npos) << "multi-line message";
    }
  }
}

}  // namespace
}  // namespace ditbench::sweep_expand_test

namespace ditbench::sweep_expand_test {
namespace {

// Found by the fuzzer: a folded multi-line `where` scalar put a newline into the message.
TEST(SweepSpecDiagnosticsTest, MultiLineValuesStayOnOneLine) {
  // A literal block scalar keeps its newline; a quoted key may hold an escaped one.
  auto errors =
      ParseSweep("name: x\nwhere: |\n  ulysses <= gp\n  more\nmatrix:\n  \"bad\\nkey\": [1]\n",
                 "multi.yaml")
          .errors;
  ASSERT_EQ(errors.size(), 2u);
  std::string all;
  for (const auto& e : errors) {
    EXPECT_EQ(e.ToString().find('\n'), std::string::npos) << e.ToString();
    all += e.ToString() + "|";
  }
  EXPECT_NE(all.find("'bad\\nkey'"), std::string::npos) << all;
  EXPECT_NE(all.find("gp\\nmore"), std::string::npos) << all;
}

}  // namespace
}  // namespace ditbench::sweep_expand_test

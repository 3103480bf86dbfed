#include "experiments/sweep_spec.h"

#include "experiments/sweep_expand.h"
#include "experiments/trial_settings.h"

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/bounded_child.h"
#include "tests/support/temp_dir.h"

namespace ditbench::sweep_spec_test {
namespace {

constexpr const char* kQuickstart = R"(name: quick
defaults:
  model: pixart-alpha-tiny
  steps: 4
  warmup: 2
  repeats: 5
  timeout: 3m
matrix:
  resolution: [256, 512]
  precision: [fp32, bf16]
  ulysses: [1, 2]
)";

TEST(SweepSpecTest, ExpandsTheMatrixInFileOrderLastAxisFastest) {
  ParseResult r = ParseSweep(kQuickstart, "quick.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
  auto trials = ExpandSweep(r.spec, 8).trials;
  ASSERT_EQ(trials.size(), 8u);
  EXPECT_EQ(trials[0].resolution, 256);
  EXPECT_EQ(trials[0].precision, Precision::kFp32);
  EXPECT_EQ(trials[0].ulysses, 1);
  EXPECT_EQ(trials[1].ulysses, 2);
  EXPECT_EQ(trials[2].precision, Precision::kBf16);
  EXPECT_EQ(trials[7].resolution, 512);
  for (const auto& t : trials) {
    EXPECT_EQ(t.model, "pixart-alpha-tiny");
    EXPECT_EQ(t.steps, 4);
    EXPECT_EQ(t.warmup, 2);
    EXPECT_EQ(t.repeats.min, 5);
    EXPECT_EQ(t.repeats.max, 5);
    EXPECT_DOUBLE_EQ(t.timeout_s, 180);
  }
}

// The sweeps the project ships (sweeps/, bench/) are the first a user runs or copies: every
// one parses, and a `command` sweep's `attention` is its program's own axis.
TEST(SweepSpecTest, EveryShippedSweepParses) {
  const std::filesystem::path root = std::filesystem::path(DITBENCH_FIXTURES) / ".." / "..";
  int parsed = 0;
  for (const char* folder : {"sweeps", "bench"})
    for (const auto& entry : std::filesystem::directory_iterator(root / folder)) {
      if (entry.path().extension() != ".yaml") continue;
      const ParseResult r = ParseSweepFile(entry.path());
      EXPECT_TRUE(r.ok()) << entry.path() << ": "
                          << (r.errors.empty() ? "" : r.errors[0].ToString());
      ++parsed;
    }
  EXPECT_GT(parsed, 20);
  const ParseResult command = ParseSweepFile(root / "sweeps" / "attention-command-cpu.yaml");
  ASSERT_TRUE(command.ok());
  const std::vector<TrialConfig> trials = ExpandSweep(command.spec, 1).trials;
  ASSERT_FALSE(trials.empty());
  EXPECT_EQ(trials[0].attention, AttentionBackend::kAuto);
  EXPECT_EQ(trials[0].custom.at("attention"), "math");
}

TEST(SweepSpecTest, DuplicateKeyIsLocatedAtItsSecondOccurrence) {
  ParseResult r = ParseSweep(
      "name: s\ndefaults:\n  model: pixart-alpha\n  steps: 2\n  model: pixart-sigma\n", "dup.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString(), "dup.yaml:5:3: 'model': given twice (first at line 3)");
}

TEST(SweepSpecTest, DuplicateKeysAreFoundInNestedMapsAndAtTheTop) {
  ParseResult r = ParseSweep(
      "name: s\nmatrix:\n  ulysses: [1]\ninclude:\n  - {seed: 1, seed: 2}\nname: t\n", "dup.yaml");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].ToString(), "dup.yaml:5:15: 'seed': given twice (first at line 5)");
  EXPECT_EQ(r.errors[1].ToString(), "dup.yaml:6:1: 'name': given twice (first at line 1)");
}

TEST(SweepSpecTest, NameMustBeNonEmptyPrintableText) {
  for (const char* yaml : {"name: ''\n", "name: \"a\\0b\"\n", "name: \"a\\x1b[31mred\"\n"}) {
    ParseResult r = ParseSweep(yaml, "name.yaml");
    ASSERT_EQ(r.errors.size(), 1u) << yaml;
    EXPECT_NE(
        r.errors[0].ToString().find("'name': expected a non-empty name of printable characters"),
        std::string::npos)
        << r.errors[0].ToString();
  }
  EXPECT_TRUE(ParseSweep("name: pixart sp 2k\n", "name.yaml").ok());
}

TEST(SweepSpecTest, ProfileTraceIsASweepFieldOutsideEveryTrialKeyCarriedToTheWorker) {
  const char* base = "name: p\ndefaults: {model: pixart-alpha-tiny}\n";
  ParseResult plain = ParseSweep(base, "p.yaml");
  ASSERT_TRUE(plain.ok());
  ParseResult traced = ParseSweep(std::string(base) + "profile: trace\n", "p.yaml");
  ASSERT_TRUE(traced.ok()) << traced.errors[0].ToString();
  const TrialConfig config = ExpandSweep(traced.spec, 1).trials.at(0);
  EXPECT_TRUE(config.profile_trace);
  EXPECT_FALSE(ExpandSweep(plain.spec, 1).trials.at(0).profile_trace);
  EXPECT_EQ(TrialKey(config), TrialKey(ExpandSweep(plain.spec, 1).trials.at(0)));
  // trial.json carries it in the configuration's policy; reading it back keeps it.
  EXPECT_EQ(CanonicalJson(config).at("profile"), "trace");
  EXPECT_FALSE(CanonicalJson(ExpandSweep(plain.spec, 1).trials.at(0)).contains("profile"));
  EXPECT_TRUE(TrialConfigFromJson(CanonicalJson(config)).profile_trace);
  ParseResult none = ParseSweep(std::string(base) + "profile: none\n", "p.yaml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(ExpandSweep(none.spec, 1).trials.at(0).profile_trace);
  ParseResult bad = ParseSweep(std::string(base) + "profile: kineto\n", "p.yaml");
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].ToString(),
            "p.yaml:3:10: 'profile': expected 'trace' (a profiler pass after the timed "
            "iterations: one Chrome trace per rank) or 'none'");
}

TEST(SweepSpecTest, QualityGatesAreASweepFieldOutsideEveryTrialKeyCarriedWithTheTrial) {
  const char* base = "name: q\ndefaults: {model: pixart-alpha-tiny, scope: pipeline}\n";
  ParseResult plain = ParseSweep(base, "q.yaml");
  ASSERT_TRUE(plain.ok());
  ParseResult gated = ParseSweep(
      std::string(base) + "quality: {max_output_error: 1e-3, min_psnr: 35, min_ssim: 0.9}\n",
      "q.yaml");
  ASSERT_TRUE(gated.ok()) << gated.errors[0].ToString();
  const TrialConfig config = ExpandSweep(gated.spec, 1).trials.at(0);
  EXPECT_EQ(config.quality.max_output_error, 1e-3);
  EXPECT_EQ(config.quality.min_psnr, 35);
  EXPECT_EQ(config.quality.min_ssim, 0.9);
  const TrialConfig ungated = ExpandSweep(plain.spec, 1).trials.at(0);
  EXPECT_TRUE(ungated.quality.empty());
  EXPECT_EQ(TrialKey(config), TrialKey(ungated));
  // Carried in the configuration's policy; read back as it was; absent without a gate.
  EXPECT_EQ(CanonicalJson(config).at("quality"),
            (nlohmann::json{{"max_output_error", 1e-3}, {"min_psnr", 35}, {"min_ssim", 0.9}}));
  EXPECT_FALSE(CanonicalJson(ungated).contains("quality"));
  EXPECT_EQ(TrialConfigFromJson(CanonicalJson(config)).quality, config.quality);
}

TEST(SweepSpecTest, AQualityReferenceNamesATrialKeyEvenOfDigitsOnly) {
  for (const char* key : {"5ebde67bb4365347", "0123456789012345"}) {
    const ParseResult r = ParseSweep(
        std::string("name: q\ndefaults: {model: pixart-alpha-tiny}\nquality: {reference: ") + key +
            "}\n",
        "q.yaml");
    ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
    EXPECT_EQ(r.spec.defaults.quality.reference, key);
  }
}

TEST(SweepSpecTest, BadQualityGatesAreOneLocatedLineEach) {
  const std::string base = "name: q\ndefaults: {model: pixart-alpha-tiny}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"quality: 35\n",
       "q.yaml:3:10: 'quality': expected a map of quality gates, e.g. {max_output_error: 1e-3, "
       "min_psnr: 35}"},
      {"quality: {}\n",
       "q.yaml:3:10: 'quality': expected a map of quality gates, e.g. {max_output_error: 1e-3, "
       "min_psnr: 35}"},
      {"quality: {min_psrn: 35}\n",
       "q.yaml:3:11: 'min_psrn': unknown key in quality; expected one of: max_output_error, "
       "min_psnr, min_ssim, restarts, reference; did you mean 'min_psnr'?"},
      {"quality: {reference: 5ebde67bb436534}\n",
       "q.yaml:3:22: 'quality.reference': expected a trial key: 16 hexadecimal characters, as "
       "`ditbench query` shows trial_key (the trial this one's output is compared with)"},
      {"quality: {min_psnr: -3}\n",
       "q.yaml:3:21: 'quality.min_psnr': expected a number of dB above 0 (the least PSNR of the "
       "decoded image, e.g. 35)"},
      {"quality: {min_ssim: 1.5}\n",
       "q.yaml:3:21: 'quality.min_ssim': expected a number above 0 and at most 1 (the least "
       "SSIM of the decoded image)"},
      {"quality: {max_output_error: [1]}\n",
       "q.yaml:3:29: 'quality.max_output_error': expected a number above 0 (the most relative "
       "L2 error against the 1-rank trial, e.g. 1e-3)"},
      {"quality: {max_output_error: \"1e-3\"}\n",
       "q.yaml:3:29: 'quality.max_output_error': expected a number above 0 (the most relative "
       "L2 error against the 1-rank trial, e.g. 1e-3)"},
  };
  for (const auto& [yaml, message] : cases) {
    ParseResult r = ParseSweep(base + yaml, "q.yaml");
    ASSERT_EQ(r.errors.size(), 1u) << yaml;
    EXPECT_EQ(r.errors[0].ToString(), message) << yaml;
  }
}

TEST(SweepSpecTest, ReplicatesIsASweepFieldOutsideEveryTrialKey) {
  const char* base = "name: r\ndefaults: {model: pixart-alpha-tiny}\n";
  ParseResult one = ParseSweep(base, "r.yaml");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.spec.replicates, 1);
  ParseResult three = ParseSweep(std::string(base) + "replicates: 3\n", "r.yaml");
  ASSERT_TRUE(three.ok()) << three.errors[0].ToString();
  EXPECT_EQ(three.spec.replicates, 3);
  EXPECT_EQ(TrialKey(ExpandSweep(three.spec, 1).trials.at(0)),
            TrialKey(ExpandSweep(one.spec, 1).trials.at(0)));
  for (const char* bad :
       {"replicates: 0\n", "replicates: two\n", "replicates: [3]\n", "replicates: 1.5\n"}) {
    ParseResult r = ParseSweep(std::string(base) + bad, "r.yaml");
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(
        r.errors[0].ToString().rfind("r.yaml:3:13: 'replicates': expected an integer from 1 to", 0),
        0u)
        << r.errors[0].ToString();
  }
  ParseResult typo = ParseSweep(std::string(base) + "replicate: 3\n", "r.yaml");
  ASSERT_EQ(typo.errors.size(), 1u);
  EXPECT_NE(typo.errors[0].ToString().find("did you mean 'replicates'?"), std::string::npos);
}

TEST(SweepSpecTest, SearchAndOnOomAreCheckedSweepFields) {
  const std::string base = "name: r\n";
  ParseResult ok =
      ParseSweep(base + "search: {strategy: halving, keep: 0.25}\non_oom: skip_larger\n", "r.yaml");
  ASSERT_TRUE(ok.ok()) << ok.errors[0].ToString();
  EXPECT_DOUBLE_EQ(ok.spec.halving_keep, 0.25);
  EXPECT_TRUE(ok.spec.skip_larger_after_oom);
  for (const char* bad :
       {"search: {strategy: random, keep: 0.25}\n", "search: {strategy: halving, keep: 1}\n",
        "search: {strategy: halving}\n", "search: halving\n", "on_oom: skip\n"}) {
    ParseResult r = ParseSweep(base + bad, "r.yaml");
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(r.errors[0].line, 2) << r.errors[0].ToString();
  }
  ParseResult both =
      ParseSweep(base + "replicates: 3\nsearch: {strategy: halving, keep: 0.5}\n", "r.yaml");
  ASSERT_EQ(both.errors.size(), 1u);
  EXPECT_NE(both.errors[0].message.find("leave out 'replicates'"), std::string::npos);
}

TEST(SweepSpecTest, MisspelledKeyIsLocatedWithSuggestion) {
  ParseResult r = ParseSweep("name: x\nmatrix:\n  resolutoin: [256]\n", "bad.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  const auto& e = r.errors[0];
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 3);
  EXPECT_EQ(e.key, "resolutoin");
  EXPECT_NE(e.ToString().find("bad.yaml:3:3:"), std::string::npos) << e.ToString();
  EXPECT_NE(e.message.find("did you mean 'resolution'?"), std::string::npos) << e.message;
}

TEST(SweepSpecTest, EveryProblemIsReportedNotJustTheFirst) {
  ParseResult r = ParseSweep(
      "name: x\nbogus: 1\ndefaults:\n  steps: -3\n  model: pixart-alpa\nmatrix:\n  precision: "
      "[fp32, fp64]\n",
      "many.yaml");
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_EQ(r.errors[0].key, "bogus");
  EXPECT_EQ(r.errors[1].key, "defaults.steps");
  EXPECT_EQ(r.errors[1].line, 4);
  EXPECT_EQ(r.errors[2].key, "defaults.model");
  EXPECT_NE(r.errors[2].message.find("did you mean 'pixart-alpha'?"), std::string::npos);
  EXPECT_EQ(r.errors[3].key, "matrix.precision");
  EXPECT_EQ(r.errors[3].line, 7);
  EXPECT_EQ(r.errors[3].column, 21);  // the 'fp64' in [fp32, fp64]
}

TEST(SweepSpecTest, NonSquareResolutionsAndFramesAreAxes) {
  ParseResult r = ParseSweep(
      "name: v\ndefaults: {model: wan2.1-t2v-tiny}\nmatrix:\n"
      "  resolution: [832x480, 480x832, 512]\n  frames: [5, 9]\n",
      "video.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
  const auto trials = ExpandSweep(r.spec, 2).trials;
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[0].image_shape(), (ImageShape{832, 480, 5}));
  EXPECT_EQ(trials[3].image_shape(), (ImageShape{480, 832, 9}));
  EXPECT_EQ(trials[5].image_shape(), (ImageShape{512, 512, 9}));
  EXPECT_EQ(trials[5].height, 0);  // a square has one form

  ParseResult bad = ParseSweep("name: v\nmatrix:\n  resolution: [832x480, 832*480]\n", "bad.yaml");
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].ToString().rfind("bad.yaml:3:25: 'matrix.resolution': expected an "
                                           "integer from 16 to 16384 (a square image) or "
                                           "WIDTHxHEIGHT such as 1280x720",
                                           0),
            0u)
      << bad.errors[0].ToString();
}

TEST(SweepSpecTest, InvalidYamlIsADiagnosticNotAnException) {
  ParseResult r = ParseSweep("name: [unclosed\n", "broken.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("invalid YAML"), std::string::npos);
  EXPECT_GE(r.errors[0].line, 1);
}

TEST(SweepSpecTest, EmptyFileAndNonMapAreRejected) {
  EXPECT_FALSE(ParseSweep("", "empty.yaml").ok());
  EXPECT_FALSE(ParseSweep("- a\n- b\n", "list.yaml").ok());
  EXPECT_FALSE(ParseSweep("matrix: {}\n", "noname.yaml").ok());
}

TEST(SweepSpecTest, MissingFileIsADiagnostic) {
  ParseResult r = ParseSweepFile("/nonexistent/sweep.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString(),
            "/nonexistent/sweep.yaml: cannot read the sweep file: No such file or directory");
}

// Issue 49, finding 3: a sweep path that is a FIFO blocked `plan` and `run` for ever (deaf to
// SIGINT), and `plan /dev/zero` read until memory ran out. Both are refused before any read.
TEST(SweepSpecTest, AFifoSweepFileIsRefusedWithoutWaitingForAWriter) {
  test::TempDir dir;
  const auto fifo = dir / "sweep.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const test::ChildOutcome outcome = test::RunInBoundedChild(
      [&] {
        const ParseResult r = ParseSweepFile(fifo);
        return r.errors.size() == 1 &&
               r.errors[0].ToString() ==
                   fifo.string() +
                       ": cannot read the sweep file: is a FIFO; expected a regular file";
      },
      /*seconds=*/20);
  EXPECT_TRUE(outcome.passed()) << outcome.ToString();
}

TEST(SweepSpecTest, ADeviceSweepFileIsRefusedBeforeItIsRead) {
  const test::ChildOutcome outcome = test::RunInBoundedChild(
      [] {
        const ParseResult r = ParseSweepFile("/dev/zero");
        return r.errors.size() == 1 && r.errors[0].ToString().find(
                                           "/dev/zero: cannot read the sweep file: is a character "
                                           "device; expected a regular file") == 0;
      },
      /*seconds=*/20, /*address_space_bytes=*/std::uint64_t{2} << 30);
  EXPECT_TRUE(outcome.passed()) << outcome.ToString();
}

TEST(SweepSpecTest, ASweepFileOverTheSizeCapIsRefusedBeforeItIsRead) {
  test::TempDir dir;
  const auto big = dir / "big.yaml";
  std::ofstream(big).put('#');
  std::filesystem::resize_file(big, kMaxSweepFileBytes + 1);
  const ParseResult r = ParseSweepFile(big);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].ToString(), big.string() + ": cannot read the sweep file: is " +
                                        std::to_string(kMaxSweepFileBytes + 1) +
                                        " bytes; expected at most " +
                                        std::to_string(kMaxSweepFileBytes));
}

TEST(SweepSpecTest, DurationsAcceptUnits) {
  double s = 0;
  EXPECT_TRUE(ParseDuration("90s", &s));
  EXPECT_DOUBLE_EQ(s, 90);
  EXPECT_TRUE(ParseDuration("30m", &s));
  EXPECT_DOUBLE_EQ(s, 1800);
  EXPECT_TRUE(ParseDuration("2h", &s));
  EXPECT_DOUBLE_EQ(s, 7200);
  EXPECT_TRUE(ParseDuration(45, &s));
  EXPECT_DOUBLE_EQ(s, 45);
  EXPECT_FALSE(ParseDuration("2d", &s));
  EXPECT_FALSE(ParseDuration("m", &s));
  EXPECT_FALSE(ParseDuration("-1s", &s));
}

TEST(SweepSpecTest, RepeatsAcceptsAStoppingRuleMap) {
  ParseResult r = ParseSweep(
      "name: x\ndefaults:\n  repeats: {min: 10, max: 50, target_rel_ci: 0.01, max_seconds: 2m}\n",
      "r.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
  EXPECT_EQ(r.spec.defaults.repeats, (Repeats{10, 50, 0.01, 120}));
  EXPECT_FALSE(ParseSweep("name: x\ndefaults:\n  repeats: {min: 9, max: 3}\n", "r.yaml").ok());
  EXPECT_FALSE(ParseSweep("name: x\ndefaults:\n  repeats: {mn: 9}\n", "r.yaml").ok());
}

TEST(SweepSpecTest, QuotedNumbersStayStrings) {
  ParseResult r = ParseSweep("name: x\ndefaults:\n  steps: \"4\"\n", "q.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "defaults.steps");
}

}  // namespace
}  // namespace ditbench::sweep_spec_test

namespace ditbench::sweep_spec_test {
namespace {

TEST(SweepSpecWeightsTest, RelativeWeightFoldersAreTakenFromTheSweepFilesFolder) {
  // sweeps/s.yaml names ../models/flux; ditbench runs from elsewhere (the test's folder).
  test::TempDir dir;
  std::filesystem::create_directories(dir / "models" / "flux");
  std::filesystem::create_directories(dir / "sweeps");
  std::ofstream(dir / "models" / "flux" / "config.json") << R"({
    "_class_name": "FluxTransformer2DModel", "attention_head_dim": 32,
    "axes_dims_rope": [4, 14, 14], "guidance_embeds": true, "in_channels": 64,
    "joint_attention_dim": 48, "num_attention_heads": 2, "num_layers": 2,
    "num_single_layers": 2, "out_channels": null, "patch_size": 1,
    "pooled_projection_dim": 32})";
  std::ofstream(dir / "models" / "flux" / "diffusion_pytorch_model.safetensors");
  std::ofstream(dir / "sweeps" / "s.yaml")
      << "name: w\ndefaults:\n  model: {preset: flux-dev-tiny, heads: 2, hidden: 64, "
         "text_dim: 48, weights: ../models/flux}\nmatrix:\n  ulysses: [1, 2]\n";
  ASSERT_NE(std::filesystem::current_path(), dir / "sweeps");
  ParseResult r = ParseSweepFile(dir / "sweeps" / "s.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
  const std::string expected = (dir / "models" / "flux").lexically_normal().string();
  EXPECT_EQ(r.spec.defaults.weights, expected);
  for (const TrialConfig& trial : ExpandSweep(r.spec, 8).trials) EXPECT_EQ(trial.weights, expected);
  // Absolute folders are kept as written; a relative one that is not beside the sweep file is
  // an error naming the resolved folder.
  std::ofstream(dir / "sweeps" / "missing.yaml")
      << "name: w\ndefaults:\n  model: {preset: flux-dev-tiny, weights: models/flux}\n";
  ParseResult missing = ParseSweepFile(dir / "sweeps" / "missing.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.errors[0].ToString().find((dir / "sweeps" / "models" / "flux").string()),
            std::string::npos)
      << missing.errors[0].ToString();
}

// diffusers' file rules are checked before launch: the files a variant names must exist, and
// a variant without a folder to pick from is refused, each in one located line.
TEST(SweepSpecWeightsTest, AWeightsVariantNeedsItsFilesAndAFolder) {
  test::TempDir dir;
  std::filesystem::create_directories(dir / "flux");
  std::ofstream(dir / "flux" / "config.json") << R"({
    "_class_name": "FluxTransformer2DModel", "attention_head_dim": 32,
    "axes_dims_rope": [4, 14, 14], "guidance_embeds": true, "in_channels": 64,
    "joint_attention_dim": 48, "num_attention_heads": 2, "num_layers": 2,
    "num_single_layers": 2, "out_channels": null, "patch_size": 1,
    "pooled_projection_dim": 32})";
  std::ofstream(dir / "flux" / "diffusion_pytorch_model.fp16.safetensors");
  auto parse = [&](const std::string& model) {
    std::ofstream(dir / "v.yaml") << "name: w\ndefaults:\n  model: " << model << "\n";
    return ParseSweepFile(dir / "v.yaml");
  };
  const std::string base =
      "{preset: flux-dev-tiny, heads: 2, hidden: 64, text_dim: 48, weights: flux";
  ParseResult fp16 = parse(base + ", weights_variant: fp16}");
  ASSERT_TRUE(fp16.ok()) << fp16.errors[0].ToString();
  EXPECT_EQ(fp16.spec.defaults.weights_variant, "fp16");
  ParseResult none = parse(base + "}");  // only the fp16 file: the default one is missing
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.errors[0].ToString().find("weights_variant: fp16"), std::string::npos)
      << none.errors[0].ToString();
  EXPECT_EQ(none.errors[0].line, 3);
  ParseResult bf16 = parse(base + ", weights_variant: bf16}");
  ASSERT_FALSE(bf16.ok());
  EXPECT_NE(bf16.errors[0].ToString().find("diffusion_pytorch_model.bf16.safetensors"),
            std::string::npos)
      << bf16.errors[0].ToString();
  ParseResult alone = parse("{preset: flux-dev-tiny, weights_variant: fp16}");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.errors[0].ToString().find("together with weights"), std::string::npos)
      << alone.errors[0].ToString();
  ParseResult bad = parse(base + ", weights_variant: ../x}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors[0].ToString().find("letters, digits"), std::string::npos);
  // The variant is part of what the trial computes: it splits the key.
  ParseResult plain = parse(base + "}");
  std::ofstream(dir / "flux" / "diffusion_pytorch_model.safetensors");
  plain = parse(base + "}");
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(TrialKey(plain.spec.defaults), TrialKey(fp16.spec.defaults));
}

}  // namespace
}  // namespace ditbench::sweep_spec_test

#include "contract/trial_file_check.h"

#include <fstream>

#include <gtest/gtest.h>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "experiments/trial_settings.h"
#include "tests/support/temp_dir.h"

namespace ditbench::trial_file_check_test {
namespace {

// A valid trial.json, as the coordinator writes it.
nlohmann::json ValidTrial() {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.ulysses = 2;
  return ToJson(TrialFile{TrialKey(config), "s", config, "cpu", {}});
}

TEST(TrialFileCheckTest, WhatTheCoordinatorWritesIsValid) {
  EXPECT_EQ(TrialFileProblem(ValidTrial()), std::nullopt);
  auto with_overrides = ValidTrial();
  with_overrides["config"]["model"] = {{"preset", "pixart-alpha-tiny"}, {"depth", 2}};
  EXPECT_EQ(TrialFileProblem(with_overrides), std::nullopt);
  TrialConfig command;
  command.workload = Workload::kCommand;
  command.command = {"python3", "bench.py", "{steps}"};
  command.custom = {{"opt", "fast"}, {"threads", 2}, {"compile", true}};
  EXPECT_EQ(TrialFileProblem(ToJson(TrialFile{TrialKey(command), "s", command, "cpu", {}})),
            std::nullopt);
}

struct BadField {
  const char* name;     // for the test's name
  const char* pointer;  // JSON pointer of the field to replace
  nlohmann::json value;
  const char* message;  // what TrialFileProblem must say
  friend void PrintTo(const BadField& f, std::ostream* os) { *os << f.pointer; }
};

class TrialFileFieldTest : public ::testing::TestWithParam<BadField> {};

TEST_P(TrialFileFieldTest, BadFieldIsNamedWithWhatWasExpected) {
  auto trial = ValidTrial();
  trial[nlohmann::json::json_pointer(GetParam().pointer)] = GetParam().value;
  auto problem = TrialFileProblem(trial);
  ASSERT_TRUE(problem.has_value()) << GetParam().pointer;
  EXPECT_EQ(*problem, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    EveryFieldClass, TrialFileFieldTest,
    ::testing::Values(
        BadField{"Ulysses0", "/config/ulysses", 0,
                 "'config.ulysses': expected an integer from 1 to 1024, got 0"},
        BadField{"Ring0", "/config/ring", 0,
                 "'config.ring': expected an integer from 1 to 1024, got 0"},
        BadField{"PipefusionNegative", "/config/pipefusion", -1,
                 "'config.pipefusion': expected an integer from 1 to 1024, got -1"},
        BadField{"DpFraction", "/config/dp", 2.5,
                 "'config.dp': expected an integer from 1 to 1024, got 2.5"},
        BadField{"Cfg3", "/config/cfg", 3, "'config.cfg': expected an integer from 1 to 2, got 3"},
        BadField{"ResolutionWraps", "/config/resolution", 4294967552LL,
                 "'config.resolution': expected an integer from 16 to 16384 (a square image) or "
                 "WIDTHxHEIGHT such as 1280x720, each from 16 to 16384, got 4294967552"},
        BadField{"StepsNegative", "/config/steps", -5,
                 "'config.steps': expected an integer from 1 to 10000, got -5"},
        BadField{"BatchString", "/config/batch", "1",
                 "'config.batch': expected an integer from 1 to 4096, got \"1\""},
        BadField{"WarmupNegative", "/config/warmup", -1,
                 "'config.warmup': expected an integer from 0 to 10000, got -1"},
        BadField{"RepeatsMinAboveMax",
                 "/config/repeats",
                 {{"min", 5}, {"max", 1}},
                 "'config.repeats': expected a positive integer or a map {min, max, "
                 "target_rel_ci, max_seconds} with 1 <= min <= max, got {\"max\":1,\"min\":5}"},
        BadField{"Timeout0", "/config/timeout_s", 0,
                 "'config.timeout_s': expected a duration such as 90s, 30m or 2h, got 0"},
        BadField{"PrecisionUnknown", "/config/precision", "fp8",
                 "'config.precision': expected one of fp32, tf32, bf16, fp16, got \"fp8\""},
        BadField{"ScopeUnknown", "/config/scope", "all",
                 "'config.scope': expected one of forward, denoise, pipeline, got \"all\""},
        BadField{"SeedString", "/config/seed", "zero",
                 "'config.seed': expected an integer, got \"zero\""},
        BadField{"ProfileBlocksNumber", "/config/profile_blocks", 1,
                 "'config.profile_blocks': expected true or false, got 1"},
        BadField{"WorkloadShell", "/config/workload", "shell",
                 "'config.workload': expected 'dit', 'command' or 'engine', got \"shell\""},
        BadField{"CommandString", "/config/command", "python3 b.py",
                 "'config.command': expected a list of strings, got \"python3 b.py\""},
        BadField{
            "CustomReservedName",
            "/config/custom",
            {{"world_size", 2}},
            "'config.custom.world_size': expected a custom axis name with a scalar value, got 2"},
        BadField{"CustomList",
                 "/config/custom",
                 {{"opt", {1, 2}}},
                 "'config.custom.opt': expected a custom axis name with a scalar value, got [1,2]"},
        BadField{"UnknownKey", "/config/ulysess", 2, "'config.ulysess': unknown key"},
        BadField{"DeviceTpu", "/device", "tpu", "'device': expected cpu or cuda, got \"tpu\""},
        BadField{"TrialKeyNumber", "/trial_key", 7, "'trial_key': expected a string, got 7"},
        BadField{"ConfigNotObject", "/config", "x", "'config': expected a JSON object, got \"x\""}),
    [](const ::testing::TestParamInfo<BadField>& info) { return std::string(info.param.name); });

TEST(TrialFileCheckTest, ReadTrialFileRefusesABadFieldNamingFileAndField) {
  test::TempDir dir;
  auto trial = ValidTrial();
  trial["config"]["ulysses"] = 0;
  std::ofstream(dir / "trial.json") << trial.dump();
  try {
    ReadTrialFile(dir / "trial.json");
    FAIL() << "accepted ulysses 0";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "trial.json").string() +
                                         ": 'config.ulysses': expected an integer from 1 to "
                                         "1024, got 0");
  }
}

// The setting -> canonical key map is one table read both ways: every setting comes back from
// its canonical key, and the renamed one ("timeout" is stored as "timeout_s") both ways.
TEST(TrialFileCheckTest, CanonicalKeyAndSettingAreInverses) {
  for (const std::string& setting : TrialKeys())
    EXPECT_EQ(SettingOfCanonicalKey(CanonicalKeyOf(setting)), setting) << setting;
  EXPECT_EQ(CanonicalKeyOf("timeout"), "timeout_s");
  EXPECT_EQ(SettingOfCanonicalKey("timeout_s"), "timeout");
  EXPECT_EQ(CanonicalKeyOf("steps"), "steps");
  // The renamed key is the one CanonicalJson writes, and trial.json accepts it.
  EXPECT_TRUE(CanonicalJson(TrialConfig{}).contains(CanonicalKeyOf("timeout")));
  auto trial = ValidTrial();
  trial["config"]["timeout_s"] = 90;
  EXPECT_EQ(TrialFileProblem(trial), std::nullopt);
  trial["config"]["timeout_s"] = "soon";
  EXPECT_NE(TrialFileProblem(trial), std::nullopt);
}

}  // namespace
}  // namespace ditbench::trial_file_check_test

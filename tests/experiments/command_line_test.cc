// The `command` workload in the sweep language: the command's placeholders, custom axes, and
// what both do to trial identity. Pure; the end-to-end run is
// tests/runner/command_workload_test.cc.
#include "experiments/command_line.h"

#include <gtest/gtest.h>

#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial_identity.h"
#include "experiments/validity.h"

namespace ditbench::command_line_test {
namespace {

constexpr const char* kCommandSweep = R"(name: cmd
workload: command
command: [python3, bench.py, --steps, "{steps}", --height, "{resolution}", "--opt={opt}"]
defaults: {steps: 4, compile: false}
matrix:
  resolution: [256, 512]
  opt: [1, fast]
exclude:
  - {resolution: 512, opt: fast}
)";

std::string FirstError(const std::string& yaml) {
  ParseResult r = ParseSweep(yaml, "s.yaml");
  return r.errors.empty() ? "" : r.errors[0].ToString();
}

TEST(CommandLineTest, PlaceholdersBecomeTheTrialsValues) {
  ParseResult r = ParseSweep(kCommandSweep, "s.yaml");
  ASSERT_TRUE(r.ok()) << r.errors[0].ToString();
  const auto trials = ExpandSweep(r.spec, 1).trials;
  ASSERT_EQ(trials.size(), 3u);  // one excluded through its custom axis
  EXPECT_EQ(ExpandCommand(trials[1]),
            (std::vector<std::string>{"python3", "bench.py", "--steps", "4", "--height", "256",
                                      "--opt=fast"}));
  EXPECT_EQ(ExpandCommand(trials[2]).back(), "--opt=1");
  EXPECT_EQ(trials[2].custom.at("compile"), false);
}

TEST(CommandLineTest, BracesEscapeAndBuiltInsRender) {
  TrialConfig c;
  c.workload = Workload::kCommand;
  c.precision = Precision::kFp16;
  c.ulysses = 2;
  c.command = {"x", "{{literal}}", "{precision}/{world_size}/{timeout}"};
  EXPECT_EQ(ExpandCommand(c), (std::vector<std::string>{"x", "{literal}", "fp16/2/1800.0"}));
}

// A placeholder is a built-in trial key, world_size or a custom axis (command_line.h): the
// fields a trial has as a whole (its program, its custom axes, its workload) are not values.
TEST(CommandLineTest, OnlyTrialKeysWorldSizeAndCustomAxesHaveValues) {
  TrialConfig c;
  c.workload = Workload::kCommand;
  c.command = {"x"};
  c.custom = {{"opt", "fast"}};
  EXPECT_EQ(PlaceholderValue(c, "steps"), "20");
  EXPECT_EQ(PlaceholderValue(c, "timeout"), "1800.0");
  EXPECT_EQ(PlaceholderValue(c, "world_size"), "1");
  EXPECT_EQ(PlaceholderValue(c, "opt"), "fast");
  for (const char* whole : {"command", "custom", "workload", "timeout_s", "nonsense"})
    EXPECT_EQ(PlaceholderValue(c, whole), std::nullopt) << whole;
}

TEST(CommandLineTest, MalformedTemplatesAreRefused) {
  std::vector<std::string> names;
  std::string problem;
  EXPECT_FALSE(ParseCommandTemplate("{steps", &names, &problem));
  EXPECT_NE(problem.find("never closed"), std::string::npos);
  EXPECT_FALSE(ParseCommandTemplate("a}b", &names, &problem));
  EXPECT_FALSE(ParseCommandTemplate("{}", &names, &problem));
}

TEST(CommandLineTest, UnknownPlaceholderIsOneLocatedLine) {
  const std::string error = FirstError(
      "name: c\nworkload: command\ncommand: [python3, b.py, \"{resolutoin}\"]\n"
      "matrix: {flavour: [a, b]}\n");
  EXPECT_EQ(error.rfind("s.yaml:3:26: 'command[2]': unknown placeholder '{resolutoin}'; "
                        "expected a trial field or an axis of this sweep: flavour",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("did you mean 'resolution'?"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// A value is stored in the trial key and printed: bytes that are not UTF-8 are refused where
// they stand, as any other bad value is (it was an internal error).
TEST(CommandLineTest, ACustomAxisValueThatIsNotUtf8IsOneLocatedLine) {
  EXPECT_EQ(FirstError("name: c\nworkload: command\ncommand: [b, \"{flavour}\"]\n"
                       "matrix: {flavour: [a, \"b\xff\"]}\n"),
            "s.yaml:4:23: 'matrix.flavour': not valid UTF-8 text; expected a value written "
            "in UTF-8");
  EXPECT_EQ(FirstError("name: c\nworkload: command\ncommand: [b]\ndefaults: {tag: x\xc3}\n"),
            "s.yaml:4:17: 'defaults.tag': not valid UTF-8 text; expected a value written in "
            "UTF-8");
}

// The refused value is the one error: its axis is not reported again as an unknown placeholder.
TEST(CommandLineTest, AnAxisWithARefusedValueIsNotAlsoAnUnknownPlaceholder) {
  const ParseResult r = ParseSweep(
      "name: c\nworkload: command\ncommand: [b, \"{flavour}\"]\n"
      "matrix: {flavour: [a, \"b\xff\", d]}\n",
      "s.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << r.errors.back().ToString();
  EXPECT_NE(r.errors[0].ToString().find("'matrix.flavour': not valid UTF-8"), std::string::npos);
}

TEST(CommandLineTest, BytesThatAreNotUtf8ElsewhereAreOneLocatedLine) {
  const std::string error = FirstError("name: c\nworkload: command\ncommand: [b]  # caf\xe9\n");
  EXPECT_EQ(error, "s.yaml:3:20: byte 0xe9 is not valid UTF-8; expected a file written in UTF-8");
}

TEST(CommandLineTest, PlaceholderSetOnlyInSomeIncludePointsIsRefused) {
  const std::string error = FirstError(
      "name: c\nworkload: command\ncommand: [b, \"{extra}\"]\ninclude:\n  - {extra: 1}\n");
  EXPECT_NE(error.find("set only in some 'include' points"), std::string::npos) << error;
}

TEST(CommandLineTest, CommandNeedsTheCommandWorkloadAndViceVersa) {
  EXPECT_NE(FirstError("name: c\nworkload: command\n").find("missing required key 'command'"),
            std::string::npos);
  EXPECT_NE(FirstError("name: c\ncommand: [a]\n").find("only a sweep with 'workload: command'"),
            std::string::npos);
  EXPECT_NE(FirstError("name: c\nworkload: shell\n").find("expected 'dit'"), std::string::npos);
}

TEST(CommandLineTest, CustomAxesOnlyForCommands) {
  EXPECT_NE(FirstError("name: c\nmatrix: {flavour: [a]}\n").find("unknown key in matrix"),
            std::string::npos);
  // One edit away from a built-in key: taken for a typo, not a new axis.
  const std::string typo =
      FirstError("name: c\nworkload: command\ncommand: [a]\nmatrix: {step: [1]}\n");
  EXPECT_NE(typo.find("did you mean 'steps'?"), std::string::npos) << typo;
  EXPECT_NE(FirstError("name: c\nworkload: command\ncommand: [a]\nmatrix: {world_size: [1]}\n")
                .find("not a valid custom axis name"),
            std::string::npos);
  EXPECT_NE(FirstError("name: c\nworkload: command\ncommand: [a]\nmatrix: {flavour: [[1]]}\n")
                .find("custom axis takes scalar values"),
            std::string::npos);
}

TEST(CommandLineTest, CommandAndCustomAxesArePartOfTheKeyAndDitKeysStay) {
  TrialConfig dit;
  const std::string dit_key = TrialKey(dit);
  EXPECT_EQ(CanonicalJson(dit).contains("command"), false);  // canonical form unchanged
  TrialConfig a;
  a.workload = Workload::kCommand;
  a.command = {"python3", "a.py"};
  TrialConfig b = a;
  b.command = {"python3", "b.py"};
  EXPECT_NE(TrialKey(a), TrialKey(b));
  TrialConfig c = a;
  c.custom["flavour"] = "x";
  EXPECT_NE(TrialKey(a), TrialKey(c));
  const TrialConfig read_back = TrialConfigFromJson(CanonicalJson(c));  // stored and read back
  EXPECT_EQ(read_back.command, c.command);
  EXPECT_EQ(read_back.custom, c.custom);
  EXPECT_EQ(TrialKey(read_back), TrialKey(c));
  EXPECT_EQ(TrialKey(dit), dit_key);
}

TEST(CommandLineTest, ModelShapeRulesDoNotApplyToCommandsButWorldSizeDoes) {
  TrialConfig c;
  c.workload = Workload::kCommand;
  c.command = {"a"};
  c.model = "pixart-alpha-tiny";
  c.ulysses = 3;  // heads are not divisible by 3: the built-in worker's rule, not the program's
  EXPECT_FALSE(InvalidReason(c, Capacity{4, false}));
  EXPECT_TRUE(InvalidReason(c, Capacity{2, false}));
}

}  // namespace
}  // namespace ditbench::command_line_test

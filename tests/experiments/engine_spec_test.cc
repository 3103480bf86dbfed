// The `engine` workload's sweep section and its templates (experiments/engine_spec.h,
// experiments/engine_request.h, experiments/sweep_engine.h): what a sweep may say, what a
// trial's server command and request body become, and that the body is part of the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "experiments/engine_request.h"
#include "experiments/sweep_expand.h"
#include "experiments/trial_identity.h"
#include "tests/support/sweeps.h"

namespace ditbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Sweep(const std::string& engine, const std::string& workload = "engine") {
  return "name: e\nworkload: " + workload + "\n" + engine +
         "defaults: {model: pixart-alpha-tiny, resolution: 64x48, steps: 3}\n";
}

const char* kEngine =
    "engine:\n"
    "  start: [python3, server.py, --port, \"{port}\", --gpus, \"{gpus}\", --sp, "
    "\"{world_size}\"]\n"
    "  request: {prompt: a fox, size: \"{size}\", num_inference_steps: \"{steps}\", "
    "label: \"s{steps}\", guidance_scale: 4.5}\n";

std::string FirstError(const std::string& yaml) {
  const ParseResult r = ParseSweep(yaml, "test.yaml");
  return r.errors.empty() ? "" : r.errors[0].ToString();
}

TEST(EngineSpecTest, ASweepExpandsToTrialsThatCarryTheEngine) {
  const SweepSpec spec = test::ParseValidSweep(Sweep(kEngine));
  const std::vector<TrialConfig> trials = ExpandSweep(spec, 1).trials;
  ASSERT_EQ(trials.size(), 1u);
  const TrialConfig& t = trials[0];
  EXPECT_EQ(t.workload, Workload::kEngine);
  EXPECT_THAT(ExpandEngineStart(t, {.port = 4321, .gpus = "0,1"}),
              ElementsAre("python3", "server.py", "--port", "4321", "--gpus", "0,1", "--sp", "1"));
  const nlohmann::json body = EngineRequestBody(t);
  EXPECT_EQ(body["size"], "64x48");
  EXPECT_EQ(body["num_inference_steps"], 3);  // one placeholder keeps the number
  EXPECT_EQ(body["label"], "s3");              // text around it makes a string
  EXPECT_EQ(body["prompt"], "a fox");
  EXPECT_EQ(body["guidance_scale"], 4.5);
  EXPECT_EQ(t.engine.ready, std::vector<std::string>{"/health"});  // the defaults
  EXPECT_EQ(t.engine.start_timeout_s, 300);
  EXPECT_EQ(t.engine.warmup_requests, 1);
  EXPECT_EQ(LaunchedRanks(t.workload, 4), 1);  // one client whatever the degrees
}

TEST(EngineSpecTest, TheRequestIsPartOfTheTrialKey) {
  const TrialConfig a = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  std::string other = kEngine;
  other.replace(other.find("a fox"), 5, "a cat");
  const TrialConfig b = ExpandSweep(test::ParseValidSweep(Sweep(other)), 1).trials.at(0);
  const TrialConfig a2 = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  EXPECT_NE(TrialKey(a), TrialKey(b));
  EXPECT_EQ(TrialKey(a), TrialKey(a2));
}

TEST(EngineSpecTest, AnEngineWorkloadNeedsItsEngineAndOnlyItHasOne) {
  EXPECT_THAT(FirstError(Sweep("")), HasSubstr("missing required key 'engine'"));
  EXPECT_THAT(FirstError(Sweep(kEngine, "dit")), HasSubstr("only a sweep with 'workload: engine'"));
}

TEST(EngineSpecTest, BadEngineSectionsAreLocatedErrors) {
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv, \"{prot}\"]}\n")),
              HasSubstr("'start[1]': unknown placeholder '{prot}'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], url: \"http://127.0.0.1:1\"}\n")),
              HasSubstr("exactly one of 'start'"));
  EXPECT_THAT(FirstError(Sweep("engine: {url: \"http://127.0.0.1:1\", api: videos}\n")),
              HasSubstr("'api': expected 'images'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], start_timeout: 0}\n")),
              HasSubstr("'start_timeout': expected seconds above 0"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], ready: [health]}\n")),
              HasSubstr("not a path starting with '/'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], request: {size: \"{sise}\"}}\n")),
              HasSubstr("'request.size': unknown placeholder '{sise}'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], warmup: 2}\n")),
              HasSubstr("unknown key 'warmup'"));
}

TEST(EngineSpecTest, TheCanonicalFormReadsBack) {
  const TrialConfig t = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  EngineSpec back;
  std::string problem;
  ASSERT_TRUE(EngineSpecFromJson(EngineSpecJson(t.engine), &back, &problem)) << problem;
  EXPECT_EQ(back, t.engine);
}

}  // namespace
}  // namespace ditbench

// The `engine` workload's sweep section and its templates (experiments/engine_spec.h,
// experiments/engine_request.h, experiments/sweep_engine.h): what a sweep may say, what a
// trial's server command and request body become, and that the body is part of the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "experiments/engine_request.h"
#include "experiments/sweep_expand.h"
#include "experiments/sweep_spec.h"
#include "experiments/trial_identity.h"
#include "experiments/validity.h"
#include "plan/plan_output.h"
#include "plan/sweep_plan.h"
#include "tests/support/sweeps.h"

namespace ditbench {
namespace {

using ::testing::AllOf;
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
  EXPECT_THAT(ExpandEngineStart(t, {.port = "4321", .gpus = "0,1"}),
              ElementsAre("python3", "server.py", "--port", "4321", "--gpus", "0,1", "--sp", "1"));
  const nlohmann::json body = EngineRequestBody(t);
  EXPECT_EQ(body["size"], "64x48");
  EXPECT_EQ(body["num_inference_steps"], 3);  // one placeholder keeps the number
  EXPECT_EQ(body["label"], "s3");             // text around it makes a string
  EXPECT_EQ(body["prompt"], "a fox");
  EXPECT_EQ(body["guidance_scale"], 4.5);
  EXPECT_EQ(t.engine.ready, std::vector<std::string>{"/health"});  // the defaults
  EXPECT_EQ(t.engine.start_timeout_s, 300);
  EXPECT_EQ(t.engine.warmup_requests, 1);
  EXPECT_EQ(LaunchedRanks(t.workload, 4), 1);  // one client whatever the degrees
  // An engine answers with the decoded image: scope pipeline unless the sweep says otherwise,
  // which is refused with the reason.
  EXPECT_EQ(t.scope, Scope::kPipeline);
  const TrialConfig denoise =
      ExpandSweep(test::ParseValidSweep(Sweep(kEngine) + "matrix: {scope: [denoise]}\n"), 1)
          .trials.at(0);
  EXPECT_EQ(InvalidReason(denoise, Capacity{1, false}),
            "scope: denoise: an engine answers with the decoded output, so its scope is pipeline");
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
  // The file, the engine mapping's line (3) and the key.
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], warmup: 2}\n")),
              AllOf(HasSubstr("test.yaml:3:"), HasSubstr("'engine'")));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv, \"{prot}\"]}\n")),
              HasSubstr("'start[1]': unknown placeholder '{prot}'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], url: \"http://127.0.0.1:1\"}\n")),
              HasSubstr("exactly one of 'start'"));
  EXPECT_THAT(FirstError(Sweep("engine: {url: \"http://127.0.0.1:1\", api: audio}\n")),
              HasSubstr("'api': expected images (POST /v1/images/generations) or videos"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], poll_interval_ms: 20}\n")),
              HasSubstr("'poll_interval_ms': applies to api: videos only"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], api: videos, poll_interval_ms: 0.5}\n")),
              HasSubstr("'poll_interval_ms': expected whole milliseconds from 1 to 10000"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], version: version}\n")),
              HasSubstr("'version': expected a path starting with '/'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], start_timeout: 0}\n")),
              HasSubstr("'start_timeout': expected seconds above 0"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], ready: [health]}\n")),
              HasSubstr("not a path starting with '/'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], request: {size: \"{sise}\"}}\n")),
              HasSubstr("'request.size': unknown placeholder '{sise}'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], warmup: 2}\n")),
              HasSubstr("unknown key 'warmup'"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], dirty_gpu_mb: -1}\n")),
              HasSubstr("'dirty_gpu_mb': expected the most MiB a GPU may hold before the server "
                        "starts, 0 to 10000000"));
}

TEST(EngineSpecTest, ADirtyGpuThresholdIsReadAndWrittenOnlyWhenNotTheDefault) {
  EngineSpec spec;
  std::string problem;
  ASSERT_TRUE(EngineSpecFromJson({{"start", {"srv"}}, {"dirty_gpu_mb", 512}}, &spec, &problem))
      << problem;
  EXPECT_EQ(spec.dirty_gpu_mb, 512);
  EXPECT_EQ(EngineSpecJson(spec)["dirty_gpu_mb"], 512);
  spec.dirty_gpu_mb = kDefaultDirtyGpuMb;
  EXPECT_FALSE(EngineSpecJson(spec).contains("dirty_gpu_mb")) << "earlier keys are kept";
}

TEST(EngineSpecTest, TheCanonicalFormReadsBack) {
  const TrialConfig t = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  EngineSpec back;
  std::string problem;
  ASSERT_TRUE(EngineSpecFromJson(EngineSpecJson(t.engine), &back, &problem)) << problem;
  EXPECT_EQ(back, t.engine);
}

TEST(EngineSpecTest, AVideoEngineIsPolledAtTheSweepsIntervalAndTakesFrames) {
  std::string video = std::string(kEngine) + "  api: videos\n  poll_interval_ms: 50\n";
  video.replace(video.find("label:"), 0, "num_frames: \"{frames}\", ");
  const std::string defaults = "defaults: {model: pixart-alpha-tiny, resolution: 64x48, steps: 3}";
  std::string yaml = Sweep(video);
  yaml.replace(yaml.find(defaults), defaults.size(),
               "defaults: {model: wan2.1-t2v-tiny, resolution: 64x48, steps: 3, frames: 9}");
  const TrialConfig t = ExpandSweep(test::ParseValidSweep(yaml), 1).trials.at(0);
  EXPECT_EQ(t.engine.api, "videos");
  EXPECT_EQ(t.engine.poll_interval_ms, 50);
  EXPECT_EQ(EngineRequestBody(t)["num_frames"], 9);
  EXPECT_FALSE(InvalidReason(t, Capacity{1, false}));
  EngineSpec back;  // as the client reads it from trial.json
  std::string problem;
  ASSERT_TRUE(EngineSpecFromJson(EngineSpecJson(t.engine), &back, &problem)) << problem;
  EXPECT_EQ(back, t.engine);
  // The interval is part of the key: it bounds how late a completion is seen.
  std::string slower = yaml;
  slower.replace(slower.find("poll_interval_ms: 50"), 20, "poll_interval_ms: 60");
  EXPECT_NE(TrialKey(t), TrialKey(ExpandSweep(test::ParseValidSweep(slower), 1).trials.at(0)));
  // The images API makes no video: frames are refused there, with the reason.
  TrialConfig image = t;
  image.engine.api = "images";
  image.engine.poll_interval_ms.reset();
  EXPECT_EQ(InvalidReason(image, Capacity{1, false}),
            "frames=9: api: images answers with an image; a video engine is driven with api: "
            "videos");
}

TEST(EngineSpecTest, FilesAreTemplatesOfTheTrialWrittenWhereFilesPointsTo) {
  std::string engine = kEngine;
  engine.replace(engine.find("--gpus"), 0, "--config, \"{files}/layout.yml\", ");
  engine += "  files:\n    layout.yml: \"parallel: {{ulysses: {ulysses}}}\\nsize: {size}\\n\"\n";
  const SweepSpec spec = test::ParseValidSweep(Sweep(engine) + "matrix: {ulysses: [1, 2]}\n");
  const std::vector<TrialConfig> trials = ExpandSweep(spec, 2).trials;
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(ExpandEngineFiles(trials[1]).at("layout.yml"), "parallel: {ulysses: 2}\nsize: 64x48\n");
  EXPECT_THAT(
      ExpandEngineStart(trials[1], {.port = "1", .gpus = "", .files = "/runs/7/engine-files"}),
      testing::Contains("/runs/7/engine-files/layout.yml"));
  EXPECT_NE(TrialKey(trials[0]), TrialKey(trials[1]));
  EngineSpec back;
  std::string problem;
  ASSERT_TRUE(EngineSpecFromJson(EngineSpecJson(trials[0].engine), &back, &problem)) << problem;
  EXPECT_EQ(back, trials[0].engine);
  // `plan` shows each file as the trial would write it.
  std::ostringstream out;
  WritePlanTable(spec, PlanSweep(spec, Capacity{2, false}), PlanAssumptions{}, out);
  EXPECT_THAT(out.str(), HasSubstr("{files}/layout.yml:\n"));
  EXPECT_THAT(out.str(), HasSubstr("    parallel: {ulysses: 2}\n"));
  // A name that could leave the folder or hide in it, a file beside url, a bad placeholder.
  for (const char* name : {"../x.yml", "a/b", ".hidden", ""})
    EXPECT_THAT(
        FirstError(Sweep(std::string("engine: {start: [srv], files: {\"") + name + "\": x}}\n")),
        HasSubstr("is not a plain file name"))
        << name;
  EXPECT_THAT(FirstError(Sweep("engine: {url: \"http://127.0.0.1:1\", files: {a.yml: x}}\n")),
              HasSubstr("'files': applies to a server ditbench starts"));
  EXPECT_THAT(FirstError(Sweep("engine: {start: [srv], files: {a.yml: \"{ulyses}\"}}\n")),
              HasSubstr("'files.a.yml': unknown placeholder '{ulyses}'"));
}

TEST(EngineSpecTest, TheVersionPathIsKeptOnlyWhenNotTheDefault) {
  const TrialConfig t = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  EXPECT_EQ(t.engine.version, "/version");
  EXPECT_FALSE(EngineSpecJson(t.engine).contains("version"));  // earlier keys unchanged
  const TrialConfig none =
      ExpandSweep(test::ParseValidSweep(Sweep(std::string(kEngine) + "  version: \"\"\n")), 1)
          .trials.at(0);
  EXPECT_EQ(none.engine.version, "");
  EXPECT_EQ(EngineSpecJson(none.engine)["version"], "");
}

TEST(EngineSpecTest, AnAttachedServerLetsOnlyWhatTheRequestCarriesVary) {
  const std::string attached =
      "engine: {url: \"http://127.0.0.1:8000\", request: {prompt: a fox, size: \"{size}\", "
      "num_inference_steps: \"{steps}\"}}\n";
  const auto with_matrix = [&](const std::string& matrix) {
    return Sweep(attached) + "matrix: {" + matrix + "}\n";
  };
  // What the request names, and how a trial is measured, may vary.
  EXPECT_EQ(FirstError(with_matrix("steps: [2, 4], resolution: [64, 128], warmup: [1, 2]")), "");
  // The server's layout or precision is the user's: refused where the axis is written.
  EXPECT_THAT(FirstError(with_matrix("steps: [2, 4], ulysses: [1, 2]")),
              AllOf(HasSubstr("test.yaml:5:"), HasSubstr("'ulysses'"),
                    HasSubstr("vary only what the request names (height, resolution, size, "
                              "steps)")));
  EXPECT_THAT(FirstError(with_matrix("precision: [bf16, fp16]")), HasSubstr("'precision'"));
  // One value is no variation; a server that ditbench starts takes every axis.
  EXPECT_EQ(FirstError(with_matrix("ulysses: [1]")), "");
  EXPECT_EQ(FirstError(Sweep(kEngine) + "matrix: {ulysses: [1, 2]}\n"), "");
}

TEST(EngineSpecTest, AnEngineRunsOnlyTheDegreesItsCommandPassesOn) {
  const std::string engine = std::string(kEngine) + "  degrees: [ulysses, cfg]\n";
  const SweepSpec spec =
      test::ParseValidSweep(Sweep(engine) + "matrix: {ulysses: [1, 2], ring: [1, 2]}\n");
  const std::vector<TrialConfig> trials = ExpandSweep(spec, 4).trials;
  ASSERT_EQ(trials.size(), 4u);
  for (const TrialConfig& t : trials) {
    const std::optional<std::string> why = InvalidReason(t, Capacity{4, false});
    if (t.ring == 1) {
      EXPECT_FALSE(why) << *why;
    } else {
      ASSERT_TRUE(why);
      EXPECT_EQ(*why, "ring=2: this engine's command passes on only ulysses, cfg (engine.degrees)");
    }
  }
  // [] takes none: one rank only.
  const SweepSpec none = test::ParseValidSweep(Sweep(std::string(kEngine) + "  degrees: []\n") +
                                               "matrix: {cfg: [1, 2]}\n");
  const std::vector<TrialConfig> cfg = ExpandSweep(none, 4).trials;
  ASSERT_EQ(cfg.size(), 2u);
  EXPECT_FALSE(InvalidReason(cfg[0], Capacity{4, false}));
  EXPECT_EQ(InvalidReason(cfg[1], Capacity{4, false}),
            "cfg=2: this engine's command passes on no degree (engine.degrees)");
  EXPECT_THAT(FirstError(Sweep(std::string(kEngine) + "  degrees: [ulyses]\n")),
              HasSubstr("'degrees': expected a list of distinct degrees the engine takes, each "
                        "one of tp, ulysses, ring, pipefusion, cfg, dp"));
}

TEST(EngineSpecTest, AnEngineServesALoadAndEachShapeOfItsMixIsJudgedAsAnEngineTrial) {
  const std::string serve =
      "  serve: {arrivals: poisson, rate: 2, requests: 4, mix: [{steps: 2}, {steps: 4}]}\n";
  const auto with_serve = [&serve](std::string yaml) {
    const std::string defaults =
        "defaults: {model: pixart-alpha-tiny, resolution: 64x48, steps: 3}\n";
    yaml.replace(
        yaml.find(defaults), defaults.size(),
        "defaults:\n  model: pixart-alpha-tiny\n  resolution: 64x48\n  steps: 3\n" + serve);
    return yaml;
  };
  const TrialConfig t =
      ExpandSweep(test::ParseValidSweep(with_serve(Sweep(kEngine))), 1).trials.at(0);
  ASSERT_TRUE(t.serve);
  EXPECT_FALSE(InvalidReason(t, Capacity{1, false}));
  // A shape of the mix is judged as the engine trial that times it alone: its layout's rule
  // holds for it too.
  const std::vector<TrialConfig> ring =
      ExpandSweep(
          test::ParseValidSweep(with_serve(Sweep(std::string(kEngine) + "  degrees: [ulysses]\n")) +
                                "matrix: {ring: [2]}\n"),
          2)
          .trials;
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_THAT(InvalidReason(ring[0], Capacity{2, false}).value_or(""),
              HasSubstr("ring=2: this engine's command passes on only ulysses"));
}

TEST(EngineSpecTest, OnlyAnEngineTrialMeasuresARestartBand) {
  TrialConfig t = ExpandSweep(test::ParseValidSweep(Sweep(kEngine)), 1).trials.at(0);
  t.quality.restarts = 2;
  EXPECT_FALSE(InvalidReason(t, Capacity{1, false}));
  t.workload = Workload::kDit;
  t.engine = {};
  EXPECT_THAT(InvalidReason(t, Capacity{1, false}).value_or(""),
              HasSubstr("quality.restarts: the restart band is measured over restarts of an "
                        "engine's server"));
}

TEST(EngineSpecTest, PlanPrintsEachTrialsServerCommandAndRequestBody) {
  const SweepSpec spec =
      test::ParseValidSweep(Sweep(kEngine) + "matrix: {steps: [2, 4], ulysses: [1, 2]}\n");
  const SweepPlan plan = PlanSweep(spec, Capacity{2, false});
  ASSERT_EQ(plan.trials.size(), 4u);
  std::ostringstream out;
  WritePlanTable(spec, plan, PlanAssumptions{}, out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("engine: each trial starts its server in the sweep's folder"));
  for (const PlannedTrial& t : plan.trials) {
    const std::string sp = std::to_string(t.config.world_size());
    EXPECT_THAT(text, HasSubstr("  " + t.key +
                                "  python3 server.py --port '{port}' --gpus "
                                "'{gpus}' --sp " +
                                sp + "\n"));
    EXPECT_THAT(text, HasSubstr(EngineRequestBody(t.config).dump()));
  }
  EXPECT_THAT(text, HasSubstr("\"num_inference_steps\":4"));
}

// The presets users start from (sweeps/engines/): each parses, plans on 8 GPUs with at least one
// trial to run, and `plan` prints every such trial's server command line and request body.
TEST(EngineSpecTest, EveryPresetPlansAndPrintsItsCommandLines) {
  const std::filesystem::path folder =
      std::filesystem::path(DITBENCH_PYTHON_DIR) / ".." / "sweeps" / "engines";
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".yaml") continue;
    ++presets;
    const ParseResult parsed = ParseSweepFile(entry.path());
    ASSERT_TRUE(parsed.ok()) << entry.path() << ": " << parsed.errors[0].ToString();
    EXPECT_EQ(parsed.spec.workload, Workload::kEngine) << entry.path();
    EXPECT_TRUE(parsed.spec.defaults.engine.degrees) << entry.path() << " declares no degrees";
    const SweepPlan plan = PlanSweep(parsed.spec, Capacity{8, true});
    std::ostringstream out;
    WritePlanTable(parsed.spec, plan, PlanAssumptions{}, out);
    int valid = 0;
    for (const PlannedTrial& t : plan.trials) {
      if (t.invalid_reason) continue;
      ++valid;
      const std::vector<std::string> argv = ExpandEngineStart(t.config, {"{port}", "{gpus}"});
      EXPECT_THAT(out.str(), HasSubstr("  " + t.key + "  " + argv.front() + " ")) << entry.path();
    }
    EXPECT_GT(valid, 0) << entry.path() << "\n" << out.str();
  }
  EXPECT_GE(presets, 3);
}

}  // namespace
}  // namespace ditbench

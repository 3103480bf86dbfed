// The fixture of the `engine` workload's end-to-end tests (tests/runner/engine_*_e2e_test.cc):
// a sweep of the reference engine (python/ditbench_engine_server.py) written into a temporary
// folder and run by the real coordinator with the real LocalLauncher, and what the database
// and the run folders say read back.
#pragma once

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/table_printers.h"
#include "cli/query.h"
#include "launch/local_launcher.h"
#include "runner/sweep_run.h"
#include "tests/support/engine_server.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::test {

class EngineWorkloadTest : public ::testing::Test {
 protected:
  // A sweep of the reference engine with `flags` added to its command line, `matrix` as the
  // sweep's matrix and `start_timeout` seconds to be ready; RunSweep's exit code.
  int RunCampaign(const std::string& flags, const std::string& matrix = "steps: [2, 3]",
                  int start_timeout = 120, const std::string& gpus = "cpu:1") {
    std::ofstream(dir_ / "sweep.yaml") << fmt::format(
        "name: engine-e2e\n"
        "workload: engine\n"
        "engine:\n"
        "  start: [\"{}\", \"{}\", --model, \"{}\", --port, \"{{port}}\", --threads, \"1\"{}]\n"
        "  ready: [/health]\n"
        "  request: {{prompt: a red fox, size: \"{{size}}\", num_inference_steps: "
        "\"{{steps}}\", seed: \"{{seed}}\", guidance_scale: 4.5, response_format: b64_json}}\n"
        "  start_timeout: {}\n{}"
        "defaults: {{model: pixart-alpha-tiny, resolution: 64, repeats: {{min: 2, max: 3, "
        "target_rel_ci: 0.5, max_seconds: 60}}, timeout: 5m{}}}\n"
        "matrix: {{{}}}\n{}",
        EnginePython(), EngineScript("ditbench_engine_server.py").string(), TinyPipeline().string(),
        flags, start_timeout, engine_extra_, defaults_extra_, matrix, top_extra_);
    return RunWrittenSweep(gpus);
  }

  // `run --fresh` of the sweep written in dir_/sweep.yaml; RunSweep's exit code, its output in
  // log_.
  int RunWrittenSweep(const std::string& gpus = "cpu:1") {
    RunOptions o = Options(gpus);
    o.fresh = true;
    LocalLauncher launcher(CurrentEnvironment());
    std::stringstream out, err;
    const int code = RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err);
    log_ = out.str() + err.str();
    return code;
  }

  // `run` of dir_/sweep.yaml into dir_/results.db on `gpus`, with this build's client.
  RunOptions Options(const std::string& gpus = "cpu:1") const {
    RunOptions o;
    o.sweep = dir_ / "sweep.yaml";
    o.db = dir_ / "results.db";
    o.gpus = gpus;
    o.worker = DITBENCH_BIN;  // the engine trial's client: `ditbench engine-trial`
    return o;
  }

  nlohmann::json Sql(const std::string& sql) {
    QueryOptions options;
    options.db = dir_ / "results.db";
    options.sql = sql;
    options.format = TableFormat::kJson;
    std::ostringstream out, err;
    EXPECT_EQ(RunQuery(options, out, err), 0) << err.str();
    return nlohmann::json::parse(out.str());
  }

  nlohmann::json Trials() {
    return Sql("SELECT trial_key, status, error, run_dir FROM trials ORDER BY id");
  }

  // No process of the server's group is left (its pid is the group's id).
  static void ExpectServerGone(const std::filesystem::path& run_dir) {
    std::ifstream in(run_dir / "rank0.json");
    const nlohmann::json rank = nlohmann::json::parse(in);
    ASSERT_TRUE(rank["environment"].contains("engine_server_pid")) << rank.dump();
    const int pid = rank["environment"]["engine_server_pid"].get<int>();
    ASSERT_GT(pid, 1);
    errno = 0;
    EXPECT_EQ(::kill(-pid, 0), -1) << "the server's process group " << pid << " is still alive";
    EXPECT_EQ(errno, ESRCH);
  }

  // Runs a one-trial sweep of a server with `flags` that must fail it; the trial's error, once
  // checked that the trial failed and left no server ("" when it did not fail).
  std::string FailedTrialError(const std::string& flags) {
    EXPECT_NE(RunCampaign(flags, "steps: [2]"), 0);
    const nlohmann::json trials = Trials();
    if (trials.size() != 1u || trials[0]["status"] != "failed") {
      ADD_FAILURE() << "expected one failed trial: " << trials.dump() << "\n" << log_;
      return "";
    }
    ExpectServerGone(trials[0]["run_dir"].get<std::string>());
    return trials[0]["error"].get<std::string>() + " [key " +
           trials[0]["trial_key"].get<std::string>() + "]";
  }

  // Writes a one-trial sweep `name` whose server starts as `start` (the flow list's items) and
  // whose defaults are `defaults` (the flow map's items).
  void WriteOneTrialSweep(const std::string& name, const std::string& start,
                          const std::string& defaults =
                              "model: pixart-alpha-tiny, resolution: 64, steps: 2, repeats: "
                              "{min: 2, max: 2}, timeout: 5m") {
    std::ofstream(dir_ / "sweep.yaml")
        << "name: " << name << "\nworkload: engine\nengine:\n  start: [" << start
        << "]\n  request: {prompt: a red fox, size: \"{size}\", response_format: b64_json}\n"
        << "  start_timeout: 120\ndefaults: {" << defaults << "}\n";
  }

  TempDir dir_;
  std::string engine_extra_;    // more lines of the engine mapping, each "  key: value\n"
  std::string defaults_extra_;  // more keys of the defaults' flow map, each ", key: value"
  std::string top_extra_;       // more top-level lines of the sweep, each "key: value\n"
  FakeInterrupt interrupt_;
  FakeGpuDiscovery gpus_;
  std::string log_;
};

}  // namespace ditbench::test

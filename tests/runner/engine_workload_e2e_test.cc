// The `engine` workload end to end with real processes: the real coordinator (RunSweep with the
// real LocalLauncher) starts `ditbench engine-trial` per trial, which starts the reference
// engine (python/ditbench_engine_server.py, a real diffusers pipeline on CPU) on a free
// loopback port, drives it over HTTP and stops it. Each case checks what the database, the run
// folder and the process table say; the failures are real misbehaving servers, never timing.
#include <signal.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/table_printers.h"
#include "cli/query.h"
#include "engine/http_client.h"
#include "launch/local_launcher.h"
#include "metrics/png_image.h"
#include "runner/sweep_run.h"
#include "tests/support/engine_server.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::engine_workload_e2e_test {
namespace {

using ::testing::HasSubstr;

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
        "target_rel_ci: 0.5, max_seconds: 60}}, timeout: 5m}}\n"
        "matrix: {{{}}}\n",
        test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
        test::TinyPipeline().string(), flags, start_timeout, engine_extra_, matrix);
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

  test::TempDir dir_;
  std::string engine_extra_;  // more lines of the engine mapping, each "  key: value\n"
  test::FakeInterrupt interrupt_;
  test::FakeGpuDiscovery gpus_;
  std::string log_;
};

TEST_F(EngineWorkloadTest, TrialsTimeTheEngineStoreItsFiguresAndLeaveNoServer) {
  EXPECT_EQ(RunCampaign(""), 0) << log_;
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << log_;
  for (const nlohmann::json& t : trials) {
    EXPECT_EQ(t["status"], "ok") << t.dump();
    const std::filesystem::path run_dir = t["run_dir"].get<std::string>();
    // The body as sent, the image decoded, the server gone.
    std::ifstream request(run_dir / "request.json");
    const nlohmann::json body = nlohmann::json::parse(request);
    EXPECT_EQ(body["size"], "64x64");
    EXPECT_EQ(body["prompt"], "a red fox");
    EXPECT_TRUE(body["num_inference_steps"].is_number_integer()) << body.dump();
    EXPECT_EQ(body["guidance_scale"], 4.5);
    std::ifstream png(run_dir / "output.png", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(png)), {});
    const RgbImage image = DecodePng(bytes);
    EXPECT_EQ(image.width, 64);
    EXPECT_EQ(image.height, 64);
    ExpectServerGone(run_dir);
  }
  // Every timed request is a sample; the warm-up one is kept and flagged.
  const nlohmann::json samples = Sql(
      "SELECT t.trial_key, SUM(s.warmup = 0) AS timed, SUM(s.warmup = 1) AS warm FROM samples s "
      "JOIN trials t ON t.id = s.trial_id GROUP BY t.id ORDER BY t.id");
  ASSERT_EQ(samples.size(), 2u);
  for (const nlohmann::json& row : samples) {
    EXPECT_GE(row["timed"].get<int>(), 2) << row.dump();
    EXPECT_EQ(row["warm"].get<int>(), 1) << row.dump();
  }
  const nlohmann::json metrics =
      Sql("SELECT name, COUNT(*) AS trials, MIN(value) AS low FROM metric_values "
          "WHERE name IN ('ready_s', 'first_request_ms') GROUP BY name ORDER BY name");
  ASSERT_EQ(metrics.size(), 2u) << metrics.dump();
  for (const nlohmann::json& row : metrics) {
    EXPECT_EQ(row["trials"], 2) << row.dump();
    EXPECT_GT(row["low"].get<double>(), 0) << row.dump();
  }
  const nlohmann::json latency = Sql("SELECT COUNT(latency_ms) AS n FROM trial_metrics");
  EXPECT_EQ(latency[0]["n"], 2);
}

TEST_F(EngineWorkloadTest, TheRequestBodyIsPartOfTheTrialKey) {
  EXPECT_EQ(RunCampaign("", "resolution: [64]"), 0) << log_;
  const std::string first = Trials()[0]["trial_key"];
  EXPECT_EQ(RunCampaign("", "resolution: [64]"), 0) << log_;
  EXPECT_EQ(Trials()[0]["trial_key"], first);  // same sweep, same key
  const std::string config = Sql("SELECT config_json FROM trials")[0]["config_json"];
  EXPECT_THAT(config, HasSubstr("\"num_inference_steps\":\"{steps}\""));
}

TEST_F(EngineWorkloadTest, NeverReadyFailsAtStartTimeoutWithTheLogTailAndTheSweepGoesOn) {
  EXPECT_NE(RunCampaign(", --never-ready", "steps: [2, 3]", 2), 0);
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << log_;
  for (const nlohmann::json& t : trials) {
    EXPECT_EQ(t["status"], "failed");
    const std::string error = t["error"];
    EXPECT_THAT(error, HasSubstr("start_timeout 2 s"));
    EXPECT_THAT(error, HasSubstr("server log tail"));
    EXPECT_THAT(error, HasSubstr("HTTP 503"));  // the last answer, from the server
    ExpectServerGone(t["run_dir"].get<std::string>());
  }
}

TEST_F(EngineWorkloadTest, AServerThatDiesFailsTheTrialWithItsLogTail) {
  const std::string error = FailedTrialError(", --die-after, \"1\"");
  EXPECT_THAT(error, HasSubstr("request 2 (timed 1)"));
  EXPECT_THAT(error, HasSubstr("server log tail"));
}

TEST_F(EngineWorkloadTest, AnHttpErrorFailsTheTrialNamingTheStatusAndTheRequest) {
  const std::string error = FailedTrialError(", --fail-every, \"2\"");
  EXPECT_THAT(error, HasSubstr("HTTP 500"));
  EXPECT_THAT(error, HasSubstr("request 2 (timed 1)"));
  // The error names its trial: the key stored beside it appears in it too.
  const std::string key = error.substr(error.rfind("[key ") + 5, 16);
  EXPECT_THAT(error.substr(0, error.rfind(" [key ")), HasSubstr("trial " + key));
}

// The reference engine ignores the layout (its command does not pass ulysses on), so the
// ulysses=2 trial's image equals the 1-rank trial's: its output error against that trial is 0
// and its PSNR infinite, through the same output comparison as every trial's.
TEST_F(EngineWorkloadTest, ALayoutsImageIsComparedWithTheOneRankTrials) {
  EXPECT_EQ(RunCampaign("", "ulysses: [1, 2]", 120, "cpu:2"), 0) << log_;
  const nlohmann::json rows =
      Sql("SELECT t.trial_key, json_extract(t.config_json, '$.ulysses') AS ulysses, "
          "m.output_error, m.output_error_note, m.psnr, m.ssim, "
          "m.output_reference_key FROM trials t JOIN trial_metrics m ON m.trial_id = t.id "
          "ORDER BY t.id");
  ASSERT_EQ(rows.size(), 2u) << log_;
  EXPECT_EQ(rows[1]["ulysses"], 2) << rows.dump();
  EXPECT_EQ(rows[1]["output_reference_key"], rows[0]["trial_key"]) << rows.dump();
  EXPECT_EQ(rows[1]["output_error"], 0.0) << rows.dump();
  EXPECT_EQ(rows[1]["output_error_note"], "against " + rows[0]["trial_key"].get<std::string>());
  EXPECT_EQ(rows[1]["ssim"], 1.0) << rows.dump();
  EXPECT_EQ(rows[0]["output_error_note"], "the 1-rank reference itself");
}

// A request slower than the sweep's request_timeout fails the trial naming the timeout; the
// client does not wait for the trial's own (5 minutes here).
TEST_F(EngineWorkloadTest, ARequestPastRequestTimeoutFailsTheTrialNamingIt) {
  engine_extra_ = "  request_timeout: 1\n  warmup_requests: 0\n";
  const std::string error = FailedTrialError(", --delay-s, \"4\"");
  EXPECT_THAT(error, HasSubstr("request 1 (timed 1)"));
  EXPECT_THAT(error, HasSubstr("no complete answer within 1 s"));
}

// Attached with `url:` to a server the user runs: the trials time it, and ditbench starts and
// stops nothing (the server answers after the run, and no trial names a server process).
TEST_F(EngineWorkloadTest, AnAttachedServerIsTimedAndLeftRunning) {
  test::EngineServer server(test::TinyPipeline(), {"--threads", "1"});
  ASSERT_NE(server.port(), 0) << server.log();
  HttpClient client;
  ReadyOptions wait;
  wait.timeout = std::chrono::seconds(120);
  ASSERT_TRUE(WaitReady(client, {server.url("/health")}, wait).ready) << server.log();
  std::ofstream(dir_ / "sweep.yaml") << fmt::format(
      "name: engine-attached\n"
      "workload: engine\n"
      "engine:\n"
      "  url: \"{}\"\n"
      "  request: {{prompt: a red fox, size: \"{{size}}\", num_inference_steps: \"{{steps}}\", "
      "response_format: b64_json}}\n"
      "defaults: {{model: pixart-alpha-tiny, resolution: 64, repeats: 2}}\n"
      "matrix: {{steps: [2, 3]}}\n",
      server.url(""));
  const RunOptions o = Options();
  LocalLauncher launcher(CurrentEnvironment());
  std::stringstream out, err;
  ASSERT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
      << out.str() << err.str();
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 2u);
  for (const nlohmann::json& t : trials) {
    EXPECT_EQ(t["status"], "ok") << t.dump();
    std::ifstream in(std::filesystem::path(t["run_dir"].get<std::string>()) / "rank0.json");
    const nlohmann::json rank = nlohmann::json::parse(in);
    EXPECT_EQ(rank["environment"]["engine_url"], server.url("")) << rank.dump();
    EXPECT_FALSE(rank["environment"].contains("engine_server_pid"));
  }
  EXPECT_TRUE(client.Get(server.url("/health")).ok()) << "the attached server was stopped";
  EXPECT_FALSE(server.exit_status());
}

// Ctrl-C during a trial (an interrupt the test raises once the server listens): the coordinator
// stops the trial's client, and the kernel takes the server with it. The server is found by
// the port its log names, in /proc.
class AtomicInterrupt final : public InterruptSource {
 public:
  bool Requested() const override { return requested.load(); }
  std::atomic<bool> requested{false};
};

// The pid of the reference engine listening on `port` (its command line holds "--port PORT"),
// or 0.
pid_t ServerOnPort(int port) {
  const std::string wanted = std::string("--port") + '\0' + std::to_string(port) + '\0';
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline.find("ditbench_engine_server.py") != std::string::npos &&
        cmdline.find(wanted) != std::string::npos)
      return static_cast<pid_t>(std::stoi(name));
  }
  return 0;
}

// Running and not a zombie.
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, comm, state;
  return static_cast<bool>(stat >> id >> comm >> state) && state != "Z";
}

TEST_F(EngineWorkloadTest, CtrlCDuringATrialLeavesNoServer) {
  std::ofstream(dir_ / "sweep.yaml") << fmt::format(
      "name: engine-interrupted\n"
      "workload: engine\n"
      "engine:\n"
      "  start: [\"{}\", \"{}\", --model, \"{}\", --port, \"{{port}}\", --delay-s, \"600\"]\n"
      "  request: {{prompt: a red fox, size: \"{{size}}\", response_format: b64_json}}\n"
      "defaults: {{model: pixart-alpha-tiny, resolution: 64, timeout: 30m}}\n",
      test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
      test::TinyPipeline().string());
  const RunOptions o = Options();
  LocalLauncher launcher(CurrentEnvironment());
  AtomicInterrupt interrupt;
  std::stringstream out, err;
  std::thread run([&] { RunSweep(o, SweepEffects{launcher, interrupt, gpus_}, out, err); });
  // Wait (at most 120 s) for the server to be ready (its log's "listening on 127.0.0.1:PORT"
  // and a 200 to /health): the client's first request is then held by --delay-s.
  pid_t server = 0;
  for (int i = 0; i < 1200 && server == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             dir_.path(), std::filesystem::directory_options::skip_permission_denied)) {
      if (entry.path().filename() != "server.log") continue;
      std::ifstream log(entry.path());
      const std::string text((std::istreambuf_iterator<char>(log)), {});
      const auto at = text.find("listening on 127.0.0.1:");
      if (at != std::string::npos && text.find("GET /health HTTP/1.1\" 200") != std::string::npos)
        server = ServerOnPort(std::atoi(text.c_str() + at + 23));
    }
  }
  interrupt.requested = true;
  run.join();
  ASSERT_GT(server, 0) << "the server never took a request\n" << out.str() << err.str();
  bool gone = false;
  for (int i = 0; i < 400 && !gone; ++i) {
    gone = !Alive(server);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the server " << server << " outlived the interrupted run";
  if (!gone) ::kill(server, SIGKILL);
}

}  // namespace
}  // namespace ditbench::engine_workload_e2e_test

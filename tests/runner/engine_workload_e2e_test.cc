// The `engine` workload end to end with real processes: the real coordinator (RunSweep with the
// real LocalLauncher) starts `ditbench engine-trial` per trial, which starts the reference
// engine (python/ditbench_engine_server.py, a real diffusers pipeline on CPU) on a free
// loopback port, drives it over HTTP and stops it. Each case checks what the database, the run
// folder and the process table say; the failures are real misbehaving servers, never timing.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "runner/engine_server.h"
#include "runner/sweep_run.h"
#include "tests/support/engine_server.h"
#include "tests/support/engine_workload.h"
#include "tests/support/runner_fakes.h"
#include "tests/support/temp_dir.h"

namespace ditbench::engine_workload_e2e_test {
namespace {

using ::testing::HasSubstr;

using test::EngineWorkloadTest;

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

// A Poisson load served by the reference engine at two layouts, one pipeline and two replicas
// (the engine's own data parallelism, `--replicas {dp}`): each trial's requests are the load's,
// each served once, with the serving figures stored as a `dit` trial's, and the two replicas'
// image compared with the one pipeline's.
TEST_F(EngineWorkloadTest, APoissonLoadAtOneAndTwoReplicasStoresItsTailAndSlo) {
  engine_extra_ = "  degrees: [dp]\n";
  defaults_extra_ =
      ", serve: {arrivals: poisson, rate: 20, requests: 72, warmup_requests: 1, slo_scale: 50}";
  EXPECT_EQ(RunCampaign(", --replicas, \"{dp}\"", "dp: [1, 2]", 120, "cpu:2"), 0) << log_;
  const nlohmann::json rows =
      Sql("SELECT r.trial_key, r.status, r.run_dir, r.dp, r.p95_ms, r.slo_attainment, "
          "r.requests_per_s, r.ssim, m.output_reference_key FROM results r JOIN trials t ON "
          "t.trial_key = r.trial_key JOIN trial_metrics m ON m.trial_id = t.id ORDER BY t.id");
  ASSERT_EQ(rows.size(), 2u) << log_;
  for (const nlohmann::json& r : rows) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_GT(r["p95_ms"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["requests_per_s"].get<double>(), 0) << r.dump();
    EXPECT_GE(r["slo_attainment"].get<double>(), 0) << r.dump();
    const std::filesystem::path run_dir = r["run_dir"].get<std::string>();
    std::ifstream in(run_dir / "rank0.json");
    const nlohmann::json rank = nlohmann::json::parse(in);
    EXPECT_EQ(rank["requests"].size(), 73u);  // the warm-up one and 72 timed (p95 bounded)
    ExpectServerGone(run_dir);
  }
  EXPECT_EQ(rows[1]["dp"], 2);
  EXPECT_EQ(rows[1]["output_reference_key"], rows[0]["trial_key"]) << rows.dump();
  EXPECT_EQ(rows[1]["ssim"], 1.0) << rows.dump();
  // The server's first answer and its cold start, once per trial.
  const nlohmann::json metrics =
      Sql("SELECT COUNT(*) AS n FROM metric_values WHERE name IN ('ready_s', "
          "'first_request_ms', 'isolated_ms')");
  EXPECT_EQ(metrics[0]["n"], 6) << metrics.dump();
}

// A rate sweep through an engine: the capacity trial's closed loop first, then each share of
// it as an open loop at that share of the throughput the engine served, stored with the
// capacity it came from.
TEST_F(EngineWorkloadTest, ARateSweepRunsItsSharesAtTheCapacityTheEngineServed) {
  defaults_extra_ =
      ", serve: {rate: sweep, points: 2, requests: 12, warmup_requests: 1, slo_scale: 50}";
  EXPECT_EQ(RunCampaign("", "steps: [2]"), 0) << log_;
  const auto figure = [](const char* name) {
    return fmt::format(
        "(SELECT value FROM metric_values v WHERE v.trial_id = t.id AND v.name = "
        "'{}') AS {}",
        name, name);
  };
  const nlohmann::json rows = Sql(fmt::format(
      "SELECT t.status, t.error, json_extract(t.config_json, '$.serve.concurrency') AS loop, "
      "json_extract(t.config_json, '$.serve.rate.of_capacity') AS share, {}, {}, {} FROM "
      "trials t ORDER BY t.id",
      figure("requests_per_s"), figure("offered_per_s"), figure("capacity_per_s")));
  ASSERT_EQ(rows.size(), 3u) << log_;
  for (const nlohmann::json& r : rows) EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(rows[0]["loop"], 2) << rows.dump();  // 2 requests in flight for one replica
  const double capacity = rows[0]["requests_per_s"].get<double>();
  ASSERT_GT(capacity, 0);
  for (int i : {1, 2}) {
    const double share = i == 1 ? 0.1 : 0.9;
    EXPECT_EQ(rows[i]["share"], share) << rows.dump();
    EXPECT_EQ(rows[i]["capacity_per_s"], capacity) << rows.dump();
    EXPECT_DOUBLE_EQ(rows[i]["offered_per_s"].get<double>(), share * capacity) << rows.dump();
    EXPECT_GT(rows[i]["requests_per_s"].get<double>(), 0) << rows.dump();
  }
}

// Under a load, a request answered with an error is flagged and counted (error_rate); within
// engine.max_error_rate the trial is ok, past it the trial fails naming the rate and the first
// error, and the requests served are kept. The reference engine answers 500 to every 4th image
// request it gets (the warm-up and isolated ones come first: 3 of them).
TEST_F(EngineWorkloadTest, ALoadsErrorRateIsStoredAndItsThresholdRespected) {
  const std::string load =
      ", serve: {arrivals: poisson, rate: 20, requests: 72, warmup_requests: 1, slo_scale: 50}";
  defaults_extra_ = load;
  engine_extra_ = "  max_error_rate: 0.3\n";
  EXPECT_EQ(RunCampaign(", --fail-every, \"4\"", "steps: [2]"), 0) << log_;
  const nlohmann::json ok =
      Sql("SELECT r.status, m.value AS error_rate FROM results r JOIN trials t ON "
          "t.trial_key = r.trial_key JOIN metric_values m ON m.trial_id = t.id AND "
          "m.name = 'error_rate'");
  ASSERT_EQ(ok.size(), 1u) << log_;
  EXPECT_EQ(ok[0]["status"], "ok") << ok.dump();
  // 19 of the 73 load requests fail; 18 or 19 of them timed, as they reach the server.
  EXPECT_GE(ok[0]["error_rate"].get<double>(), 18.0 / 72) << ok.dump();
  EXPECT_LE(ok[0]["error_rate"].get<double>(), 19.0 / 72) << ok.dump();

  engine_extra_ = "  max_error_rate: 0.1\n";
  EXPECT_NE(RunCampaign(", --fail-every, \"4\"", "steps: [2]"), 0);
  const nlohmann::json failed =
      Sql("SELECT t.id, t.status, t.error, (SELECT COUNT(*) FROM samples s WHERE s.trial_id = t.id "
          "AND s.stage = 'iteration') AS kept FROM trials t ORDER BY t.id DESC LIMIT 1");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["status"], "failed") << failed.dump();
  EXPECT_THAT(failed[0]["error"].get<std::string>(), HasSubstr("max_error_rate 0.1"));
  EXPECT_THAT(failed[0]["error"].get<std::string>(), HasSubstr("HTTP 500"));
  EXPECT_GE(failed[0]["kept"].get<int>(), 50) << "the requests served were not kept";
}

// A server that dies under a load (the 21st image request ends it): the load stops, the trial
// fails with the log tail, and the requests served before are kept.
TEST_F(EngineWorkloadTest, AServerThatDiesUnderALoadFailsTheTrialKeepingWhatItServed) {
  defaults_extra_ =
      ", serve: {arrivals: poisson, rate: 20, requests: 40, warmup_requests: 1, slo_scale: 50}";
  engine_extra_ = "  max_error_rate: 0.5\n";
  const std::string error = FailedTrialError(", --die-after, \"20\"");
  EXPECT_THAT(error, HasSubstr("the load stopped after"));
  EXPECT_THAT(error, HasSubstr("server log tail"));
  EXPECT_THAT(error, HasSubstr("exiting without an answer"));
  const nlohmann::json kept = Sql("SELECT COUNT(*) AS n FROM samples WHERE stage = 'iteration'");
  EXPECT_GE(kept[0]["n"].get<int>(), 10) << "the requests served were not kept";
}

// The restart band: a server whose image changes from one process to the next (the reference
// engine's --process-noise, as GPU kernels chosen anew at a restart) is restarted twice per
// trial. Its band is stored (restart_psnr, finite: the noise moves pixels), and a PSNR gate
// above the band cannot be told from a restart: the verdict says so instead of "below".
TEST_F(EngineWorkloadTest, APsnrGateAboveTheRestartBandIsUnresolved) {
  top_extra_ = "quality: {restarts: 2, min_psnr: 90}\n";
  EXPECT_EQ(RunCampaign(", --process-noise, \"3\"", "ulysses: [1, 2]", 120, "cpu:2"), 0) << log_;
  const nlohmann::json rows =
      Sql("SELECT r.ulysses, r.status, r.psnr, r.quality, (SELECT v.value FROM metric_values v "
          "WHERE v.trial_id = t.id AND v.name = 'restart_psnr') AS band FROM results r JOIN "
          "trials t ON t.trial_key = r.trial_key ORDER BY t.id");
  ASSERT_EQ(rows.size(), 2u) << log_;
  for (const nlohmann::json& r : rows) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    ASSERT_TRUE(r["band"].is_number()) << r.dump();
    EXPECT_GT(r["band"].get<double>(), 20) << r.dump();
    EXPECT_LT(r["band"].get<double>(), 90) << r.dump();
  }
  // The ulysses=2 trial ran in another server process than its 1-rank reference: its PSNR is
  // finite, below the gate, and the gate is above its band.
  EXPECT_LT(rows[1]["psnr"].get<double>(), 90) << rows.dump();
  EXPECT_THAT(rows[1]["quality"].get<std::string>(),
              HasSubstr("unresolved: min_psnr 90 > restart band"));
}

// Without the noise the reference engine gives the same image after a restart: no PSNR is out of
// the band's reach (restart_psnr left out), its SSIM 1; a `dit` sweep cannot ask for restarts.
TEST_F(EngineWorkloadTest, AnExactServerHasNoRestartBandToJudgeAgainst) {
  top_extra_ = "quality: {restarts: 1}\n";
  EXPECT_EQ(RunCampaign("", "steps: [2]"), 0) << log_;
  const nlohmann::json band =
      Sql("SELECT name, value FROM metric_values WHERE name LIKE 'restart_%' ORDER BY name");
  ASSERT_EQ(band.size(), 1u) << band.dump();
  EXPECT_EQ(band[0]["name"], "restart_ssim");
  EXPECT_EQ(band[0]["value"], 1.0);
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
  WriteOneTrialSweep(
      "engine-interrupted",
      fmt::format("\"{}\", \"{}\", --model, \"{}\", --port, \"{{port}}\", "
                  "--delay-s, \"600\"",
                  test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
                  test::TinyPipeline().string()),
      "model: pixart-alpha-tiny, resolution: 64, timeout: 30m");
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

// A process that takes the server's port before the server listens (another server racing for
// a free port): the server ends, and the trial starts it again on another port. The first start
// is a script that puts a real listener on the port, in a session of its own, and exits as a
// server that cannot listen does.
TEST_F(EngineWorkloadTest, APortTakenByAnotherProcessIsLeftForAnother) {
  std::ofstream(dir_ / "squat_once.py") << R"(import os, subprocess, sys
port, marker = sys.argv[1], sys.argv[2]
if not os.path.exists(marker):
    listen = ("import socket, sys, time\n"
              "s = socket.socket()\n"
              "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
              "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
              "s.listen()\n"
              "print('bound', flush=True)\n"
              "time.sleep(300)\n")
    squatter = subprocess.Popen([sys.executable, "-c", listen, port], stdout=subprocess.PIPE,
                                start_new_session=True)
    squatter.stdout.readline()
    with open(marker, "w") as out:
        out.write(str(squatter.pid))
    print(f"cannot listen on 127.0.0.1:{port}: address in use", file=sys.stderr)
    sys.exit(2)
os.execv(sys.executable, [sys.executable] + sys.argv[3:] + ["--port", port])
)";
  WriteOneTrialSweep(
      "engine-port",
      fmt::format("\"{}\", squat_once.py, \"{{port}}\", squatter.pid, \"{}\", --model, \"{}\", "
                  "--threads, \"1\"",
                  test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
                  test::TinyPipeline().string()));
  RunOptions o = Options();
  LocalLauncher launcher(CurrentEnvironment());
  std::stringstream out, err;
  const int code = RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err);
  std::ifstream squatter_pid(dir_ / "squatter.pid");
  pid_t squatter = 0;
  squatter_pid >> squatter;
  ASSERT_GT(squatter, 1) << "the first start did not take the port\n" << out.str() << err.str();
  ::kill(squatter, SIGKILL);
  EXPECT_EQ(code, 0) << out.str() << err.str();
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0]["status"], "ok") << trials.dump();
  const std::filesystem::path run_dir = trials[0]["run_dir"].get<std::string>();
  std::ifstream in(run_dir / "rank0.json");
  const nlohmann::json rank = nlohmann::json::parse(in);
  ASSERT_EQ(rank["environment"]["engine_ports_taken"].size(), 1u) << rank.dump();
  std::ifstream log(run_dir / "server.log");
  const std::string text((std::istreambuf_iterator<char>(log)), {});
  EXPECT_THAT(text, HasSubstr("address in use"));  // the first start's own words, kept
  EXPECT_THAT(text, HasSubstr("another process listens on port"));
  ExpectServerGone(run_dir);
}

// The coordinator killed outright (SIGKILL) while a trial's server runs, a server that ignores
// SIGTERM: its client dies with the coordinator and cannot stop it, so the server outlives
// them. The next `run` of the campaign finds it through the run folder, stops it and says so,
// then runs the trial again.
TEST_F(EngineWorkloadTest, AServerLeftByAKilledCoordinatorIsStoppedByTheNextRun) {
  // The first start ignores SIGTERM and answers slowly (the trial cannot end before the kill);
  // later starts are the plain server.
  std::ofstream(dir_ / "stubborn_once.sh")
      << "if [ ! -e first-start ]; then : > first-start; trap '' TERM; exec \"$@\" --delay-s 600;"
         " fi\nexec \"$@\"\n";
  WriteOneTrialSweep(
      "engine-killed",
      fmt::format("sh, stubborn_once.sh, \"{}\", \"{}\", --model, \"{}\", --port, \"{{port}}\", "
                  "--threads, \"1\"",
                  test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
                  test::TinyPipeline().string()));
  const std::string sweep = (dir_ / "sweep.yaml").string(), db = (dir_ / "results.db").string();
  const pid_t coordinator = ::fork();
  ASSERT_GE(coordinator, 0);
  if (coordinator == 0) {
    const int log = ::open((dir_ / "coordinator.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execl(DITBENCH_BIN, DITBENCH_BIN, "run", sweep.c_str(), "--db", db.c_str(), "--gpus", "cpu:1",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The client records its server once started: then the coordinator is killed.
  std::filesystem::path server_file;
  for (int i = 0; i < 6000 && server_file.empty(); ++i) {
    std::error_code ignored;
    for (auto it = std::filesystem::recursive_directory_iterator(dir_.path(), ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
      if (it->path().filename() == kEngineServerFile) server_file = it->path();
    if (server_file.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(coordinator, SIGKILL);
  int status = 0;
  ::waitpid(coordinator, &status, 0);
  ASSERT_FALSE(server_file.empty()) << "no trial started its server";
  std::ifstream in(server_file);
  const pid_t server = nlohmann::json::parse(in)["pid"].get<pid_t>();
  // The client is gone (the kernel killed it with its coordinator); its server is not.
  ASSERT_EQ(::kill(-server, 0), 0) << "the server went with its client: nothing to clean";

  RunOptions o = Options();
  LocalLauncher launcher(CurrentEnvironment());
  std::stringstream out, err;
  EXPECT_EQ(RunSweep(o, SweepEffects{launcher, interrupt_, gpus_}, out, err), 0)
      << out.str() << err.str();
  EXPECT_THAT(out.str(),
              HasSubstr(fmt::format("stopped the engine server (process group {})", server)));
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {
    gone = ::kill(-server, 0) == -1 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the server's group " << server << " outlived the next run";
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0]["status"], "ok") << trials.dump();
}

}  // namespace
}  // namespace ditbench::engine_workload_e2e_test

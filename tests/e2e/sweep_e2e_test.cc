// End to end: a YAML sweep through the real `ditbench` coordinator, real ditbench-worker
// processes (two ranks over Gloo), the SQLite database, query and the HTML report.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/support/temp_dir.h"

namespace ditbench::sweep_e2e_test {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

CommandResult Shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) result.output += buffer;
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class SweepEndToEndTest : public ::testing::Test {
 protected:
  std::string Ditbench(const std::string& args) {
    return std::string(DITBENCH_BIN) + " " + args;
  }
  // Values of the first column of `sql`, as text.
  std::vector<std::string> Query(const std::string& sql) {
    sqlite3* db = nullptr;
    std::vector<std::string> values;
    EXPECT_EQ(sqlite3_open_v2((dir_ / "results.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
      auto text = sqlite3_column_text(stmt, 0);
      values.push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return values;
  }
  test::TempDir dir_;
};

constexpr const char* kSweep = R"(name: e2e
defaults:
  model: pixart-alpha-tiny
  resolution: 256
  precision: fp32
  steps: 2
  warmup: 1
  repeats: 3
  timeout: 2m
matrix:
  ulysses: [1, 2, 3]
)";

TEST_F(SweepEndToEndTest, SweepRunsStoresResumesQueriesAndReports) {
  std::ofstream(dir_ / "sweep.yaml") << kSweep;
  const std::string db = (dir_ / "results.db").string();
  auto run = Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db + " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  EXPECT_EQ(Query("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok", "skipped"}));
  // Every measured column the quick start can fill is filled for ok trials.
  EXPECT_EQ(Query("SELECT COUNT(*) FROM results WHERE status = 'ok' AND latency_ms > 0 AND "
                  "cov IS NOT NULL AND ci_low_ms <= latency_ms AND latency_ms <= ci_high_ms AND "
                  "rank0_ms > 0 AND skew_ms >= 0 AND peak_mem_mb > 0 AND tflops > 0 AND "
                  "iterations = 3 AND warmup = 1 AND device = 'cpu'")[0],
            "2");
  // One sample per rank per iteration (warm-up included and flagged) for the 2-rank trial.
  const std::string two_rank =
      "(SELECT t.id FROM trials t JOIN results r ON r.trial_key = t.trial_key WHERE r.ulysses = 2)";
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples WHERE stage = 'iteration' AND trial_id = " + two_rank)[0], "8");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples WHERE stage = 'iteration' AND warmup = 1 AND trial_id = " + two_rank)[0], "2");
  EXPECT_EQ(Query("SELECT COUNT(DISTINCT rank) FROM samples WHERE trial_id = " + two_rank)[0], "2");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples WHERE stage = 'step:1' AND trial_id = " + two_rank)[0], "8");
  // Output error as data: the 2-rank trial against the 1-rank one (Ulysses is exact), the 1-rank
  // trial is its own reference; the communication per step was counted.
  EXPECT_EQ(Query("SELECT output_error FROM results WHERE ulysses = 1")[0], "0.0");
  EXPECT_LT(std::stod(Query("SELECT output_error FROM results WHERE ulysses = 2")[0]), 1e-5);
  EXPECT_GT(std::stod(Query("SELECT comm_mb_per_step FROM results WHERE ulysses = 2")[0]), 0);
  // The trial's latency is the slowest rank's per iteration: never below rank 0's.
  EXPECT_EQ(Query("SELECT COUNT(*) FROM results WHERE status = 'ok' AND latency_ms >= rank0_ms")[0], "2");

  // The campaign records the machine: the coordinator's view and rank 0's.
  EXPECT_EQ(Query("SELECT json_extract(environment_json, '$.worker.libtorch') FROM campaigns")[0], "2.11.0");
  EXPECT_EQ(Query("SELECT json_extract(environment_json, '$.cpu_count') > 0 FROM campaigns")[0], "1");
  // The CPU ISA guard ran before LibTorch and said what it decided (worker/cpu_isa_guard.h).
  EXPECT_EQ(Query("SELECT json_extract(environment_json, '$.worker.cpu_isa.probe') FROM campaigns")[0], "ok");

  // Resume: nothing runs again.
  auto again = Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db + " --gpus cpu:2"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("done: 0 ran"), std::string::npos) << again.output;
  EXPECT_EQ(again.output.find(": running"), std::string::npos) << again.output;

  auto csv = Shell(Ditbench("query --db " + db + " --columns trial_key,status,ulysses --format csv"));
  EXPECT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("trial_key,status,ulysses"), std::string::npos) << csv.output;

  const auto html = dir_ / "report.html";
  auto report = Shell(Ditbench("report --db " + db + " -o " + html.string()));
  EXPECT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(html);
  std::string page((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(page.find("new Chart("), std::string::npos);
  EXPECT_EQ(page.find("<script src="), std::string::npos);
}

// Median of `values` (the reference computation, independent of stats/stats.cc).
double ReferenceMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

TEST_F(SweepEndToEndTest, SlowedRankShowsAsSkewAndSetsTheLatency) {
  std::ofstream(dir_ / "slow.yaml") << "name: skew\ndefaults: {model: pixart-alpha-tiny, "
                                       "resolution: 256, precision: fp32, steps: 2, warmup: 1, "
                                       "repeats: 5, ulysses: 2, profile_blocks: true}\n";
  const std::string db = (dir_ / "results.db").string();
  // The test build of the worker with a slow rank injected (tests/support/slow_rank_worker_main.cc).
  auto run = Shell("DITBENCH_TEST_SLOW_RANK=1:40 " +
                   Ditbench("run " + (dir_ / "slow.yaml").string() + " --db " + db +
                            " --gpus cpu:2 --worker " + SLOW_RANK_WORKER));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const double latency = std::stod(Query("SELECT latency_ms FROM results")[0]);
  const double rank0 = std::stod(Query("SELECT rank0_ms FROM results")[0]);
  const double skew = std::stod(Query("SELECT skew_ms FROM results")[0]);
  // Rank 1 sleeps 40 ms after the work; rank 0 waits for it only at the next barrier, which is
  // outside the timed region. So rank 0 looks fast, the trial does not. (Unslowed trials show
  // well under 2 ms of skew; the margins absorb a busy 2-core machine.)
  EXPECT_GT(skew, 25);
  EXPECT_LT(skew, 150);
  EXPECT_GT(latency, rank0 + 25);
  // The stored statistics match a reference computation on the stored samples: per timed
  // iteration the slowest rank, then the median.
  std::vector<double> slowest;
  for (const auto& v : Query("SELECT MAX(ms) FROM samples WHERE stage = 'iteration' AND "
                             "warmup = 0 GROUP BY iteration ORDER BY iteration"))
    slowest.push_back(std::stod(v));
  ASSERT_EQ(slowest.size(), 5u);
  EXPECT_NEAR(latency, ReferenceMedian(slowest), 1e-9);
  // Per-block stages were recorded for both blocks of both steps, on both ranks.
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples WHERE stage = 'step:1/block:1'")[0], "12");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples WHERE stage LIKE 'step:%' AND stage NOT LIKE '%block%'")[0], "24");
}

// `profile: trace` with the real worker: a 2-rank ring trial and a 2-stage PipeFusion trial on
// CPU each leave one gzip'd Chrome trace per rank, with the step, attention and collective
// ranges, and the slowest rank's shares stored (they add up to its step time).
TEST_F(SweepEndToEndTest, ProfiledRingAndPipeFusionTrialsLeaveATracePerRank) {
  std::ofstream(dir_ / "sweep.yaml") << R"(name: traced
profile: trace
defaults: {model: pixart-alpha-tiny, resolution: 256, precision: fp32, steps: 3, warmup: 1,
           repeats: 3, timeout: 3m}
include:
  - {ring: 2}
  - {pipefusion: 2, pipefusion_warmup_steps: 1}
)";
  const std::string db = (dir_ / "results.db").string();
  auto run = Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db +
                            " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE status = 'ok' AND compute_share > 0 AND "
                  "abs(compute_share + comm_share + idle_share - 1) < 1e-9"),
            std::vector<std::string>{"2"});
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE comm_share > 0"),
            std::vector<std::string>{"2"});
  for (const std::string& run_dir : Query("SELECT run_dir FROM results")) {
    for (int rank = 0; rank < 2; ++rank) {
      const auto trace = std::filesystem::path(run_dir) /
                         ("rank" + std::to_string(rank) + ".trace.json.gz");
      ASSERT_TRUE(std::filesystem::is_regular_file(trace)) << trace;
      auto text = Shell("gzip -dc " + trace.string());
      ASSERT_EQ(text.exit_code, 0);
      for (const char* range : {"\"ditbench.step 0\"", "\"ditbench.step 2\"",
                                "\"ditbench.attention\"", "\"ditbench.block ",
                                "\"ditbench.collective "})
        EXPECT_NE(text.output.find(range), std::string::npos) << trace << ": no " << range;
    }
  }
  auto report = Shell(Ditbench("report --db " + db + " -o " + (dir_ / "r.html").string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
}

// Scope pipeline: the decoded image of each parallel trial against the 1-rank trial's. An exact
// strategy's image is the reference's (PSNR inf); PipeFusion with fewer synchronous steps
// uses more stale activations and is further from it.
TEST_F(SweepEndToEndTest, PipelineTrialsStorePsnrAndSsimAndFewerSynchronousStepsCostPsnr) {
  std::ofstream(dir_ / "sweep.yaml") << R"(name: quality
defaults: {model: pixart-alpha-tiny, resolution: 256, precision: fp32, scope: pipeline,
           steps: 4, warmup: 1, repeats: 2, timeout: 3m}
include:
  - {ulysses: 1}
  - {pipefusion: 2, pipefusion_warmup_steps: 1}
  - {pipefusion: 2, pipefusion_warmup_steps: 3}
)";
  const std::string db = (dir_ / "results.db").string();
  auto run = Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db +
                            " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE world_size = 1 AND psnr IS NULL"),
            std::vector<std::string>{"1"});
  const auto psnr = Query("SELECT psnr FROM results WHERE pipefusion = 2 "
                          "ORDER BY pipefusion_warmup_steps");
  ASSERT_EQ(psnr.size(), 2u);
  EXPECT_LT(std::stod(psnr[0]), std::stod(psnr[1])) << psnr[0] << " vs " << psnr[1];
  EXPECT_EQ(Query("SELECT count(*) FROM results WHERE pipefusion = 2 AND ssim > 0 AND "
                  "ssim <= 1 AND psnr > 20"),
            std::vector<std::string>{"2"});
}

// Serving under load through real workers: one replica of Ulysses 2 and two replicas of one
// rank serve the same 11 requests (1 warm-up); every request is kept as its ranks' samples and
// the trial's serving metrics are stored.
TEST_F(SweepEndToEndTest, ServingTrialsServeEveryRequestOnceOnTheirReplicas) {
  std::ofstream(dir_ / "sweep.yaml") << R"(name: serve
defaults: {model: pixart-alpha-tiny, resolution: 256, precision: fp32, steps: 2, warmup: 1,
           repeats: 2, timeout: 3m,
           serve: {arrivals: constant, rate: 50, requests: 10, warmup_requests: 1}}
include:
  - {ulysses: 2}
  - {dp: 2}
)";
  const std::string db = (dir_ / "results.db").string();
  auto run =
      Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db + " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Query("SELECT status FROM results ORDER BY dp"), (std::vector<std::string>{"ok", "ok"}))
      << run.output;
  // Ulysses 2: both ranks run every request; dp 2: each request on one replica's one rank.
  EXPECT_EQ(Query("SELECT count(*) FROM samples s JOIN trials t ON t.id = s.trial_id "
                  "JOIN results r ON r.trial_key = t.trial_key WHERE s.stage = 'iteration' "
                  "GROUP BY r.dp ORDER BY r.dp"),
            (std::vector<std::string>{"22", "11"}));
  EXPECT_EQ(Query("SELECT count(DISTINCT s.iteration) FROM samples s JOIN trials t ON "
                  "t.id = s.trial_id WHERE s.stage = 'queue' GROUP BY t.id"),
            (std::vector<std::string>{"11", "11"}));
  EXPECT_EQ(Query("SELECT count(*) FROM metric_values WHERE name = 'requests_per_s' AND "
                  "value > 0"),
            std::vector<std::string>{"2"});
}

// A rate sweep on ditbench's own worker: the capacity trial (a closed loop of 2 requests a
// replica) runs first, then each share at its share of the throughput that trial measured.
TEST_F(SweepEndToEndTest, ARateSweepRunsItsSharesAtTheCapacityItsWorkerMeasured) {
  std::ofstream(dir_ / "sweep.yaml") << R"(name: rates
defaults: {model: pixart-alpha-tiny, resolution: 256, precision: fp32, steps: 2, warmup: 1,
           repeats: 2, timeout: 3m,
           serve: {rate: sweep, points: 2, requests: 8, warmup_requests: 1}}
)";
  const std::string db = (dir_ / "results.db").string();
  auto run =
      Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db + " --gpus cpu:1"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Query("SELECT status FROM trials ORDER BY id"),
            (std::vector<std::string>{"ok", "ok", "ok"}));
  const auto capacity = Query(
      "SELECT v.value FROM metric_values v JOIN trials t ON t.id = v.trial_id WHERE v.name = "
      "'requests_per_s' AND json_extract(t.config_json, '$.serve.concurrency') = 2");
  ASSERT_EQ(capacity.size(), 1u);
  const auto offered = Query(
      "SELECT v.value / json_extract(t.config_json, '$.serve.rate.of_capacity') FROM "
      "metric_values v JOIN trials t ON t.id = v.trial_id WHERE v.name = 'offered_per_s' "
      "ORDER BY t.id");
  ASSERT_EQ(offered.size(), 2u);
  for (const std::string& o : offered) EXPECT_NEAR(std::stod(o), std::stod(capacity[0]), 1e-9);
}

// A trace replays exactly: ingest checks every served request's arrival and shape against the
// trace's (a trial whose requests arrived otherwise fails); a trace of two shapes is served
// as a mix (each shape timed alone, its figures in the trial's note), and a trace asking for a
// shape the layout cannot run is refused before launch naming that shape.
TEST_F(SweepEndToEndTest, ATraceOfArrivalsReplaysExactly) {
  std::ofstream(dir_ / "arrivals.csv") << "arrival_s,width,height,frames,steps\n"
                                          "0,256,256,0,2\n0.05,128,256,0,1\n0.05,256,256,0,2\n"
                                          "0.2,256,256,0,2\n0.31,128,256,0,1\n";
  std::ofstream(dir_ / "other.csv") << "arrival_s,width,height,frames,steps\n"
                                       "0,256,256,0,2\n0.1,250,256,0,2\n";
  std::ofstream(dir_ / "sweep.yaml") << R"(name: trace
defaults: {model: pixart-alpha-tiny, resolution: 256, precision: fp32, steps: 2, warmup: 1,
           repeats: 2, timeout: 3m, dp: 2}
include:
  - {serve: {arrivals: trace, trace: arrivals.csv}}
  - {serve: {arrivals: trace, trace: other.csv}}
)";
  const std::string db = (dir_ / "results.db").string();
  auto run =
      Shell(Ditbench("run " + (dir_ / "sweep.yaml").string() + " --db " + db + " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;  // a refused trial is skipped, not failed
  EXPECT_EQ(Query("SELECT status FROM trials ORDER BY id"),
            (std::vector<std::string>{"ok", "skipped"}))
      << run.output;
  EXPECT_EQ(Query("SELECT count(*) FROM samples s JOIN trials t ON t.id = s.trial_id "
                  "WHERE t.status = 'ok' AND s.stage = 'iteration'"),
            std::vector<std::string>{"5"});
  const auto note = Query(
      "SELECT m.extra_note FROM trial_metrics m JOIN trials t ON "
      "t.id = m.trial_id WHERE t.status = 'ok'");
  ASSERT_EQ(note.size(), 1u);
  EXPECT_NE(note[0].find("serve: by shape: 256x256, 2 steps: 3 requests"), std::string::npos)
      << note[0];
  EXPECT_NE(note[0].find("128x256, 1 steps: 2 requests"), std::string::npos) << note[0];
  const auto error = Query("SELECT error FROM trials WHERE status = 'skipped'");
  ASSERT_EQ(error.size(), 1u);
  EXPECT_NE(error[0].find("serve: request shape 1 (250x256, 2 steps): resolution 250x256: width "
                          "250 is not a multiple of 16"),
            std::string::npos)
      << error[0];
}

TEST_F(SweepEndToEndTest, MisspelledKeyExitsTwoWithFileLineColumn) {
  std::ofstream(dir_ / "bad.yaml") << "name: bad\ndefaults:\n  modle: pixart-alpha-tiny\n";
  auto r = Shell(Ditbench("run " + (dir_ / "bad.yaml").string() + " --db " +
                          (dir_ / "results.db").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("bad.yaml:3:3: 'modle'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'model'?"), std::string::npos) << r.output;
}

TEST_F(SweepEndToEndTest, WorkerFailureIsRecordedAndTheSweepGoesOn) {
  // A worker that does not exist for one trial is impossible to express per trial; instead a
  // timeout far below the trial's run time makes every trial time out, and the sweep finishes.
  std::ofstream(dir_ / "slow.yaml") << "name: slow\ndefaults: {model: pixart-alpha-tiny, "
                                       "resolution: 256, precision: fp32, steps: 2, warmup: 1, "
                                       "repeats: 1000, timeout: 2s}\nmatrix:\n  ulysses: [1, 2]\n";
  auto r = Shell(Ditbench("run " + (dir_ / "slow.yaml").string() + " --db " +
                          (dir_ / "results.db").string() + " --gpus cpu:2"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(Query("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"timeout", "timeout"}));
  // No rank survived its trial.
  // "[d]" keeps pgrep from matching the shell that runs it.
  EXPECT_EQ(Shell("pgrep -f '[d]itbench-worker --trial " + dir_.path().string() + "'").exit_code, 1);
}

// Real weights: a preset whose dimensions are overridden to a diffusers folder's (the tiny Flux
// and 16-channel VAE of tests/reference/data), loaded by every rank, through scope pipeline.
std::string WeightsSweep(const std::string& model_extra) {
  const std::string data = REFERENCE_DATA;
  return "name: weights\n"
         "defaults:\n"
         "  model: {preset: flux-dev-tiny, heads: 2, hidden: 64, text_dim: 48, weights: " +
         data + "/flux/model, vae_weights: " + data + "/vae16/model" + model_extra + "}\n"
         "  resolution: 128\n  precision: fp32\n  scope: pipeline\n  steps: 2\n"
         "  warmup: 1\n  repeats: 2\n  timeout: 2m\n"
         "matrix:\n  ulysses: [1, 2]\n  vae_tile: [0, 64]\n";
}

TEST_F(SweepEndToEndTest, WeightsFromADiffusersFolderAreLoadedByEveryRank) {
  std::ofstream(dir_ / "weights.yaml") << WeightsSweep("");
  const std::string db = (dir_ / "results.db").string();
  auto run = Shell(Ditbench("run " + (dir_ / "weights.yaml").string() + " --db " + db +
                            " --gpus cpu:2"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(Query("SELECT status FROM results ORDER BY ulysses"),
            (std::vector<std::string>{"ok", "ok", "ok", "ok"}));
  // Both ranks computed the same model: the Ulysses trials match their 1-rank ones (tiled
  // against tiled: the tile size is part of the key).
  for (const std::string& error : Query("SELECT output_error FROM results WHERE ulysses = 2"))
    EXPECT_LT(std::stod(error), 1e-5);
  EXPECT_EQ(Query("SELECT COUNT(DISTINCT trial_key) FROM results")[0], "4");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM trials WHERE json_extract(config_json, '$.vae_tile') = 64")[0],
            "2");
  EXPECT_EQ(Query("SELECT json_extract(config_json, '$.model.weights') LIKE '%/flux/model' "
                  "FROM trials")[0], "1");
  EXPECT_NE(Query("SELECT COUNT(*) FROM samples WHERE stage = 'decode'")[0], "0");
}

TEST_F(SweepEndToEndTest, WeightsFolderOfAnotherArchitectureIsRefusedBeforeAnyTrialRuns) {
  // Without the overrides the preset has 4 heads, the folder 2.
  const std::string data = REFERENCE_DATA;
  std::ofstream(dir_ / "mismatch.yaml")
      << "name: mismatch\ndefaults:\n  model: {preset: flux-dev-tiny, weights: " << data
      << "/flux/model}\n  resolution: 128\n  precision: fp32\n";
  auto plan = Shell(Ditbench("plan " + (dir_ / "mismatch.yaml").string()));
  EXPECT_EQ(plan.exit_code, 2) << plan.output;
  EXPECT_NE(plan.output.find("mismatch.yaml:3"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("num_attention_heads is 2 where model 'flux-dev-tiny' has heads 4"),
            std::string::npos)
      << plan.output;
}

TEST_F(SweepEndToEndTest, WeightsThatDoNotMatchTheirConfigFailTheTrialWithTheTensorNamed) {
  // Flux's config.json beside SD3's tensors: the sweep is valid, loading is not.
  const std::string data = REFERENCE_DATA;
  const auto folder = dir_ / "broken";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(data + "/flux/model/config.json", folder / "config.json");
  std::filesystem::copy_file(data + "/sd3/model/diffusion_pytorch_model.safetensors",
                             folder / "diffusion_pytorch_model.safetensors");
  std::string sweep = WeightsSweep("");
  sweep.replace(sweep.find(data + "/flux/model"), (data + "/flux/model").size(), folder.string());
  std::ofstream(dir_ / "broken.yaml") << sweep;
  const std::string db = (dir_ / "results.db").string();
  auto run = Shell(Ditbench("run " + (dir_ / "broken.yaml").string() + " --db " + db +
                            " --gpus cpu:2"));
  EXPECT_EQ(Query("SELECT DISTINCT status FROM results"), (std::vector<std::string>{"failed"}))
      << run.output;
  for (const std::string& error : Query("SELECT error FROM results"))
    EXPECT_NE(error.find(folder.string()), std::string::npos) << error;
}

}  // namespace
}  // namespace ditbench::sweep_e2e_test

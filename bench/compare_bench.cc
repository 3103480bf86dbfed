// How long `compare` and `report` take on a large database: two campaigns of one sweep, each
// with trials/2 trials (seeds x 8 configurations; in B the 1-rank ones are 10% slower) of
// `samples` timed iterations, so trials x
// samples samples in all (default 10,000 x 200 = 2 million), plus a denoising-step sample for
// each of the first 10 iterations (the stage chart), a peak memory and, above one rank, an
// output error per trial (the memory and error charts). The report (both campaigns) is
// written to PATH.report.html. The database is generated once at
// PATH (kept for reruns and for rendering the page in a browser). Prints one line per phase.
// Run: `build/bench/compare_bench PATH [trials] [samples]`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "analysis/comparison.h"
#include "report/html_report.h"
#include "storage/results_db.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace ditbench;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU seconds of this process since `since` (std::clock): steadier than wall time on a shared
// machine.
double CpuSeconds(std::clock_t since) {
  return static_cast<double>(std::clock() - since) / CLOCKS_PER_SEC;
}

void Generate(const std::filesystem::path& path, int trials, int samples) {
  auto db = ResultsDb::Open(path);
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(0, 0.02);
  for (int c = 0; c < 2; ++c) {
    CampaignRecord campaign;
    campaign.sweep_name = "bench";
    campaign.sweep_path = "bench.yaml";
    campaign.spec_text = "name: bench\n";
    campaign.spec_hash = Sha256Hex(campaign.spec_text);
    campaign.build = c ? "def" : "abc";
    campaign.host = "bench";
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(campaign, /*fresh=*/true);
    for (int t = 0; t < trials / 2; ++t) {
      TrialConfig config;
      config.model = "pixart-alpha";
      config.resolution = 1024;
      config.ulysses = 1 << (t % 4);
      config.cfg = 1 + (t / 4) % 2;
      config.seed = t / 8;  // 8 configurations per seed: every key distinct
      TrialRecord trial;
      trial.trial_key = TrialKey(config);
      trial.config = config;
      trial.status = TrialStatus::kOk;
      trial.world_size = config.world_size();
      trial.device = "NVIDIA H100 80GB HBM3";
      trial.started_at = 1700000000;
      trial.finished_at = 1700000001;
      // B: the 1-rank trials 10% slower.
      const double base = 900.0 / config.world_size() * (c && t % 8 == 0 ? 1.1 : 1.0);
      std::vector<double> series;
      for (int i = 0; i < samples; ++i) {
        const double ms = base * (1 + noise(rng));
        series.push_back(ms);
        trial.samples.push_back({0, i, "iteration", ms, false});
        // The first 10 iterations also time their denoising step (the report's stage chart).
        if (i < 10) trial.samples.push_back({0, i, "step:0", 0.9 * ms, false});
      }
      std::sort(series.begin(), series.end());
      TrialMetrics m;
      m.latency_ms = series[series.size() / 2];
      m.ci_low_ms = series[series.size() / 2 - 10];
      m.ci_high_ms = series[series.size() / 2 + 10];
      m.cov = 0.02;
      m.iterations = samples;
      m.peak_mem_mb = 40000.0 / config.world_size();  // the memory chart
      if (config.world_size() > 1) m.output_error = 1e-6 * config.world_size();  // error chart
      trial.metrics = m;
      db->writer().RecordTrial(id, trial);
    }
    db->writer().FinishCampaign(id);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: compare_bench PATH [trials] [samples]\n");
    return 2;
  }
  const std::filesystem::path path = argv[1];
  const int trials = argc > 2 ? std::atoi(argv[2]) : 10000;
  const int samples = argc > 3 ? std::atoi(argv[3]) : 200;
  if (!std::filesystem::exists(path)) {
    auto start = Clock::now();
    Generate(path, trials, samples);
    std::printf("generate %d trials x %d samples: %.2f s\n", trials, samples, Seconds(start));
  }
  auto db = ResultsDb::Open(path, /*read_only=*/true);
  auto start = Clock::now();
  auto cpu = std::clock();
  Comparison comparison =
      CompareCampaigns(db->reader(), {path, {1}, "1"}, db->reader(), {path, {2}, "2"});
  int slower = 0;
  for (const ComparedTrial& t : comparison.trials) slower += t.change.verdict == Verdict::kSlower;
  std::printf("compare: %zu matched trials (%d slower) in %.2f s (%.2f s CPU)\n",
              comparison.trials.size(), slower, Seconds(start), CpuSeconds(cpu));
  start = Clock::now();
  cpu = std::clock();
  const std::string html = RenderHtmlReport({path, {}, {}, {}, ""});
  std::printf("report: %.2f MB in %.2f s (%.2f s CPU)\n", html.size() / 1e6, Seconds(start),
              CpuSeconds(cpu));
  // Kept beside the database for a browser to draw (docs/benchmarks.md).
  std::ofstream(path.string() + ".report.html", std::ios::binary) << html;
  start = Clock::now();
  cpu = std::clock();
  const std::string with_baseline = RenderHtmlReport({path, {}, {2}, {}, "1"});
  std::printf("report --baseline: %.2f MB in %.2f s (%.2f s CPU)\n",
              with_baseline.size() / 1e6, Seconds(start), CpuSeconds(cpu));
  return 0;
}

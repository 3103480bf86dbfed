// Writes the database that bench/read-scale times the read commands on: every valid trial of
// SWEEP (planned for cpu:SLOTS, as `run --gpus cpu:SLOTS` would run it) recorded as an ok CPU
// trial of campaign 1, and the first RERUN of them again, 5% slower, as campaign 2 (what
// `compare 1 2` matches). Each trial's latency is its analytic estimate (plan/sweep_plan.h)
// with 2% of deterministic noise, over 5 timed iterations after 1 warm-up; its start and end
// leave 0.5 s of start-up. Written through ResultsDb, one transaction per trial as `run`
// commits them, so every read path sees what it sees after a real `run`: only the worker is
// left out (10,000 trials of the fake worker take most of an hour on a shared 2-core machine).
// Run: `build/bench/read_scale_bench SWEEP DB [SLOTS (4)] [RERUN (1000)]`; DB must not exist.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <string>

#include "experiments/sweep_spec.h"
#include "plan/sweep_plan.h"
#include "storage/results_db.h"

namespace {

using namespace ditbench;

// One ok trial of `t` whose every iteration takes about `ms`.
TrialRecord OkTrial(const PlannedTrial& t, double ms, std::mt19937& rng, double started_at) {
  std::normal_distribution<double> noise(0, 0.02);
  TrialRecord trial;
  trial.trial_key = t.key;
  trial.config = t.config;
  trial.status = TrialStatus::kOk;
  trial.world_size = t.config.world_size();
  trial.device = "cpu";
  trial.started_at = started_at;
  std::vector<double> series;
  for (int i = 0; i < 6; ++i) {
    const double sample = ms * (1 + noise(rng));
    for (int rank = 0; rank < trial.world_size; ++rank)
      trial.samples.push_back({rank, i, "iteration", sample, i == 0});
    if (i > 0) series.push_back(sample);
  }
  std::sort(series.begin(), series.end());
  TrialMetrics m;
  m.latency_ms = series[series.size() / 2];
  m.mean_ms = m.latency_ms;
  m.min_ms = series.front();
  m.max_ms = series.back();
  m.ci_low_ms = series.front();
  m.ci_high_ms = series.back();
  m.cov = 0.02;
  m.iterations = static_cast<int>(series.size());
  m.warmup = 1;
  m.peak_mem_mb = 200.0 / trial.world_size;
  trial.metrics = m;
  trial.finished_at = started_at + 0.5 + 6 * ms / 1000;
  return trial;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: read_scale_bench SWEEP DB [SLOTS] [RERUN]\n");
    return 2;
  }
  const std::filesystem::path sweep = argv[1], path = argv[2];
  const int slots = argc > 3 ? std::atoi(argv[3]) : 4;
  const int rerun = argc > 4 ? std::atoi(argv[4]) : 1000;
  if (std::filesystem::exists(path)) {
    std::fprintf(stderr, "read_scale_bench: %s exists\n", path.c_str());
    return 2;
  }
  const ParseResult parsed = ParseSweepFile(sweep);
  if (!parsed.ok()) {
    for (const auto& e : parsed.errors) std::fprintf(stderr, "%s\n", e.ToString().c_str());
    return 2;
  }
  PlanAssumptions assumptions;
  assumptions.device = "cpu";
  assumptions.cpu_cores = slots;
  const SweepPlan plan = PlanSweep(parsed.spec, Capacity{slots, false}, assumptions);
  auto db = ResultsDb::Open(path);
  std::mt19937 rng(1);
  double clock = 1700000000;
  int recorded = 0;
  for (int c = 0; c < 2; ++c) {
    CampaignRecord campaign;
    campaign.sweep_name = parsed.spec.name;
    campaign.sweep_path = sweep.string();
    std::ostringstream text;
    text << std::ifstream(sweep).rdbuf();
    campaign.spec_text = text.str();
    campaign.spec_hash = Sha256Hex(campaign.spec_text);
    campaign.build = c ? "rev-2" : "rev-1";
    campaign.host = "bench";
    campaign.environment = {{"slots", slots}, {"on_gpu", false}, {"cpu_count", slots}};
    const std::int64_t id = db->writer().ResumeOrCreateCampaign(campaign, /*fresh=*/true);
    int n = 0;
    for (const PlannedTrial& t : plan.trials) {
      if (t.invalid_reason || !t.estimate) continue;
      if (c == 1 && n >= rerun) break;
      const double ms = t.estimate->iteration_ms * (c ? 1.05 : 1.0);
      TrialRecord trial = OkTrial(t, ms, rng, clock);
      clock = trial.finished_at;
      db->writer().RecordTrial(id, trial);
      ++n;
    }
    db->writer().FinishCampaign(id);
    recorded += n;
  }
  std::printf("%d trials recorded in %s\n", recorded, path.c_str());
  return 0;
}

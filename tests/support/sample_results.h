// Builders of plausible campaign and trial records, for tests of storage, query and report.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "experiments/trial.h"
#include "storage/records.h"

namespace ditbench::test {

inline CampaignRecord MakeCampaign(std::string sweep_name, std::string build = "abc1234") {
  CampaignRecord campaign;
  campaign.sweep_name = std::move(sweep_name);
  campaign.sweep_path = "sweeps/" + campaign.sweep_name + ".yaml";
  campaign.spec_text = "name: " + campaign.sweep_name + "\n";
  campaign.spec_hash = Sha256Hex(campaign.spec_text);
  campaign.build = std::move(build);
  campaign.host = "testhost";
  campaign.environment = {{"gpus", 0}};
  return campaign;
}

inline TrialConfig MakeConfig(int ulysses, int ring = 1, Precision precision = Precision::kBf16,
                              int resolution = 1024) {
  TrialConfig config;
  config.model = "pixart-alpha";
  config.resolution = resolution;
  config.precision = precision;
  config.ulysses = ulysses;
  config.ring = ring;
  return config;
}

// A finished trial of `config`: `ok` with metrics centred on `latency_ms` and two samples per
// rank, or another status with `error` and no metrics.
inline TrialRecord MakeTrial(const TrialConfig& config, TrialStatus status, double latency_ms,
                             std::string error = "") {
  TrialRecord trial;
  trial.trial_key = TrialKey(config);
  trial.config = config;
  trial.status = status;
  trial.error = std::move(error);
  trial.world_size = config.world_size();
  trial.device = "cpu";
  trial.run_dir = "runs/" + trial.trial_key;
  trial.started_at = 1700000000;
  trial.finished_at = 1700000060;
  if (status != TrialStatus::kOk) return trial;
  for (int rank = 0; rank < trial.world_size; ++rank) {
    trial.samples.push_back({rank, 0, "iteration", latency_ms * 2, true});
    trial.samples.push_back({rank, 1, "iteration", latency_ms, false});
    trial.samples.push_back({rank, 2, "iteration", latency_ms + 1, false});
  }
  TrialMetrics m;
  m.latency_ms = latency_ms;
  m.mean_ms = latency_ms + 0.5;
  m.p90_ms = m.p99_ms = m.max_ms = latency_ms + 1;
  m.min_ms = latency_ms;
  m.std_ms = 0.5;
  m.cov = 0.5 / m.mean_ms;
  m.ci_low_ms = latency_ms - 1;
  m.ci_high_ms = latency_ms + 1;
  m.rank0_ms = latency_ms;
  m.skew_ms = 0.25;
  m.iterations = 2;
  m.warmup = 1;
  m.peak_mem_mb = 1000.0 / trial.world_size;
  trial.metrics = m;
  return trial;
}

// An `ok` trial of `config` on `device` whose timed iterations (every rank alike) are `ms`,
// after one warm-up iteration; metrics from the median.
inline TrialRecord MakeTrialWithSamples(const TrialConfig& config, const std::vector<double>& ms,
                                        std::string device = "cpu") {
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : (sorted[sorted.size() / 2 - 1] +
                                             sorted[sorted.size() / 2]) / 2;
  TrialRecord trial = MakeTrial(config, TrialStatus::kOk, median);
  trial.device = std::move(device);
  trial.samples.clear();
  for (int rank = 0; rank < trial.world_size; ++rank) {
    trial.samples.push_back({rank, 0, "iteration", median * 2, true});
    for (std::size_t i = 0; i < ms.size(); ++i)
      trial.samples.push_back({rank, static_cast<int>(i) + 1, "iteration", ms[i], false});
  }
  trial.metrics->iterations = static_cast<int>(ms.size());
  return trial;
}

// A scope-pipeline sweep's trials as a busy machine leaves them, the widest group table the
// report draws on CPU (issue 34: "tables with PSNR and SSIM are wider than the page"): 1 rank,
// ulysses=2, ring=2 and two PipeFusion trials, one of them with a long setting
// (pipefusion_warmup_steps=2) and one below the quality gate. Every trial was measured busy,
// so each speedup carries two or three doubts; every parallel trial has an output error,
// PSNR and SSIM, one of them exact (SSIM 1, PSNR inf).
inline std::vector<TrialRecord> MakeBusyPipelineTrials() {
  struct Layout {
    int ulysses, ring, pipefusion, warmup_steps;
    double ms, error, psnr, ssim;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Layout layouts[] = {{1, 1, 1, 1, 150, 0, 0, 0},
                            {2, 1, 1, 1, 94, 1.4e-6, inf, 1.0},
                            {1, 2, 1, 1, 94, 1.4e-6, 130.8, 0.99999},
                            {1, 1, 2, 1, 75, 0.28, 24.8, 0.611},
                            {1, 1, 2, 2, 84, 0.07, 36.8, 0.9321}};
  std::vector<TrialRecord> trials;
  for (const Layout& l : layouts) {
    TrialConfig config = MakeConfig(l.ulysses, l.ring, Precision::kBf16, 256);
    config.model = "pixart-alpha-tiny";
    config.scope = Scope::kPipeline;
    config.pipefusion = l.pipefusion;
    config.pipefusion_warmup_steps = l.warmup_steps;
    TrialRecord trial = MakeTrial(config, TrialStatus::kOk, l.ms);
    trial.health = {{"busy", true},
                    {"note",
                     "load 5.12 on 2 cores; others used 1.23 cores: cc1plus (pid 11697) "
                     "0.36, cc1plus (pid 11749) 0.30"}};
    if (config.world_size() > 1) {
      trial.metrics->output_error = l.error;
      trial.metrics->psnr = l.psnr;
      trial.metrics->ssim = l.ssim;
      trial.metrics->quality = l.psnr < 35 ? "below: psnr 24.8 < 35" : "ok";
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

}  // namespace ditbench::test

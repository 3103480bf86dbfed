#include "runner/sweep_plan.h"

#include <algorithm>
#include <memory>
#include <set>
#include <thread>

#include "experiments/comm_volume.h"
#include "experiments/device_peaks.h"
#include "model_zoo/model_config.h"
#include "storage/results_db.h"

namespace ditbench {
namespace {

double BytesPerElement(Precision p) {
  return p == Precision::kBf16 || p == Precision::kFp16 ? 2.0 : 4.0;
}

// Median latencies of earlier ok trials by key, newest campaign first. Best effort: a missing,
// unreadable or not yet migrated database means no measurements.
class EarlierResults {
 public:
  explicit EarlierResults(const std::filesystem::path& path) {
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) return;
    try {
      db_ = ResultsDb::Open(path, /*read_only=*/true);
    } catch (const StorageError&) {
      db_.reset();
    }
  }

  std::optional<ResultsDb::Measurement> Measured(const std::string& key) {
    if (!db_) return std::nullopt;
    try {
      return db_->NewestOkMeasurement(key);
    } catch (const StorageError&) {
      return std::nullopt;
    }
  }

 private:
  std::unique_ptr<ResultsDb> db_;
};

}  // namespace

double TimedIterations(const TrialConfig& c, double iteration_ms) {
  const double budget_iterations =
      c.repeats.max_seconds > 0 && iteration_ms > 0 ? c.repeats.max_seconds * 1000 / iteration_ms
                                                    : c.repeats.max;
  return std::clamp(budget_iterations, double(c.repeats.min), double(c.repeats.max));
}

int CpuCoresUsed(int cores, int ranks) {
  if (cores <= 0) cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ranks = std::max(1, ranks);
  // As the worker sets its threads (experiments/worker/worker.cc): cores / ranks each, at
  // least one; time-sharing beyond the cores adds nothing.
  return std::min(cores, ranks * std::max(1, cores / ranks));
}

TrialEstimate AnalyticEstimate(const TrialConfig& c, const PlanAssumptions& a) {
  TrialEstimate e;
  e.source = "analytic";
  std::string unused;
  auto model = ResolveModel(c.model, c.model_overrides, &unused);
  if (!model) return e;
  const int forwards = c.scope == Scope::kForward ? 1 : c.steps;
  const int samples = c.batch * (model->negative_prompt ? 2 : 1) * c.dp;
  const double flops = forwards * ForwardFlops(*model, c.resolution, samples);
  double tflops = 0;
  if (a.device != "cpu") {
    tflops = DensePeakTflops(a.device, c.precision).value_or(100.0) * a.efficiency *
             c.world_size();
  } else {
    tflops = a.cpu_tflops_per_core * CpuCoresUsed(a.cpu_cores, c.world_size());
  }
  e.iteration_ms = flops / (tflops * 1e12) * 1000;
  if (c.pipefusion > 1) {
    // Synchronous steps run the stages one after another; patch steps fill and drain a
    // pipeline of `patches` patches through `pipefusion` stages.
    const double p = c.pipefusion, m = c.effective_pipefusion_patches();
    const double sync = std::min(std::max(c.pipefusion_warmup_steps, 0), forwards);
    e.iteration_ms *= (sync * p + (forwards - sync) * (m + p - 1) / m) / forwards;
  }
  if (auto comm = CommBytesPerStep(*model, c)) {
    e.comm_mb_per_step = *comm / 1048576.0;
    const double link = a.link_gb_per_s > 0 ? a.link_gb_per_s : (a.device == "cpu" ? 2.0 : 100.0);
    e.iteration_ms += forwards * *comm / (link * 1e9) * 1000;  // not overlapped: an upper bound
  }

  const double bytes = BytesPerElement(c.precision);
  // Weights: replicated on every rank, except that PipeFusion splits the blocks.
  const double weights = double(ParameterCount(*model)) * bytes / c.pipefusion;
  // Activations: a working set of about 16 hidden-wide tensors over this rank's tokens (flash
  // attention keeps scores out of memory), for the samples this rank runs.
  const double rank_tokens =
      double(ImageTokens(*model, c.resolution) + model->text_tokens) / (c.ring * c.ulysses);
  const double rank_samples = double(c.batch) * (model->negative_prompt ? 2 : 1) / c.cfg;
  const double activations = 16.0 * rank_tokens * model->hidden * rank_samples * bytes;
  e.memory_mb = (weights + activations) / 1048576.0;
  e.trial_s = a.startup_s + (c.warmup + TimedIterations(c, e.iteration_ms)) * e.iteration_ms / 1000;
  return e;
}

SweepPlan PlanSweep(const SweepSpec& spec, const Capacity& capacity, const PlanAssumptions& a,
                    const std::filesystem::path& db) {
  SweepPlan plan;
  plan.counts = ExpandSweep(spec, capacity.slots);
  EarlierResults earlier(db);
  std::set<std::string> keys;
  for (auto& config : plan.counts.trials) {
    std::string key = TrialKey(config);
    if (!keys.insert(key).second) {
      ++plan.duplicates;
      continue;
    }
    PlannedTrial t;
    t.config = std::move(config);
    t.key = std::move(key);
    Verdict verdict = Judge(t.config, capacity);
    t.invalid_reason = verdict.invalid ? verdict.invalid : verdict.unsupported;
    t.unsupported = !verdict.invalid && verdict.unsupported;
    plan.trials.push_back(std::move(t));
  }
  plan.counts.trials.clear();

  // Estimates: a trial measured before takes its own time, memory and start-up; the others
  // are analytic, with the start-up measured on this database's trials when there are any.
  std::vector<std::optional<ResultsDb::Measurement>> measured(plan.trials.size());
  double startup_sum = 0;
  int startups = 0;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    if (plan.trials[i].invalid_reason && !plan.trials[i].unsupported) continue;
    measured[i] = earlier.Measured(plan.trials[i].key);
    if (measured[i] && measured[i]->startup_s) {
      startup_sum += *measured[i]->startup_s;
      ++startups;
    }
  }
  PlanAssumptions analytic = a;
  if (startups > 0) analytic.startup_s = startup_sum / startups;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    PlannedTrial& t = plan.trials[i];
    if (t.invalid_reason && !t.unsupported) continue;
    // A command's cost is its program's: only an earlier measurement of it says anything.
    if (t.config.workload == "command" && !measured[i]) continue;
    TrialEstimate e = AnalyticEstimate(t.config, analytic);
    if (const auto& m = measured[i]) {
      e.iteration_ms = m->latency_ms;
      if (m->peak_mem_mb) e.memory_mb = *m->peak_mem_mb;
      e.trial_s = m->startup_s.value_or(analytic.startup_s) +
                  (t.config.warmup + TimedIterations(t.config, m->latency_ms)) * m->latency_ms /
                      1000;
      e.source = "measured";
    }
    // Every launch of a trial costs a whole trial (replicates: separate processes).
    if (!t.unsupported) plan.estimated_wall_s += e.trial_s * spec.replicates;
    t.estimate = e;
  }
  return plan;
}

}  // namespace ditbench

#include "metrics/trial_metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/trial_rows.h"
#include "machine/device_peaks.h"
#include "metrics/metric_table.h"
#include "metrics/serve_loop.h"
#include "metrics/trial_kind_metrics.h"
#include "model_zoo/shapes/memory_traffic.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/parallel_layout.h"
#include "stats/stats.h"

namespace ditbench {

std::map<int, IterationSpread> SlowestPerIteration(const std::vector<Sample>& samples,
                                                   std::string_view stage) {
  std::map<int, IterationSpread> spread;
  for (const Sample& s : samples) {
    if (s.warmup || s.stage != stage) continue;
    auto [it, first] = spread.try_emplace(s.iteration, IterationSpread{s.ms, s.ms});
    if (!first) {
      it->second.slowest_ms = std::max(it->second.slowest_ms, s.ms);
      it->second.fastest_ms = std::min(it->second.fastest_ms, s.ms);
    }
  }
  return spread;
}

std::vector<double> SlowestSeries(const std::vector<Sample>& samples, std::string_view stage) {
  std::vector<double> series;
  for (const auto& [iteration, spread] : SlowestPerIteration(samples, stage))
    series.push_back(spread.slowest_ms);
  return series;
}

std::optional<RankProblem> TimedIterationsProblem(const std::vector<RankResult>& ranks,
                                                  int min_timed) {
  auto timed = [](const RankResult& r) {
    std::set<int> iterations;
    for (const Sample& s : r.samples)
      if (!s.warmup && s.stage == kIterationStage) iterations.insert(s.iteration);
    return iterations;
  };
  if (ranks.empty()) return std::nullopt;
  const std::set<int> first = timed(ranks.front());
  if (first.size() < static_cast<std::size_t>(min_timed))
    return RankProblem{ranks.front().rank,
                       fmt::format("'samples' has {} timed iterations; expected at least {} "
                                   "(repeats.min)",
                                   first.size(), min_timed)};
  // Whatever repeats.min says, a trial with no timed iteration has no latency to store.
  if (first.empty())
    return RankProblem{ranks.front().rank,
                       fmt::format("'samples' has no timed '{}' sample; a trial is measured "
                                   "only by its timed iterations",
                                   kIterationStage)};
  for (std::size_t i = 1; i < ranks.size(); ++i) {
    const std::set<int> other = timed(ranks[i]);
    for (const int iteration : first)
      if (!other.contains(iteration))
        return RankProblem{ranks[i].rank,
                           fmt::format("'samples' has no timed iteration {}, which rank {} "
                                       "timed; every rank must time the same iterations",
                                       iteration, ranks.front().rank)};
    for (const int iteration : other)
      if (!first.contains(iteration))
        return RankProblem{ranks[i].rank,
                           fmt::format("'samples' has timed iteration {}, which rank {} did not "
                                       "time; every rank must time the same iterations",
                                       iteration, ranks.front().rank)};
  }
  return std::nullopt;
}

namespace {

// Whether `stage` is a whole denoising step ("step:3", not "step:3/block:1"), and which.
std::optional<int> WholeStep(const std::string& stage) {
  int step = -1, end = 0;
  if (std::sscanf(stage.c_str(), "step:%d%n", &step, &end) == 1 &&
      static_cast<std::size_t>(end) == stage.size() && step >= 0)
    return step;
  return std::nullopt;
}

}  // namespace

std::optional<RankProblem> StepReuseProblem(const std::vector<RankResult>& ranks) {
  // (iteration, step) -> reused, every sample of a whole step of one rank.
  auto reuse = [](const RankResult& r) {
    std::map<std::pair<int, int>, bool> flags;
    for (const Sample& s : r.samples)
      if (auto step = WholeStep(s.stage)) flags[{s.iteration, *step}] = s.reused;
    return flags;
  };
  if (ranks.size() < 2) return std::nullopt;
  const auto first = reuse(ranks.front());
  for (std::size_t i = 1; i < ranks.size(); ++i)
    for (const auto& [at, reused] : reuse(ranks[i])) {
      const auto it = first.find(at);
      if (it == first.end() || it->second == reused) continue;
      return RankProblem{
          ranks[i].rank,
          fmt::format("'samples' has step:{} of iteration {} {}, which rank {} {}; the ranks' "
                      "cache decisions disagree (every rank must reuse the same steps, or a "
                      "collective of a step one rank computes waits for one that skipped it)",
                      at.second, at.first, reused ? "reused" : "computed", ranks.front().rank,
                      it->second ? "reused" : "computed")};
    }
  return std::nullopt;
}

std::optional<RankProblem> StepRecordsProblem(const TrialConfig& config,
                                              const std::vector<RankResult>& ranks) {
  const int steps = config.scope == Scope::kForward ? 1 : config.steps;
  std::string unused;
  const auto model = ResolveModel(config.model, config.model_overrides, &unused);
  const int experts = model ? model->experts : 1;
  for (const RankResult& r : ranks) {
    if (r.steps.size() > static_cast<std::size_t>(steps))
      return RankProblem{r.rank, fmt::format("'steps' has {} entries; the trial's iteration has "
                                             "{} denoising step{}",
                                             r.steps.size(), steps, steps == 1 ? "" : "s")};
    for (const StepKernels& step : r.steps) {
      if (step.reused && config.cache.empty())
        return RankProblem{r.rank, fmt::format("'steps[{}].reused' is true; the trial has no "
                                               "cache, so no step reuses one",
                                               step.step)};
      if (step.expert >= experts)
        return RankProblem{
            r.rank,
            fmt::format("'steps[{}].expert' is {}; the model '{}' has {} expert{} "
                        "(0{})",
                        step.step, step.expert, config.model, experts, experts == 1 ? "" : "s",
                        experts == 1 ? "" : fmt::format(" to {}", experts - 1))};
    }
  }
  return std::nullopt;
}

std::optional<RankProblem> LatentShapeProblem(const TrialConfig& config,
                                              const std::vector<RankResult>& ranks) {
  std::string unused;
  const auto model = ResolveModel(config.model, config.model_overrides, &unused);
  if (!model) return std::nullopt;
  const ImageShape image = config.image_shape();
  std::vector<std::int64_t> expected{config.batch, 0};
  if (model->video()) expected.push_back(LatentFrames(*model, image.frames));
  expected.push_back(image.height / model->vae_downsample);
  expected.push_back(image.width / model->vae_downsample);
  for (const RankResult& r : ranks) {
    if (r.latent_shape.empty()) continue;
    std::vector<std::int64_t> got = r.latent_shape;
    if (got.size() == expected.size()) got[1] = 0;  // the channels: not compared
    if (got == expected) continue;
    std::vector<std::string> names{"batch", "channels"};
    if (model->video()) names.push_back("latent frames");
    names.push_back("latent rows");
    names.push_back("latent columns");
    return RankProblem{
        r.rank,
        fmt::format("'latent_shape' is [{}], a different clip from the trial's {} ({}: [{}]); "
                    "ditbench times only the shape its key names",
                    fmt::join(r.latent_shape, ", "),
                    config.resolution_text() +
                        (model->video() ? fmt::format(" x {} frames", image.frames) : ""),
                    fmt::join(names, ", "), [&] {
                      std::vector<std::string> sizes;
                      for (std::size_t i = 0; i < expected.size(); ++i)
                        sizes.push_back(i == 1 ? "*" : std::to_string(expected[i]));
                      return fmt::format("{}", fmt::join(sizes, ", "));
                    }())};
  }
  return std::nullopt;
}

StepReuse SummarizeStepReuse(const std::vector<Sample>& samples) {
  // (iteration, step) -> the slowest rank's time and whether the step reused.
  std::map<std::pair<int, int>, std::pair<double, bool>> steps;
  for (const Sample& s : samples) {
    if (s.warmup) continue;
    const auto step = WholeStep(s.stage);
    if (!step) continue;
    auto [it, inserted] = steps.try_emplace({s.iteration, *step}, s.ms, s.reused);
    if (!inserted) {
      it->second.first = std::max(it->second.first, s.ms);
      it->second.second = it->second.second || s.reused;
    }
  }
  StepReuse out;
  std::vector<double> computed, reused;
  std::set<int> iterations;
  for (const auto& [at, step] : steps) {
    iterations.insert(at.first);
    (step.second ? reused : computed).push_back(step.first);
  }
  out.timed_steps = static_cast<int>(steps.size());
  if (steps.empty()) return out;
  out.skipped_steps = double(reused.size()) / double(iterations.size());
  out.hit_rate = double(reused.size()) / double(steps.size());
  if (!computed.empty()) out.computed_step_ms = Summarize(computed).median;
  if (!reused.empty()) out.reused_step_ms = Summarize(reused).median;
  return out;
}

namespace {

// energy_j, joules_per_image and energy_note of `m` (m.iterations set): every rank's energy over
// its timed window, summed and divided by the timed iterations, when every rank has one.
void AddEnergy(const TrialConfig& config, const std::vector<RankResult>& ranks,
               TrialMetrics& m) {
  double joules = 0;
  const RankResult* lacking = nullptr;
  bool any = false;
  for (const RankResult& r : ranks) {
    if (r.energy) {
      joules += r.energy->joules;
      any = true;
    } else if (!lacking || (lacking->energy_unavailable.empty() && !r.energy_unavailable.empty())) {
      lacking = &r;  // the first rank that says why, else the first that lacks it
    }
  }
  if (lacking) {
    if (!lacking->energy_unavailable.empty())
      m.energy_note = fmt::format("rank {}: {}", lacking->rank, lacking->energy_unavailable);
    else if (any)
      m.energy_note = fmt::format("rank {} reported no energy while others did", lacking->rank);
    return;  // no rank with a counter (CPU): nothing to say
  }
  if (ranks.empty() || m.iterations <= 0) return;
  m.energy_j = joules / m.iterations;
  // Images exist where ditbench builds the model; a command's iteration is its own business.
  if (TraitsOf(config.workload).builtin_model && config.images_per_iteration() > 0)
    m.joules_per_image = *m.energy_j / config.images_per_iteration();
}

}  // namespace

namespace {

// The ranks' own numbers, checked (AcceptExtraMetrics) and reduced over ranks: a name of the
// metric table as its row says, any other as rank 0's value (or the first rank's that has it).
void AddExtraMetrics(const std::vector<RankResult>& ranks, TrialMetrics& m) {
  std::map<std::string, std::vector<double>> by_name;  // in rank order
  std::map<std::string, MetricDeclaration> declared;
  for (const RankResult& r : ranks) {
    for (const auto& [name, value] : r.metrics) by_name[name].push_back(value);
    for (const auto& [name, d] : r.metric_declarations) declared.emplace(name, d);
  }
  std::map<std::string, double> values;
  for (const auto& [name, series] : by_name) {
    const MetricInfo* info = FindMetric(name);
    values[name] = ReduceOverRanks(info ? info->over_ranks : RankReduction::kRank0, series);
  }
  AcceptedMetrics accepted = AcceptExtraMetrics(values, declared);
  m.extra = std::move(accepted.values);
  m.extra_declared = std::move(accepted.declared);
  for (const std::string& note : accepted.notes)
    m.extra_note += (m.extra_note.empty() ? "" : "; ") + note;
}

// The ranks' clocks (throttled if any rank was; the lowest and highest SM clock), peak memory
// and communication per step (the largest rank's).
void AddResourceMetrics(const std::vector<RankResult>& ranks, TrialMetrics& m) {
  for (const RankResult& r : ranks) {
    if (r.clocks.is_object() && r.clocks.value("available", false)) {
      m.throttled = m.throttled.value_or(false) || r.clocks.value("throttled", false);
      const double lo = r.clocks.value("sm_mhz_min", 0.0), hi = r.clocks.value("sm_mhz_max", 0.0);
      m.sm_clock_min_mhz = m.sm_clock_min_mhz ? std::min(*m.sm_clock_min_mhz, lo) : lo;
      m.sm_clock_max_mhz = std::max(m.sm_clock_max_mhz.value_or(0), hi);
    }
    if (r.peak_mem_mb) m.peak_mem_mb = std::max(m.peak_mem_mb.value_or(0), *r.peak_mem_mb);
    if (r.peak_reserved_mb)
      m.peak_reserved_mb = std::max(m.peak_reserved_mb.value_or(0), *r.peak_reserved_mb);
    if (r.comm_bytes_per_step)
      m.comm_mb_per_step =
          std::max(m.comm_mb_per_step.value_or(0), *r.comm_bytes_per_step / (1024.0 * 1024.0));
  }
}

// The work the trial did at its latency: FLOPs, TFLOP/s, images and tokens per second and MFU
// on `device_name`, for ditbench's own models (a command's model is only a label).
void AddWorkMetrics(const TrialConfig& config, const StepReuse& reuse,
                    const std::string& device_name, TrialMetrics& m) {
  std::string unused;
  // FLOPs are the built-in worker's: a command's model is only a label.
  if (auto model = TraitsOf(config.workload).builtin_model
                       ? ResolveModel(config.model, config.model_overrides, &unused)
                       : std::nullopt) {
    // The work done: a step `cache` reused counts its first block (fbcache) or nothing
    // (teacache) of the forward's FLOPs (blocks dominate; embedding and output are left out).
    const int steps = config.scope == Scope::kForward ? 1 : config.steps;
    double forwards = steps;
    if (reuse.timed_steps > 0) {
      const int blocks = model->depth + model->single_blocks;
      const double reused_share =
          config.cache.kind == StepCache::Kind::kFbCache && blocks > 0 ? 1.0 / blocks : 0.0;
      forwards = steps - reuse.skipped_steps * (1.0 - reused_share);
    }
    const int samples = RowsPerForward(config, *model);
    m.flops = forwards * ForwardFlops(*model, config.image_shape(), samples);
    // Padded heads (pad_heads) attend too: work done, but not the model's; shown apart.
    if (const double padding = forwards * HeadPaddingFlops(*model, config.image_shape(), samples,
                                                           config.tp, config.ulysses);
        padding > 0)
      m.extra["padding_share"] = padding / (*m.flops + padding);
    const double seconds = m.latency_ms / 1000.0;
    if (seconds > 0) {
      m.tflops = *m.flops / seconds / 1e12;
      m.images_per_s = config.images_per_iteration() / seconds;
      m.tokens_per_s =
          double(ImageTokens(*model, config.image_shape())) * samples * forwards / seconds;
      if (auto peak = DensePeakTflops(device_name, config.precision))
        m.mfu = *m.tflops / (*peak * config.world_size());
    }
  }
}

}  // namespace

TrialMetrics ComputeTrialMetrics(const TrialConfig& config, const std::vector<RankResult>& ranks,
                                 const std::string& device_name, const IntervalSet* busy_s,
                                 const RequestList& requests) {
  std::vector<Sample> all, rank0_samples;
  int warmup_iterations = 0;
  for (const RankResult& r : ranks) {
    all.insert(all.end(), r.samples.begin(), r.samples.end());
    if (r.rank != 0) continue;
    rank0_samples = r.samples;
    for (const Sample& s : r.samples)
      if (s.warmup && s.stage == kIterationStage) ++warmup_iterations;
  }
  const std::map<int, IterationSpread> spread = SlowestPerIteration(all);
  std::vector<double> slowest, skew;
  for (const auto& [iteration, s] : spread) {
    slowest.push_back(s.slowest_ms);
    skew.push_back(s.skew_ms());
  }
  // Rank 0's own series: the same reduction over one rank.
  const std::vector<double> rank0 = SlowestSeries(rank0_samples);

  TrialMetrics m;
  const Summary s = Summarize(slowest);
  m.latency_ms = s.median;
  m.mean_ms = s.mean;
  m.p90_ms = s.p90;
  m.p99_ms = s.p99;
  m.std_ms = s.stddev;
  m.min_ms = s.min;
  m.max_ms = s.max;
  m.cov = s.cov;
  m.ci_low_ms = s.ci_low;
  m.ci_high_ms = s.ci_high;
  m.outliers = s.outliers;
  m.iterations = static_cast<int>(slowest.size());
  m.warmup = warmup_iterations;
  m.rank0_ms = rank0.empty() ? 0 : Summarize(rank0).median;
  m.skew_ms = skew.empty() ? 0 : Summarize(skew).median;
  AddResourceMetrics(ranks, m);

  AddEnergy(config, ranks, m);

  AddExtraMetrics(ranks, m);

  // cache: the step figures from the samples themselves (timed iterations only), in place of
  // any a rank reported under the same names.
  StepReuse reuse;
  if (!config.cache.empty()) {
    reuse = SummarizeStepReuse(all);
    if (reuse.timed_steps > 0) {
      m.extra["skipped_steps"] = reuse.skipped_steps;
      m.extra["cache_hit_rate"] = reuse.hit_rate;
      if (reuse.computed_step_ms) m.extra["computed_step_ms"] = *reuse.computed_step_ms;
      if (reuse.reused_step_ms) m.extra["reused_step_ms"] = *reuse.reused_step_ms;
    }
  }

  // Scope pipeline: the decode's own time (the slowest rank's, as the latency's; ranks past a
  // vae_parallel split time none) and its share of the iteration.
  if (config.scope == Scope::kPipeline) {
    const std::vector<double> decode = SlowestSeries(all, "decode");
    if (!decode.empty()) {
      const double decode_ms = Summarize(decode).median;
      m.extra["decode_ms"] = decode_ms;
      if (m.latency_ms > 0) m.extra["decode_share"] = decode_ms / m.latency_ms;
    }
  }

  AddWorkMetrics(config, reuse, device_name, m);
  // The kind's own figures over these (a served trial's from its requests).
  MetricsOfKind(KindOf(config)).summarize(config, requests, ranks, busy_s, m);
  return m;
}

}  // namespace ditbench

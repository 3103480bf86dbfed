#include "metrics/trial_metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/trial_rows.h"
#include "machine/device_peaks.h"
#include "metrics/busy_requests.h"
#include "metrics/metric_table.h"
#include "metrics/serve_loop.h"
#include "metrics/serving.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/parallel_layout.h"
#include "stats/order_statistics.h"
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
  TrialConfig first = config;  // the iteration the steps record: a served load's first shape
  if (config.serve) {
    try {
      first = ShapeTrial(config, TrialShapes(config).at(0));
    } catch (const std::exception&) {
      return std::nullopt;  // ServedRequestsProblem says why the load cannot be read
    }
  }
  const int steps = first.scope == Scope::kForward ? 1 : first.steps;
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

namespace {

// Two replicas or more: how far the slowest replica's median service time (end - start) is
// from the fastest's (`replica_spread`, 1 when they are alike), and, past kFallsBehind, which
// replica fell behind, said in the trial's note: a replica is never hidden in the pool.
void AddReplicaSpread(const std::vector<RequestRecord>& records, TrialMetrics& m) {
  constexpr double kFallsBehind = 1.5;
  std::map<int, std::vector<double>> service;
  for (const RequestRecord& q : records) service[q.replica].push_back(q.end_ms - q.start_ms);
  if (service.size() < 2) return;
  std::map<int, double> median;
  for (auto& [replica, ms] : service) {
    std::sort(ms.begin(), ms.end());
    median[replica] = Quantile(ms, 0.5);
  }
  const auto [fastest, slowest] =
      std::minmax_element(median.begin(), median.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  if (fastest->second <= 0) return;
  const double spread = slowest->second / fastest->second;
  m.extra["replica_spread"] = spread;
  if (spread > kFallsBehind)
    m.extra_note += fmt::format(
        "{}serve: replica {} fell behind: median service {:.1f} ms over {} requests, against "
        "{:.1f} ms on replica {}",
        m.extra_note.empty() ? "" : "; ", slowest->first, slowest->second,
        service.at(slowest->first).size(), fastest->second, fastest->first);
}

// A mix of request shapes: each shape's count, p50 and p95 latency and SLO attainment, said in
// the trial's note ("serve: by shape: 256x256, 4 steps: 61 requests, p50 212 ms, p95 398 ms,
// SLO 100%; ..."), so that a layout that serves small requests fast and large ones late shows.
void AddShapeFigures(const TrialConfig& config, const std::vector<RequestRecord>& records,
                     TrialMetrics& m) {
  std::vector<RequestShape> shapes;
  try {
    shapes = TrialShapes(config);
  } catch (const std::exception&) {
    return;  // ServedRequestsProblem refused the trial's requests already
  }
  if (shapes.size() < 2) return;
  std::map<int, std::vector<RequestRecord>> by_shape;
  for (const RequestRecord& q : records) by_shape[q.shape].push_back(q);
  std::vector<std::string> parts;
  for (const auto& [shape, served] : by_shape) {
    if (shape < 0 || shape >= static_cast<int>(shapes.size())) continue;
    const ServingSummary s = SummarizeServing(served, config.world_size(), config.serve->slo_scale);
    parts.push_back(fmt::format(
        "{}: {} requests, p50 {:.0f} ms, p95 {}, SLO {:.0f}%", RequestShapeText(shapes[shape]),
        s.requests, s.p50_ms.estimate,
        s.p95_ms.bounded ? fmt::format("{:.0f} ms", s.p95_ms.estimate) : std::string("unbounded"),
        100 * s.slo_attainment));
  }
  m.extra_note += fmt::format("{}serve: by shape: {}", m.extra_note.empty() ? "" : "; ",
                              fmt::join(parts, "; "));
}

// A serving trial's figures (metrics/serving.h) from its replicas' leaders' requests past the
// warm-up ones: the latency's interval from order statistics, the tail percentiles a count of
// requests bounds, queue wait, throughput (per GPU over the trial's ranks), SLO attainment and
// goodput; with `busy_s`, the requests a busy stretch touched (metrics/busy_requests.h).
// Throughput replaces images_per_s; TFLOPS and MFU, which would count waits as work, are left
// unset.
void AddServingMetrics(const TrialConfig& config, const std::vector<RankResult>& ranks,
                       const IntervalSet* busy_s, TrialMetrics& m) {
  std::vector<RequestRecord> records;
  std::vector<double> isolated;
  int unplaced = -1;  // a leader that did not say when its load started
  for (const RankResult& r : ranks) {
    std::vector<RequestRecord> served = r.requests;
    if (busy_s && !served.empty() && !r.serve_start_monotonic_s && unplaced < 0) unplaced = r.rank;
    if (busy_s && r.serve_start_monotonic_s)
      MarkBusyRequests(*busy_s, *r.serve_start_monotonic_s, served);
    for (const RequestRecord& q : served) {
      if (q.index >= config.serve->warmup_requests) records.push_back(q);
      isolated.push_back(q.isolated_ms);
    }
  }
  if (records.empty()) return;
  const ServingSummary s = SummarizeServing(records, config.world_size(), config.serve->slo_scale);
  // The latency's figures are the requests' (end - arrival), never samples claimed beside them
  // (ServedRequestsProblem holds a leader's samples to its requests).
  std::vector<double> latencies;
  for (const RequestRecord& q : records) latencies.push_back(q.end_ms - q.arrival_ms);
  const Summary latency = Summarize(latencies);
  m.latency_ms = s.p50_ms.estimate;
  m.mean_ms = s.mean_latency_ms;
  m.std_ms = latency.stddev;
  m.min_ms = latency.min;
  m.max_ms = latency.max;
  m.cov = latency.cov;
  m.outliers = latency.outliers;
  m.iterations = s.requests;
  m.ci_low_ms = s.p50_ms.bounded ? s.p50_ms.low : latency.ci_low;
  m.ci_high_ms = s.p50_ms.bounded ? s.p50_ms.high : latency.ci_high;
  m.p90_ms = s.p90_ms.estimate;
  m.p99_ms = s.p99_ms.estimate;
  // The stored p95 (what compare and the report read) by the one rule of every percentile
  // (PercentileBounded); p90 and p99 are withheld where they are read (`query`).
  const auto requests = static_cast<std::size_t>(s.requests);
  if (PercentileBounded(requests, 0.95)) m.extra["p95_ms"] = s.p95_ms.estimate;
  std::vector<std::string> unbounded;
  for (auto [name, p] : {std::pair{"p90", 0.90}, std::pair{"p95", 0.95}, std::pair{"p99", 0.99}})
    if (!PercentileBounded(requests, p)) unbounded.push_back(name);
  if (!unbounded.empty())
    m.extra_note += fmt::format(
        "{}serve: {} of the latency not bounded by {} requests (a 95% "
        "interval of p99 needs {}, of p95 {})",
        m.extra_note.empty() ? "" : "; ", fmt::join(unbounded, ", "), s.requests,
        MinSamplesToBound(0.99), MinSamplesToBound(0.95));
  std::sort(isolated.begin(), isolated.end());
  m.extra["isolated_ms"] = Quantile(isolated, 0.5);
  m.extra["queue_ms"] = s.mean_queue_ms;
  m.extra["requests_per_s"] = s.throughput_per_s;
  m.extra["requests_per_s_per_gpu"] = s.throughput_per_gpu_per_s;
  m.extra["slo_attainment"] = s.slo_attainment;
  m.extra["goodput_per_s"] = s.goodput_per_s;
  if (unplaced >= 0) {
    m.extra_note += fmt::format(
        "{}serve: requests not marked busy: rank {} did not say when its load started "
        "(serve_start_monotonic_s)",
        m.extra_note.empty() ? "" : "; ", unplaced);
  } else if (busy_s) {
    m.extra["busy_requests"] = s.busy_requests;
  }
  AddReplicaSpread(records, m);
  AddShapeFigures(config, records, m);
  // The decode's share of a request's service, not of its latency (which counts its wait).
  if (const auto decode = m.extra.find("decode_ms"); decode != m.extra.end()) {
    std::vector<double> service;
    for (const RequestRecord& q : records) service.push_back(q.end_ms - q.start_ms);
    std::sort(service.begin(), service.end());
    const double median = Quantile(service, 0.5);
    if (median > 0) m.extra["decode_share"] = decode->second / median;
  }
  if (config.serve->stop_percentile > 0) {
    std::size_t offered = 0;
    try {
      offered = TrialRequests(config).size();
    } catch (const std::exception&) {
    }
    const int served = s.requests + config.serve->warmup_requests;
    if (offered > static_cast<std::size_t>(served))
      m.extra_note +=
          fmt::format("{}serve: stopped early after {} of {} requests, p{:g} bounded within {:g}%",
                      m.extra_note.empty() ? "" : "; ", served, offered,
                      config.serve->stop_percentile, 100 * config.serve->stop_within);
  }
  m.images_per_s = s.throughput_per_s * config.batch;
  m.tflops.reset();
  m.mfu.reset();
  m.tokens_per_s.reset();
}

}  // namespace

std::optional<RankProblem> LatentShapeProblem(const TrialConfig& trial,
                                              const std::vector<RankResult>& ranks) {
  std::string unused;
  const auto model = ResolveModel(trial.model, trial.model_overrides, &unused);
  if (!model) return std::nullopt;
  // A serving trial's ranks record its first request shape (ServedRequestsProblem reads the
  // trace and says so when it cannot be read).
  TrialConfig config = trial;
  if (trial.serve) {
    try {
      config = ShapeTrial(trial, TrialShapes(trial).at(0));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
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
                                 const std::string& device_name, const IntervalSet* busy_s) {
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
  if (config.serve) AddServingMetrics(config, ranks, busy_s, m);
  return m;
}

}  // namespace ditbench

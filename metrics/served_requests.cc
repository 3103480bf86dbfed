#include "metrics/served_requests.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "metrics/busy_requests.h"
#include "metrics/serve_loop.h"
#include "metrics/serving.h"
#include "stats/order_statistics.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

// How far two times of one request (ms) may differ and still be the same: the rank file's
// numbers are written at full precision, so this only absorbs a program's rounding.
bool SameMs(double a, double b) { return std::abs(a - b) <= 1e-3 + 1e-9 * std::abs(b); }

// Why one request of a leader is not one the load made, or nothing. `served_by` tells which
// rank served each request so far, and gets this one.
std::optional<std::string> RequestProblem(const TrialConfig& config,
                                          const std::vector<Request>& expected,
                                          const RankCoordinates& at, int rank,
                                          const RequestRecord& q, std::vector<int>& served_by) {
  const bool open_loop = config.serve->concurrency == 0;
  const std::string which = fmt::format("'requests' has request {}", q.index);
  if (q.index >= static_cast<int>(expected.size()))
    return fmt::format("{}; the load has {} requests", which, expected.size());
  if (served_by[q.index] >= 0)
    return fmt::format("{}, which rank {} served too; a request is served once", which,
                       served_by[q.index]);
  served_by[q.index] = rank;
  if (q.replica != at.dp)
    return fmt::format("{} on replica {}; this rank leads replica {}", which, q.replica, at.dp);
  if (q.shape != expected[q.index].shape)
    return fmt::format("{} of shape {}; the load's asks for shape {}", which, q.shape,
                       expected[q.index].shape);
  if (open_loop && std::abs(q.arrival_ms - expected[q.index].arrival_s * 1000) > 1e-3)
    return fmt::format("{} arriving at {} ms; the load's arrives at {} ms", which, q.arrival_ms,
                       expected[q.index].arrival_s * 1000);
  if (q.start_ms < q.arrival_ms - 1e-3 || q.end_ms < q.start_ms)
    return fmt::format(
        "{} arriving at {} ms, starting at {} ms and ending at {} ms; expected "
        "arrival <= start <= end",
        which, q.arrival_ms, q.start_ms, q.end_ms);
  // The load starts after the trial did, and every rank is killed at its timeout.
  if (q.end_ms > config.timeout_s * 1000)
    return fmt::format(
        "{} ending at {} ms, after the trial's timeout of {:g} s; a request ends "
        "within the trial",
        which, q.end_ms, config.timeout_s);
  return std::nullopt;
}

// The first contradiction between a leader's requests and its own samples of them, or
// nothing: each request has one latency sample (stage "iteration", its index the iteration),
// flagged warm-up as the load's first `warmup` requests are; that latency, and the "queue" and
// "service" samples where the rank wrote them, are what the request's times say; and the rank
// has no latency of a request it did not serve.
std::optional<std::string> SamplesProblem(const RankResult& r, int warmup) {
  std::map<std::pair<std::string, int>, const Sample*> samples;
  std::set<int> timed;
  for (const Sample& s : r.samples) {
    if (s.stage != kIterationStage && s.stage != "queue" && s.stage != "service") continue;
    samples.try_emplace({s.stage, s.iteration}, &s);
    if (s.stage == kIterationStage) timed.insert(s.iteration);
  }
  std::set<int> served;
  for (const RequestRecord& q : r.requests) {
    served.insert(q.index);
    if (q.failed) continue;  // answered with an error: no latency (RecordServed)
    const auto latency = samples.find({kIterationStage, q.index});
    if (latency == samples.end())
      return fmt::format(
          "request {}: 'samples' has no latency of it (stage '{}', iteration {}); "
          "every request served is timed",
          q.index, kIterationStage, q.index);
    const bool warm = q.index < warmup;
    if (latency->second->warmup != warm)
      return fmt::format(
          "request {}: 'samples' flags its latency warmup {}; the load's first {} "
          "requests are the warm-up ones",
          q.index, latency->second->warmup, warmup);
    for (auto [stage, value, field] :
         {std::tuple{kIterationStage, q.end_ms - q.arrival_ms, "end_ms - arrival_ms"},
          std::tuple{"queue", q.start_ms - q.arrival_ms, "start_ms - arrival_ms"},
          std::tuple{"service", q.end_ms - q.start_ms, "end_ms - start_ms"}}) {
      const auto it = samples.find({stage, q.index});
      if (it != samples.end() && !SameMs(it->second->ms, value))
        return fmt::format(
            "request {}: 'samples' gives its '{}' as {} ms; its 'requests' times "
            "give {} ms ({})",
            q.index, stage, it->second->ms, value, field);
    }
  }
  for (const int iteration : timed)
    if (!served.contains(iteration))
      return fmt::format(
          "'samples' has a latency of request {} (stage '{}'), which its "
          "'requests' do not hold",
          iteration, kIterationStage);
  return std::nullopt;
}

}  // namespace

std::optional<RankProblem> ServedRequestsProblem(const TrialConfig& config, const RequestList& load,
                                                 const std::vector<RankResult>& ranks) {
  const std::vector<Request>& expected = load.requests;
  const int warmup = config.serve->warmup_requests;
  std::vector<int> served_by(expected.size(), -1);
  for (const RankResult& r : ranks) {
    if (r.requests.empty()) continue;
    const RankCoordinates at = CoordinatesOf(config.degrees(), r.rank);
    if (!LeadsReplica(at))
      return RankProblem{r.rank,
                         "'requests' on a rank that leads no replica (only a replica's "
                         "rank of every coordinate but dp 0 records its requests)"};
    for (const RequestRecord& q : r.requests)
      if (auto problem = RequestProblem(config, expected, at, r.rank, q, served_by))
        return RankProblem{r.rank, std::move(*problem)};
    if (auto problem = SamplesProblem(r, warmup)) return RankProblem{r.rank, std::move(*problem)};
  }
  // Early stopping ends the load after its first K requests, every one of them served.
  const bool stops_early = config.serve->stop_percentile > 0;
  std::size_t served = 0;
  while (served < served_by.size() && served_by[served] >= 0) ++served;
  for (std::size_t i = served; i < served_by.size(); ++i)
    if (served_by[i] >= 0 || !stops_early)
      return RankProblem{0, fmt::format("'requests': request {} of {} was served by no replica{}",
                                        served_by[i] >= 0 ? served : i, expected.size(),
                                        stops_early ? " before a later one was (an early stop "
                                                      "serves the load's first requests)"
                                                    : "")};
  // Every request served is a prefix of the load's: a timed one is one past the warm-up ones.
  if (served <= static_cast<std::size_t>(warmup))
    return RankProblem{
        0, fmt::format("'requests': no timed request: all {} requests were "
                       "warm-up (warmup_requests: {}{})",
                       served, warmup,
                       stops_early ? fmt::format("; the load has {}", expected.size()) : "")};
  return std::nullopt;
}

namespace {

// Two replicas or more: how far the slowest replica's median service time (end - start) is
// from the fastest's (`replica_spread`, 1 when they are alike), and, past kFallsBehind, which
// replica fell behind, said in the trial's note: a replica is never hidden in the pool.
void AddReplicaSpread(const std::vector<RequestRecord>& records, TrialMetrics& m) {
  constexpr double kFallsBehind = 1.5;
  std::map<int, std::vector<double>> service;
  for (const RequestRecord& q : records)
    if (!q.failed) service[q.replica].push_back(q.end_ms - q.start_ms);
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
void AddShapeFigures(const TrialConfig& config, const std::vector<RequestShape>& shapes,
                     const std::vector<RequestRecord>& records, TrialMetrics& m) {
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

}  // namespace

void AddServedMetrics(const TrialConfig& config, const RequestList& load,
                      const std::vector<RankResult>& ranks, const IntervalSet* busy_s,
                      TrialMetrics& m) {
  if (load.empty())
    throw std::invalid_argument("a served trial's metrics need its requests (its trial file's)");
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
  // A request answered with an error (an engine's) is counted, and misses its SLO; its time is
  // no latency. An engine trial states its error rate, 0 included.
  if (s.failed_requests > 0 || config.workload == Workload::kEngine) {
    m.extra["failed_requests"] = s.failed_requests;
    m.extra["error_rate"] = static_cast<double>(s.failed_requests) / s.requests;
  }
  std::vector<double> latencies;
  for (const RequestRecord& q : records)
    if (!q.failed) latencies.push_back(q.end_ms - q.arrival_ms);
  if (latencies.empty()) return;
  const Summary latency = Summarize(latencies);
  m.latency_ms = s.p50_ms.estimate;
  m.mean_ms = s.mean_latency_ms;
  m.std_ms = latency.stddev;
  m.min_ms = latency.min;
  m.max_ms = latency.max;
  m.cov = latency.cov;
  m.outliers = latency.outliers;
  m.iterations = static_cast<int>(latencies.size());
  m.ci_low_ms = s.p50_ms.bounded ? s.p50_ms.low : latency.ci_low;
  m.ci_high_ms = s.p50_ms.bounded ? s.p50_ms.high : latency.ci_high;
  m.p90_ms = s.p90_ms.estimate;
  m.p99_ms = s.p99_ms.estimate;
  // The stored p95 (what compare and the report read) by the one rule of every percentile
  // (PercentileBounded); p90 and p99 are withheld where they are read (`query`).
  const std::size_t requests = latencies.size();
  if (PercentileBounded(requests, 0.95)) m.extra["p95_ms"] = s.p95_ms.estimate;
  std::vector<std::string> unbounded;
  for (auto [name, p] : {std::pair{"p90", 0.90}, std::pair{"p95", 0.95}, std::pair{"p99", 0.99}})
    if (!PercentileBounded(requests, p)) unbounded.push_back(name);
  if (!unbounded.empty())
    m.extra_note += fmt::format(
        "{}serve: {} of the latency not bounded by {} requests (a 95% "
        "interval of p99 needs {}, of p95 {})",
        m.extra_note.empty() ? "" : "; ", fmt::join(unbounded, ", "), requests,
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
  AddShapeFigures(config, load.shapes, records, m);
  // The decode's share of a request's service, not of its latency (which counts its wait).
  if (const auto decode = m.extra.find("decode_ms"); decode != m.extra.end()) {
    std::vector<double> service;
    for (const RequestRecord& q : records) service.push_back(q.end_ms - q.start_ms);
    std::sort(service.begin(), service.end());
    const double median = Quantile(service, 0.5);
    if (median > 0) m.extra["decode_share"] = decode->second / median;
  }
  if (config.serve->stop_percentile > 0) {
    const std::size_t offered = load.requests.size();
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

}  // namespace ditbench

#include "metrics/served_requests.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "metrics/serve_loop.h"

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

std::optional<RankProblem> ServedRequestsProblem(const TrialConfig& config,
                                                 const std::vector<RankResult>& ranks) {
  std::vector<Request> expected;
  try {
    expected = TrialRequests(config);
  } catch (const std::exception& e) {
    return RankProblem{0, fmt::format("serve: {}", e.what())};
  }
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

}  // namespace ditbench

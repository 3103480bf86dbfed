#include "metrics/serve_loop.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "metrics/serving.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

// One request's host start and end: the end after the device finished it.
struct Span {
  double start_ms = 0, end_ms = 0;
};

Span RunOne(IterationClock& device, HostClock& host, MarkedStages& stages, const ServeWork& serve,
            int shape) {
  Span span;
  span.start_ms = host.NowMs();
  stages.StartIteration();
  serve(shape, stages);
  stages.FinishIteration();
  device.Synchronize();
  span.end_ms = host.NowMs();
  return span;
}

}  // namespace

double SteadyHostClock::NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SteadyHostClock::SleepUntilMs(double ms) {
  const auto at = std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double, std::milli>(ms)));
  std::this_thread::sleep_until(at);
}

ServedRequests ServeRequests(const ServeRankOptions& options, RankGroup& world,
                             IterationClock& device, HostClock& host, ServeQueue& queue,
                             const ServeWork& serve) {
  ServedRequests served;
  MarkedStages stages(device);
  // 1. Each replica alone in turn: every shape's isolated latency.
  served.isolated_ms.assign(static_cast<std::size_t>(std::max(1, options.shapes)), 0.0);
  if (!options.isolated_ms.empty()) served.isolated_ms = options.isolated_ms;
  for (int replica = 0; options.isolated_ms.empty() && replica < options.load.replicas; ++replica) {
    world.Barrier();
    if (replica != options.replica) continue;
    for (int shape = 0; shape < static_cast<int>(served.isolated_ms.size()); ++shape) {
      std::vector<double> alone;
      for (int i = 0; i < options.isolated_runs; ++i) {
        const Span span = RunOne(device, host, stages, serve, shape);
        alone.push_back(span.end_ms - span.start_ms);
      }
      std::sort(alone.begin(), alone.end());
      if (!alone.empty()) served.isolated_ms[shape] = Quantile(alone, 0.5);
    }
  }

  // 2. The load's start.
  world.Barrier();
  const double start_ms = host.NowMs();
  served.start_ms = start_ms;
  const int count = static_cast<int>(options.requests.size());
  const int concurrency = options.load.concurrency;

  // 3. Requests, first come first served, until the queue is empty (or stopped early).
  const bool stops_early = options.leader && options.load.stop_percentile > 0;
  std::vector<double> timed_ms;  // every replica's published latencies (early stopping)
  for (int turn = 0;; ++turn) {
    int index = -1;
    if (options.leader) {
      index = queue.Take();
      if (index >= count) index = -1;
      queue.Tell(options.replica, turn, index);
    } else {
      index = queue.Hear(options.replica, turn);
    }
    if (index < 0) break;
    const Request& request = options.requests[index];
    // Closed loop: request k is issued when request k - c has completed.
    const double arrival_ms = concurrency == 0      ? request.arrival_s * 1000
                              : index < concurrency ? 0
                                                    : queue.CompletedAt(index - concurrency);
    host.SleepUntilMs(start_ms + arrival_ms);
    const Span span = RunOne(device, host, stages, serve, request.shape);
    stages.AppendSamples(world.rank(), index, index < options.load.warmup_requests,
                         served.stage_samples);
    RequestRecord record;
    record.index = index;
    record.shape = request.shape;
    record.replica = options.replica;
    record.arrival_ms = arrival_ms;
    record.start_ms = span.start_ms - start_ms;
    record.end_ms = span.end_ms - start_ms;
    record.isolated_ms = served.isolated_ms.at(static_cast<std::size_t>(request.shape));
    if (concurrency > 0 && options.leader) queue.Complete(record.end_ms);
    served.records.push_back(record);
    if (stops_early) {
      if (index >= options.load.warmup_requests) queue.Publish(record.end_ms - record.arrival_ms);
      const std::vector<double> fresh = queue.Latencies(static_cast<int>(timed_ms.size()));
      timed_ms.insert(timed_ms.end(), fresh.begin(), fresh.end());
      if (!served.stopped_early &&
          PercentileBoundWithin(timed_ms, options.load.stop_percentile, options.load.stop_within) &&
          !LatencyStillGrows(timed_ms)) {
        queue.Stop();
        served.stopped_early = true;
      }
    }
  }
  // 4. Every replica done.
  world.Barrier();
  return served;
}

void RecordServed(const ServedRequests& served, int warmup_requests, bool leader,
                  RankResult& result) {
  for (const RequestRecord& r : served.records) {
    if (r.failed) continue;  // its time is no latency; the record says it failed
    const bool warmup = r.index < warmup_requests;
    result.samples.push_back(
        {result.rank, r.index, kIterationStage, r.end_ms - r.arrival_ms, warmup});
    result.samples.push_back({result.rank, r.index, "queue", r.start_ms - r.arrival_ms, warmup});
    result.samples.push_back({result.rank, r.index, "service", r.end_ms - r.start_ms, warmup});
  }
  result.samples.insert(result.samples.end(), served.stage_samples.begin(),
                        served.stage_samples.end());
  if (leader) {
    result.requests = served.records;
    result.serve_start_monotonic_s = served.start_ms / 1000;
  }
  result.stop_reason = "served";
}

}  // namespace ditbench

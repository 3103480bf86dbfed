// Serving under load (issue 39): what a trial's requests add up to. Each request is recorded
// with when it arrived, started and ended and its isolated latency (the same shape alone on
// an idle replica); SummarizeServing derives latency percentiles with distribution-free
// confidence intervals, queue wait, throughput, SLO attainment and goodput. SimulateQueue
// plays arrivals through a FIFO queue of identical servers, for tests and for `plan`'s
// estimates. Pure functions, no I/O, torch-free.
//
// Definitions (pinned by tests/metrics/serving_test.cc):
//  * latency = end - arrival; queue wait = start - arrival (both ms).
//  * percentiles: R type 7 with the 95% order-statistic interval of stats/order_statistics.h;
//    a tail percentile that the count of requests cannot bound (p99 below 368 requests) has
//    bounded = false and an infinite upper bound.
//  * window: the last end minus the first arrival, unless the caller gives one (a load's
//    duration); throughput = completed requests / window; per GPU divides by every GPU of
//    every replica.
//  * SLO: a request meets it when latency <= slo_scale x isolated_ms; attainment is the share
//    of requests that meet it, goodput the count that meet it / window.
#pragma once

#include <optional>
#include <vector>

#include "contract/measurement_records.h"
#include "experiments/serve_load.h"
#include "stats/order_statistics.h"

namespace ditbench {

struct ServingSummary {
  int requests = 0;
  int busy_requests = 0;    // of them, served while another process used the GPUs
  int failed_requests = 0;  // of them, answered with an error (RequestRecord::failed)
  QuantileEstimate p50_ms, p90_ms, p95_ms, p99_ms;  // latency
  double mean_latency_ms = 0;
  double mean_queue_ms = 0;
  QuantileEstimate p95_queue_ms;
  double window_s = 0;
  double throughput_per_s = 0, throughput_per_gpu_per_s = 0;
  double slo_attainment = 0;  // 0 to 1
  double goodput_per_s = 0;
};

// A failed request (RequestRecord::failed) counts in `requests` and `failed_requests` and
// misses its SLO; the latency, queue and throughput figures are the others' (zeros when none).
// REQUIRES: `records` non-empty (warm-up requests already left out), every isolated_ms > 0,
// gpus >= 1 (all replicas' GPUs), slo_scale > 0, window_s (when given) > 0.
ServingSummary SummarizeServing(const std::vector<RequestRecord>& records, int gpus,
                                double slo_scale, std::optional<double> window_s = std::nullopt);

// Early stopping's test (ServeLoad::stop_percentile): whether `latencies_ms` (any order)
// bound their `percentile`th percentile (0 < percentile < 100) within `within` of it: its 95%
// order-statistic interval exists and high - low <= within x estimate.
bool PercentileBoundWithin(std::vector<double> latencies_ms, double percentile, double within);

// Whether latencies in the order they were served still grow, as a queue that falls behind
// makes them: the later half's median above 1.5 x the earlier half's. Early stopping waits
// while they do, since a percentile of a growing queue describes only how long the load ran.
bool LatencyStillGrows(const std::vector<double>& latencies_in_order_ms);

// `arrivals` served first come, first served by `servers` identical servers: each request
// starts at max(its arrival, the earliest time a server is free), on that server (the lowest
// numbered of those free first), and takes service_ms[i]; isolated_ms is service_ms[i].
// Records in arrival order. O(n log servers).
// REQUIRES: arrivals in non-decreasing arrival_s (as GenerateArrivals and ReadArrivalTrace
// give them), service_ms.size() == arrivals.size(), servers >= 1.
// concurrency > 0: a closed loop of that many requests in flight, as the serving loop runs it
// (metrics/serve_loop.h): request k arrives when the (k - concurrency)th completion happens
// (arrival_s is ignored).
std::vector<RequestRecord> SimulateQueue(const std::vector<Request>& arrivals,
                                         const std::vector<double>& service_ms, int servers,
                                         int concurrency = 0);

}  // namespace ditbench

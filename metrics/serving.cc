#include "metrics/serving.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "stats/stats.h"

namespace ditbench {
namespace {

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

}  // namespace

ServingSummary SummarizeServing(const std::vector<RequestRecord>& records, int gpus,
                                double slo_scale, std::optional<double> window_s) {
  ServingSummary summary;
  if (records.empty()) return summary;  // outside the contract; all zeros rather than UB
  std::vector<double> latencies, waits;
  double first_arrival_ms = records.front().arrival_ms, last_end_ms = records.front().end_ms;
  int met = 0;
  for (const RequestRecord& record : records) {
    first_arrival_ms = std::min(first_arrival_ms, record.arrival_ms);
    last_end_ms = std::max(last_end_ms, record.end_ms);
    summary.busy_requests += record.busy ? 1 : 0;
    // A failed request misses its SLO; its time says nothing of serving.
    if (record.failed) {
      ++summary.failed_requests;
      continue;
    }
    const double latency = record.end_ms - record.arrival_ms;
    latencies.push_back(latency);
    waits.push_back(record.start_ms - record.arrival_ms);
    met += latency <= slo_scale * record.isolated_ms ? 1 : 0;
  }
  summary.requests = static_cast<int>(records.size());
  summary.window_s = window_s.value_or((last_end_ms - first_arrival_ms) / 1000);
  summary.slo_attainment = static_cast<double>(met) / summary.requests;
  summary.goodput_per_s = met / summary.window_s;
  if (latencies.empty()) return summary;  // every request failed
  summary.mean_latency_ms = Mean(latencies);
  summary.mean_queue_ms = Mean(waits);
  std::sort(latencies.begin(), latencies.end());
  std::sort(waits.begin(), waits.end());
  summary.p50_ms = QuantileInterval(latencies, 0.50);
  summary.p90_ms = QuantileInterval(latencies, 0.90);
  summary.p95_ms = QuantileInterval(latencies, 0.95);
  summary.p99_ms = QuantileInterval(latencies, 0.99);
  summary.p95_queue_ms = QuantileInterval(waits, 0.95);

  summary.throughput_per_s = static_cast<double>(latencies.size()) / summary.window_s;
  summary.throughput_per_gpu_per_s = summary.throughput_per_s / gpus;
  return summary;
}

std::vector<RequestRecord> SimulateQueue(const std::vector<Request>& arrivals,
                                         const std::vector<double>& service_ms, int servers,
                                         int concurrency) {
  // (time the server is next free, server), earliest first, then the lowest server.
  using FreeServer = std::pair<double, int>;
  std::priority_queue<FreeServer, std::vector<FreeServer>, std::greater<>> free_servers;
  for (int server = 0; server < servers; ++server) free_servers.push({0.0, server});
  std::vector<RequestRecord> records;
  records.reserve(arrivals.size());
  std::priority_queue<double, std::vector<double>, std::greater<>> completions;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const auto [free_ms, server] = free_servers.top();
    free_servers.pop();
    RequestRecord record;
    record.index = arrivals[i].index;
    record.shape = arrivals[i].shape;
    record.replica = server;
    // Closed loop: request i waits for the (i - concurrency)th completion, the earliest not
    // yet waited for (a request simulated later starts after its arrival, so ends later).
    if (concurrency == 0) {
      record.arrival_ms = arrivals[i].arrival_s * 1000;
    } else if (static_cast<int>(i) < concurrency) {
      record.arrival_ms = 0;
    } else {
      record.arrival_ms = completions.top();
      completions.pop();
    }
    record.start_ms = std::max(record.arrival_ms, free_ms);
    record.end_ms = record.start_ms + service_ms[i];
    record.isolated_ms = service_ms[i];
    free_servers.push({record.end_ms, server});
    if (concurrency > 0) completions.push(record.end_ms);
    records.push_back(record);
  }
  return records;
}

bool PercentileBoundWithin(std::vector<double> latencies_ms, double percentile, double within) {
  const double p = percentile / 100;
  if (latencies_ms.size() < MinSamplesToBound(p)) return false;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const QuantileEstimate q = QuantileInterval(latencies_ms, p);
  return q.bounded && q.high - q.low <= within * q.estimate;
}

bool LatencyStillGrows(const std::vector<double>& latencies_in_order_ms) {
  constexpr double kGrowth = 1.5;
  const std::size_t half = latencies_in_order_ms.size() / 2;
  if (half == 0) return false;
  std::vector<double> earlier(latencies_in_order_ms.begin(), latencies_in_order_ms.begin() + half);
  std::vector<double> later(latencies_in_order_ms.end() - half, latencies_in_order_ms.end());
  std::sort(earlier.begin(), earlier.end());
  std::sort(later.begin(), later.end());
  return Quantile(later, 0.5) > kGrowth * Quantile(earlier, 0.5);
}

}  // namespace ditbench

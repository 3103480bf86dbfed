// The serving load of an engine trial (runner/engine_session.h, ServeEngineLoad).
#include "runner/engine_session.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "experiments/engine_request.h"
#include "metrics/serve_loop.h"
#include "metrics/serve_slots.h"
#include "runner/engine_server.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

using Clock = std::chrono::steady_clock;

// The most requests an open loop's client has in flight at once (its slots): a request that
// arrives while every slot waits for an answer is sent when one is free, its wait recorded as
// its queue time.
constexpr int kEngineClientSlots = 64;

// A load's failed requests: how many of each kind, and the first one's line.
struct LoadErrors {
  std::map<std::string, int> by_kind;
  std::string first;
  void Add(const RequestFailure& failure) {
    ++by_kind[failure.kind];
    if (first.empty()) first = failure.line;
  }
};

// Throws when the load's timed requests failed beyond engine.max_error_rate (any failure at 0),
// or when the load was cut short (the server gone), naming how many and the first error.
void CheckErrorRate(const EngineSession& s, const ServedRequests& served, const ServeLoad& load,
                    const LoadErrors& errors) {
  if (errors.first.empty()) return;
  int timed = 0, failed = 0;
  for (const RequestRecord& r : served.records)
    if (r.index >= load.warmup_requests) {
      ++timed;
      failed += r.failed ? 1 : 0;
    }
  const double allowed = s.trial.config.engine.max_error_rate;
  const std::size_t offered = s.trial.requests.requests.size();
  const bool cut_short = served.records.size() < offered;
  const double rate = timed > 0 ? static_cast<double>(failed) / timed : 1.0;
  if (!cut_short && allowed > 0 && rate <= allowed) return;
  throw std::runtime_error(fmt::format(
      "{} of {} timed requests failed ({:.1f}%{}){}; the first: {}", failed, timed, 100 * rate,
      allowed > 0 ? fmt::format(", max_error_rate {:g}", allowed) : std::string(),
      cut_short ? fmt::format("; the load stopped after {} of its {} requests",
                              served.records.size(), offered)
                : std::string(),
      errors.first));
}

// Milliseconds `send` took on the host's monotonic clock.
template <typename Send>
double TimedMs(Send&& send) {
  const Clock::time_point start = Clock::now();
  send();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

void ServeEngineLoad(EngineSession& s, EngineServer* server, const RequestList& load,
                     RankResult& result) {
  const TrialConfig& config = s.trial.config;
  std::vector<std::string> bodies;
  for (const RequestShape& shape : load.shapes)
    bodies.push_back(EngineRequestBody(ShapeTrial(config, shape)).dump());
  s.image_body = bodies.at(0);
  int sent = 0;
  for (std::size_t shape = 0; shape < bodies.size(); ++shape)
    for (int i = 0; i < config.engine.warmup_requests; ++i) {
      const double ms = TimedMs([&] {
        Generate(s, s.client, bodies[shape],
                 fmt::format("warm-up request {} (shape {})", ++sent, shape));
      });
      if (!result.metrics.contains("first_request_ms")) result.metrics["first_request_ms"] = ms;
    }
  ServeRankOptions options;
  options.load = TrialServeLoad(config);
  options.requests = load.requests;
  options.shapes = static_cast<int>(bodies.size());
  options.isolated_runs = std::max(1, config.repeats.min);
  for (std::size_t shape = 0; shape < bodies.size(); ++shape) {
    std::vector<double> alone;
    for (int i = 0; i < options.isolated_runs; ++i)
      alone.push_back(TimedMs([&] {
        Generate(s, s.client, bodies[shape],
                 fmt::format("isolated request {} of shape {}", i + 1, shape));
      }));
    std::sort(alone.begin(), alone.end());
    options.isolated_ms.push_back(Quantile(alone, 0.5));
  }
  const int slots = options.load.concurrency > 0
                        ? options.load.concurrency
                        : std::clamp(static_cast<int>(load.requests.size()), 1, kEngineClientSlots);
  std::vector<HttpClient> clients;
  for (int i = 0; i < slots; ++i) clients.emplace_back(s.client.limits());
  std::mutex mutex;  // the image kept, the errors, the server's state
  LoadErrors errors;
  SteadyHostClock host;
  const ServedRequests served = ServeFromSlots(options, slots, host, [&](int slot, int shape) {
    GeneratedImage image;
    const auto failure = TryGenerate(
        s, clients[static_cast<std::size_t>(slot)], bodies[static_cast<std::size_t>(shape)],
        fmt::format("a load request of shape {} (client slot {})", shape, slot), &image);
    const std::lock_guard lock(mutex);
    if (failure) {
      errors.Add(*failure);
      // A server that is gone answers nothing more; errors are tolerated only up to the rate.
      const bool gone = server && server->ExitReason();
      return gone || config.engine.max_error_rate == 0 ? SlotOutcome::kStopLoad
                                                       : SlotOutcome::kFailed;
    }
    // The output compared with the reference trial's: the first shape's, as a `dit` trial's.
    if (shape == 0) s.last_image = std::move(image);
    return SlotOutcome::kServed;
  });
  RecordServed(served, options.load.warmup_requests, /*leader=*/true, result);
  result.environment["engine_client_slots"] = slots;
  if (!errors.by_kind.empty()) result.environment["engine_errors"] = errors.by_kind;
  CheckErrorRate(s, served, options.load, errors);
  SaveOutput(s, result);
}

}  // namespace ditbench

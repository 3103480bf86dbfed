// The loop of a serving trial (`serve`, experiments/serve_load.h) on one rank, torch-free: the
// trial's dp groups are its replicas, each a group of ranks that runs one request at a time
// together; the replicas share one FIFO queue of the load's requests.
//
//   1. The replicas measure each shape's isolated latency in turn (the others wait at a
//      barrier, so that on a shared host nothing else runs): `isolated_runs` requests of every
//      shape each, the median per shape.
//   2. A barrier, then every rank takes its host clock as the load's start.
//   3. Each replica's leader takes the next request from the queue (first come, first served:
//      the replica that is free first takes the oldest request) and tells its other ranks; all
//      wait until the request has arrived (open loop: its generated or traced arrival time;
//      closed loop of concurrency c: request k arrives when the (k - c)th request completes),
//      run it, and wait for the device. Each rank records arrival, start and end as it saw
//      them; the leader's record is the replica's.
//      A load with early stopping (ServeLoad::stop_percentile): each leader publishes every
//      timed request's latency as it ends and reads the others'; once the percentile's
//      interval over all of them is narrow enough, it stops the queue, so that the requests
//      served are the first K of the load (every one taken before the stop is served).
//   4. A barrier once the queue is empty.
//
// Latencies are host times (a request is served when its output is ready, so the end is taken
// after the device synchronized); every rank of a trial on one host reads the same monotonic
// clock. The queue, the clocks and the work are interfaces: the worker plugs in the c10d store,
// device events and the model; tests plug in fakes.
#pragma once

#include <functional>
#include <vector>

#include "contract/measurement_records.h"
#include "contract/worker_contract.h"
#include "experiments/serve_load.h"
#include "metrics/measurement.h"
#include "model_zoo/shapes/parallel_layout.h"

namespace ditbench {

// Whether the rank at `at` leads its replica (its dp group): its coordinate of every other
// degree is 0. The leader takes requests and records them (RankResult::requests).
inline bool LeadsReplica(const RankCoordinates& at) {
  return at.cfg == 0 && at.pipefusion == 0 && at.ring == 0 && at.ulysses == 0;
}

// The replicas' shared queue and the messages within a replica. REQUIRES: safe to call from
// every rank of the trial at once (the worker's is a c10d store).
class ServeQueue {
 public:
  virtual ~ServeQueue() = default;
  // The next request in arrival order, 0, 1, 2, ... over every call of every replica.
  virtual int Take() = 0;
  // A replica's leader tells its other ranks which request its `turn`th service is (-1: none
  // left); Hear blocks until the leader told.
  virtual void Tell(int replica, int turn, int request) = 0;
  virtual int Hear(int replica, int turn) = 0;
  // Closed loop: records one completion at `end_ms` (load time); CompletedAt(n) blocks until
  // the nth completion (from 0, in the order they were recorded) exists and returns its time.
  virtual void Complete(double end_ms) = 0;
  virtual double CompletedAt(int n) = 0;
  // Early stopping: Publish records one timed request's latency; Latencies(from) returns every
  // replica's published latencies from position `from` on, in the order published; after
  // Stop, Take returns past the last request.
  virtual void Publish(double latency_ms) = 0;
  virtual std::vector<double> Latencies(int from) = 0;
  virtual void Stop() = 0;
};

// The host's monotonic clock in ms, and a sleep until one of its times.
class HostClock {
 public:
  virtual ~HostClock() = default;
  virtual double NowMs() = 0;
  virtual void SleepUntilMs(double ms) = 0;
};

// std::chrono::steady_clock: CLOCK_MONOTONIC, one clock for every process of a host (the
// coordinator places a load's requests against its busy stretches on it).
class SteadyHostClock final : public HostClock {
 public:
  double NowMs() override;
  void SleepUntilMs(double ms) override;
};

struct ServeRankOptions {
  ServeLoad load;                 // TrialServeLoad: replicas, concurrency, slo_scale, ...
  std::vector<Request> requests;  // RequestList::requests: arrival order, warm-up first
  int shapes = 1;                 // the shapes Request::shape indexes (RequestList::shapes)
  int replica = 0;                // this rank's replica (its dp group)
  bool leader = false;            // the rank of its replica that takes and records requests
  int isolated_runs = 3;          // requests each replica times alone before the load
  // Each shape's isolated latency when measured already (an engine's client times its server
  // alone once, metrics/serve_slots.h): step 1 is skipped. Empty: step 1 measures it.
  std::vector<double> isolated_ms;
};

struct ServedRequests {
  // The requests this rank's replica served, in order, as this rank timed them (the leader's
  // are the replica's record; every rank's are its samples).
  std::vector<RequestRecord> records;
  std::vector<double> isolated_ms;  // this replica's median isolated latency, per shape
  double start_ms = 0;              // the load's start on the host clock
  bool stopped_early = false;       // this rank's replica stopped the load (early stopping)
  // The stages of the load's requests as this rank timed them (each denoising step, the
  // decode: what `serve` marked), a request's index as the iteration, warm-up ones flagged.
  std::vector<Sample> stage_samples;
};

// One request of `shape`, its stages marked on `stages` (synchronously issued: the loop marks
// around it on the device clock and waits for it).
using ServeWork = std::function<void(int shape, Stages& stages)>;

// Runs the serving loop above on this rank. REQUIRES: every rank of the trial calls it with
// the same load, requests, shapes and isolated_runs (the barriers are the world's); every
// Request::shape below `shapes`.
ServedRequests ServeRequests(const ServeRankOptions& options, RankGroup& world,
                             IterationClock& device, HostClock& host, ServeQueue& queue,
                             const ServeWork& serve);

// What a rank's file says of the requests it served (`result.rank`'s): each request's latency
// (stage "iteration", arrival to end), queue wait and service as samples (none for a request
// answered with an error, RequestRecord::failed), the load's first
// `warmup_requests` flagged, then its stages' samples; a replica's leader also records the
// requests and the load's start (in seconds of the host's monotonic clock: where the
// coordinator places them against its busy stretches). stop_reason "served".
void RecordServed(const ServedRequests& served, int warmup_requests, bool leader,
                  RankResult& result);

}  // namespace ditbench

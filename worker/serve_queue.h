// What a serving trial's loop (metrics/serve_loop.h) needs from the worker's process: the
// replicas' shared queue over the trial's c10d store.
#pragma once

#include <chrono>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "metrics/serve_loop.h"

namespace ditbench {

// The queue over `store` (the trial's rendezvous store, keys under "serve/"): an atomic counter
// for Take, a key per replica and turn for Tell and Hear, a counter and a key per completion for
// a closed loop, a counter and a key per published latency, and a key that stops the load. A read
// waits at most `timeout` (the trial's) for its key.
class StoreServeQueue final : public ServeQueue {
 public:
  StoreServeQueue(c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout);
  int Take() override;
  void Tell(int replica, int turn, int request) override;
  int Hear(int replica, int turn) override;
  void Complete(double end_ms) override;
  double CompletedAt(int n) override;
  void Publish(double latency_ms) override;
  std::vector<double> Latencies(int from) override;
  void Stop() override;

 private:
  std::string Read(const std::string& key);
  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ditbench

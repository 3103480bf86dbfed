#include "worker/serve_queue.h"

#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace

StoreServeQueue::StoreServeQueue(c10::intrusive_ptr<c10d::Store> store,
                                 std::chrono::milliseconds timeout)
    : store_(std::move(store)), timeout_(timeout) {}

int StoreServeQueue::Take() {
  // A request taken just before another replica stopped the load is still served: the
  // requests served stay the first of the load.
  if (store_->check({"serve/stop"})) return std::numeric_limits<int>::max();
  return static_cast<int>(store_->add("serve/next", 1) - 1);
}

void StoreServeQueue::Tell(int replica, int turn, int request) {
  store_->set(fmt::format("serve/replica{}/turn{}", replica, turn), Bytes(std::to_string(request)));
}

int StoreServeQueue::Hear(int replica, int turn) {
  return std::stoi(Read(fmt::format("serve/replica{}/turn{}", replica, turn)));
}

void StoreServeQueue::Complete(double end_ms) {
  const std::int64_t n = store_->add("serve/completed", 1) - 1;
  store_->set(fmt::format("serve/completed{}", n), Bytes(fmt::format("{:.17g}", end_ms)));
}

double StoreServeQueue::CompletedAt(int n) {
  return std::stod(Read(fmt::format("serve/completed{}", n)));
}

void StoreServeQueue::Publish(double latency_ms) {
  const std::int64_t n = store_->add("serve/published", 1) - 1;
  store_->set(fmt::format("serve/latency{}", n), Bytes(fmt::format("{:.17g}", latency_ms)));
}

std::vector<double> StoreServeQueue::Latencies(int from) {
  const std::int64_t count = store_->add("serve/published", 0);
  std::vector<double> latencies;
  for (std::int64_t n = from; n < count; ++n)
    latencies.push_back(std::stod(Read(fmt::format("serve/latency{}", n))));
  return latencies;
}

void StoreServeQueue::Stop() { store_->set("serve/stop", Bytes("1")); }

std::string StoreServeQueue::Read(const std::string& key) {
  store_->wait({key}, timeout_);
  const std::vector<uint8_t> value = store_->get(key);
  return {value.begin(), value.end()};
}

}  // namespace ditbench

#include "metrics/serve_slots.h"

#include <algorithm>
#include <barrier>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ditbench {
namespace {

// The slots' queue: every slot leads its own turn, so Tell and Hear are never needed. Abort
// (a slot failed) stops the load and wakes a closed loop's waits, which then throw.
class SharedQueue final : public ServeQueue {
 public:
  int Take() override {
    std::lock_guard lock(mutex_);
    if (stopped_) return std::numeric_limits<int>::max();
    return next_++;
  }
  void Tell(int, int, int) override {}
  int Hear(int, int) override { throw std::logic_error("a client slot hears from no leader"); }
  void Complete(double end_ms) override {
    {
      std::lock_guard lock(mutex_);
      completions_.push_back(end_ms);
    }
    changed_.notify_all();
  }
  double CompletedAt(int n) override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return aborted_ || static_cast<int>(completions_.size()) > n; });
    if (static_cast<int>(completions_.size()) <= n)
      throw std::runtime_error("the load stopped: another client slot failed");
    return completions_[static_cast<std::size_t>(n)];
  }
  void Publish(double latency_ms) override {
    std::lock_guard lock(mutex_);
    published_.push_back(latency_ms);
  }
  std::vector<double> Latencies(int from) override {
    std::lock_guard lock(mutex_);
    return {published_.begin() + std::min<std::ptrdiff_t>(from, std::ssize(published_)),
            published_.end()};
  }
  void Stop() override {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  bool stopped() {
    std::lock_guard lock(mutex_);
    return stopped_;
  }
  void Abort() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = aborted_ = true;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int next_ = 0;
  bool stopped_ = false, aborted_ = false;
  std::vector<double> completions_, published_;
};

// The slots as the loop's world: a barrier over the threads still serving.
class SlotGroup final : public RankGroup {
 public:
  SlotGroup(std::barrier<>& barrier, int rank, int size)
      : barrier_(barrier), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Barrier() override { barrier_.arrive_and_wait(); }
  double AllReduceMax(double) override { throw std::logic_error("client slots reduce nothing"); }

 private:
  std::barrier<>& barrier_;
  int rank_, size_;
};

// A client's request is done when its answer is in: there is no device to wait for.
class NoDevice final : public IterationClock {
 public:
  void Mark(int) override {}
  void Synchronize() override {}
  double ElapsedMs(int, int) override { return 0; }
};

}  // namespace

ServedRequests ServeFromSlots(const ServeRankOptions& options, int slots, HostClock& host,
                              const SlotWork& work) {
  if (slots < 1 || slots < options.load.concurrency)
    throw std::invalid_argument("ServeFromSlots: fewer slots than the closed loop's concurrency");
  if (static_cast<int>(options.isolated_ms.size()) != std::max(1, options.shapes))
    throw std::invalid_argument("ServeFromSlots: isolated_ms is not measured for every shape");
  ServeRankOptions slot_options = options;
  slot_options.replica = 0;
  slot_options.leader = true;
  SharedQueue queue;
  std::barrier<> barrier(slots);
  std::vector<ServedRequests> served(static_cast<std::size_t>(slots));
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(slots));
  for (int slot = 0; slot < slots; ++slot)
    threads.emplace_back([&, slot] {
      SlotGroup group(barrier, slot, slots);
      NoDevice device;
      try {
        // The loop calls the work once per record, in the records' order. A request taken
        // before the load stopped but not yet sent when it did (every slot takes its next
        // request before waiting for its arrival) is not sent, and leaves no record.
        std::vector<bool> failed, sent;
        ServedRequests& mine = served[static_cast<std::size_t>(slot)];
        mine = ServeRequests(slot_options, group, device, host, queue, [&](int shape, Stages&) {
          sent.push_back(!queue.stopped());
          if (!sent.back()) {
            failed.push_back(false);
            return;
          }
          const SlotOutcome outcome = work(slot, shape);
          failed.push_back(outcome != SlotOutcome::kServed);
          if (outcome == SlotOutcome::kStopLoad) queue.Stop();
        });
        std::vector<RequestRecord> kept;
        for (std::size_t i = 0; i < mine.records.size() && i < sent.size(); ++i)
          if (sent[i]) {
            kept.push_back(mine.records[i]);
            kept.back().failed = failed[i];
          }
        mine.records = std::move(kept);
      } catch (...) {
        {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
        queue.Abort();
        barrier.arrive_and_drop();  // the others' barriers no longer wait for this slot
      }
    });
  threads.clear();  // joins
  if (error) std::rethrow_exception(error);
  ServedRequests all;
  all.isolated_ms = options.isolated_ms;
  all.start_ms = std::numeric_limits<double>::infinity();
  for (ServedRequests& s : served) {
    all.records.insert(all.records.end(), s.records.begin(), s.records.end());
    all.stage_samples.insert(all.stage_samples.end(), s.stage_samples.begin(),
                             s.stage_samples.end());
    all.start_ms = std::min(all.start_ms, s.start_ms);
    all.stopped_early = all.stopped_early || s.stopped_early;
  }
  std::sort(all.records.begin(), all.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.index < b.index; });
  return all;
}

}  // namespace ditbench

// Fakes for the measurement interfaces: a clock whose durations are scripted and rank groups
// that exchange values between threads, so the timing loop is tested without a device.
#pragma once

#include <barrier>
#include <functional>
#include <mutex>
#include <vector>

#include "metrics/measurement.h"

namespace ditbench::test {

// A clock that only moves when told: the work calls Advance() to "spend" time, so each stage's
// duration is exactly what the test scripted. Counts iterations by their start marks.
class FakeClock final : public IterationClock {
 public:
  void Advance(double ms) { now_ += ms; }
  void Mark(int slot) override {
    if (slot == 0) ++iteration_;
    if (static_cast<int>(times_.size()) <= slot) times_.resize(slot + 1);
    times_[slot] = now_;
  }
  void Synchronize() override { ++synchronized_; }
  double ElapsedMs(int from, int to) override { return times_.at(to) - times_.at(from); }
  int iteration() const { return iteration_; }  // 0-based index of the current iteration
  int synchronized() const { return synchronized_; }

 private:
  std::vector<double> times_;
  double now_ = 0;
  int iteration_ = -1;
  int synchronized_ = 0;
};

// N ranks in N threads: a real barrier and an all-reduce of the max through shared memory.
class ThreadRankGroups {
 public:
  explicit ThreadRankGroups(int size)
      : size_(size), barrier_(size), values_(size), phase_barrier_(size) {}

  class Group final : public RankGroup {
   public:
    Group(ThreadRankGroups* shared, int rank) : shared_(shared), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return shared_->size_; }
    void Barrier() override {
      ++barriers_;
      shared_->barrier_.arrive_and_wait();
    }
    double AllReduceMax(double value) override {
      shared_->values_[rank_] = value;
      shared_->phase_barrier_.arrive_and_wait();
      double max = value;
      for (double v : shared_->values_) max = std::max(max, v);
      shared_->phase_barrier_.arrive_and_wait();
      return max;
    }
    int barriers() const { return barriers_; }

   private:
    ThreadRankGroups* shared_;
    int rank_;
    int barriers_ = 0;
  };

 private:
  int size_;
  std::barrier<> barrier_;
  std::vector<double> values_;
  std::barrier<> phase_barrier_;
};

}  // namespace ditbench::test

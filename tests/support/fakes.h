// Fakes for the measurement interfaces: a clock whose durations are scripted and rank groups
// that exchange values between threads, so the timing loop is tested without a device.
#pragma once

#include <barrier>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
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
  double now() const { return now_; }
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

// An energy counter driven by a FakeClock: a board drawing `watts` (mJ = W x ms), read at the
// clock's time. `fail_from_read`: that read (0-based) and every later one fail.
class FakeEnergyCounter final : public EnergyCounter {
 public:
  FakeEnergyCounter(const FakeClock& clock, double watts) : clock_(clock), watts_(watts) {}
  std::optional<EnergyReading> Read(std::string* why_not) override {
    if (fail_from_read_ >= 0 && reads_ >= fail_from_read_) {
      ++reads_;
      *why_not = "the fake counter fails";
      return std::nullopt;
    }
    ++reads_;
    const double now = clock_.now() + offset_ms_;
    return EnergyReading{static_cast<std::uint64_t>(now * watts_ + base_mj_), now};
  }
  void FailFromRead(int read) { fail_from_read_ = read; }
  // Moves the counter's own time by `ms` (time the clock does not see: a barrier's wait).
  void AddHostTime(double ms) { offset_ms_ += ms; }
  void SetBase(double mj) { base_mj_ = mj; }
  int reads() const { return reads_; }

 private:
  const FakeClock& clock_;
  double watts_;
  double offset_ms_ = 1;  // a window never starts at 0
  double base_mj_ = 0;
  int reads_ = 0;
  int fail_from_read_ = -1;
};

}  // namespace ditbench::test

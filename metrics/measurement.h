// The timing loop every trial goes through (docs/measurement.md), torch-free.
//
// Per iteration:   barrier across ranks -> mark start -> scoped work (marks at the begin and
//                  end of each stage) -> mark end -> synchronize -> read elapsed times.
// Warm-up iterations run the same code and are kept, flagged. After every timed iteration the
// ranks agree on the slowest rank's time (an all-reduce of the max: the online form of
// SlowestPerIteration in metrics/trial_metrics.h), so every rank sees the same
// series and takes the same stopping decision: never before `repeats.min`, always at
// `repeats.max`, otherwise when the median's 95% CI is within `target_rel_ci` or `max_seconds`
// of timed work are spent.
//
// Energy (optional): with a counter (machine/energy_counter.h) each rank reads it once just
// before its first timed iteration starts (after that iteration's barrier; the warm-up was
// synchronised) and once after its last timed iteration ended (after its synchronize and the
// stopping decision), so the energy covers exactly the timed iterations and what runs between
// them (the barriers and the all-reduce of each iteration), never the warm-up.
//
// The clock, the rank group and the counter are interfaces: the worker plugs in device events,
// a c10d process group and NVML; tests plug in fakes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "contract/measurement_records.h"
#include "experiments/repeats.h"
#include "machine/energy_counter.h"

namespace ditbench {

// The ranks of one trial. REQUIRES: every rank calls each method the same number of times in
// the same order (they are collectives).
class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void Barrier() = 0;
  virtual double AllReduceMax(double value) = 0;
};

// Time points recorded in the order the work is issued. On a GPU, Mark records an event on the
// compute stream (no host synchronisation); on CPU it synchronizes and reads a monotonic clock.
class IterationClock {
 public:
  virtual ~IterationClock() = default;
  // Records time point `slot` (0-based, at most kMaxMarks per iteration).
  virtual void Mark(int slot) = 0;
  // Waits until every recorded point has happened.
  virtual void Synchronize() = 0;
  // Milliseconds between two recorded points. REQUIRES: Synchronize() since they were marked.
  virtual double ElapsedMs(int from, int to) = 0;
  static constexpr int kMaxMarks = 4096;
};

// Stages inside one iteration (denoising steps, transformer blocks), as nested intervals.
// Each Begin/End pair becomes a sample named by the open stages joined with '/', e.g.
// "step:3" or "step:3/block:12". REQUIRES: Begin and End balance within an iteration.
class Stages {
 public:
  virtual ~Stages() = default;
  virtual void Begin(const std::string& name) = 0;
  virtual void End() = 0;
  // The open stage reused cached work (a denoising step whose blocks `cache` skipped): its
  // sample carries the flag (contract/measurement_records.h Sample::reused).
  virtual void MarkReused() = 0;
};

// Stages as marks of an IterationClock, turned into samples after its synchronize: slot 0 is
// the iteration's start, each Begin and End takes the next slot, FinishIteration the one after
// the last (past the clock's capacity, stages share one slot and read as zero length).
class MarkedStages final : public Stages {
 public:
  explicit MarkedStages(IterationClock& clock) : clock_(clock) {}
  void StartIteration();  // forgets the previous iteration's stages; marks slot 0
  int FinishIteration();  // marks and returns the iteration's last slot
  void Begin(const std::string& name) override;
  void End() override;
  void MarkReused() override;
  // The finished stages of this iteration as samples. REQUIRES: the clock synchronized since.
  void AppendSamples(int rank, int iteration, bool warmup, std::vector<Sample>& samples) const;

 private:
  struct Open {
    std::string name;
    int begin = 0;
    bool reused = false;
  };
  struct Interval {
    std::string name;
    int begin = 0, end = 0;
    bool reused = false;
  };
  int Mark();
  IterationClock& clock_;
  int next_slot_ = 0;
  std::vector<Open> open_;
  std::vector<Interval> finished_;
};

// One iteration of the scoped work.
using Work = std::function<void(Stages& stages)>;

struct MeasureOptions {
  int warmup = 0;
  Repeats repeats;
  // This rank's device energy counter, or nullptr (CPU, no NVML): borrowed for the call.
  EnergyCounter* energy = nullptr;
};

struct Measurement {
  std::vector<Sample> samples;           // this rank's; iteration samples stage "iteration"
  std::vector<double> slowest_ms;        // timed iterations: the slowest rank's time
  std::string stop_reason;               // "max", "target_rel_ci" or "max_seconds"
  int timed_iterations = 0;
  // The counter's energy over the timed window (MeasureOptions::energy); unset without a
  // counter, or with why in energy_unavailable when a read failed.
  std::optional<EnergyWindow> energy;
  std::string energy_unavailable;
};

Measurement Measure(const MeasureOptions& options, RankGroup& group, IterationClock& clock,
                    const Work& work);

// A group of one: no communication (world size 1 runs through the same loop).
class SingleRankGroup final : public RankGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void Barrier() override {}
  double AllReduceMax(double value) override { return value; }
};

}  // namespace ditbench

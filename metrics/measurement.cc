#include "metrics/measurement.h"

#include <algorithm>

#include "stats/stats.h"

namespace ditbench {
namespace {

// Whether to stop after the timed iterations in `slowest`.
const char* StopReason(const Repeats& r, const std::vector<double>& slowest, double spent_ms) {
  const int n = static_cast<int>(slowest.size());
  if (n < r.min) return nullptr;
  if (n >= r.max) return "max";
  if (r.max_seconds > 0 && spent_ms >= r.max_seconds * 1000.0) return "max_seconds";
  if (r.target_rel_ci > 0 && n >= 2 &&
      RelativeCiHalfWidth(Summarize(slowest)) <= r.target_rel_ci)
    return "target_rel_ci";
  return nullptr;
}

}  // namespace

void MarkedStages::StartIteration() {
  next_slot_ = 0;
  open_.clear();
  finished_.clear();
  clock_.Mark(next_slot_++);
}

int MarkedStages::FinishIteration() {
  const int last = next_slot_;  // never above kMaxMarks - 1, never used by a stage mark
  clock_.Mark(last);
  return last;
}

void MarkedStages::Begin(const std::string& name) {
  std::string full = open_.empty() ? name : open_.back().name + "/" + name;
  open_.push_back({std::move(full), Mark()});
}

void MarkedStages::End() {
  if (open_.empty()) return;
  finished_.push_back({open_.back().name, open_.back().begin, Mark(), open_.back().reused});
  open_.pop_back();
}

void MarkedStages::MarkReused() {
  if (!open_.empty()) open_.back().reused = true;
}

void MarkedStages::AppendSamples(int rank, int iteration, bool warmup,
                                 std::vector<Sample>& samples) const {
  for (const Interval& interval : finished_)
    samples.push_back({rank, iteration, interval.name,
                       clock_.ElapsedMs(interval.begin, interval.end), warmup, interval.reused});
}

int MarkedStages::Mark() {
  // Past the clock's capacity stages share one slot (reading as zero length) rather than
  // fail; the last slot stays free for the iteration's end.
  const int slot =
      next_slot_ < IterationClock::kMaxMarks - 1 ? next_slot_++ : IterationClock::kMaxMarks - 2;
  clock_.Mark(slot);
  return slot;
}

Measurement Measure(const MeasureOptions& options, RankGroup& group, IterationClock& clock,
                    const Work& work) {
  Measurement m;
  double spent_ms = 0;
  MarkedStages stages(clock);
  std::optional<EnergyReading> energy_start;
  for (int iteration = 0;; ++iteration) {
    const bool warmup = iteration < options.warmup;
    group.Barrier();
    if (options.energy && iteration == options.warmup)
      energy_start = options.energy->Read(&m.energy_unavailable);
    stages.StartIteration();
    work(stages);
    const int last = stages.FinishIteration();
    clock.Synchronize();

    const double total = clock.ElapsedMs(0, last);
    m.samples.push_back({group.rank(), iteration, "iteration", total, warmup});
    stages.AppendSamples(group.rank(), iteration, warmup, m.samples);

    const double slowest = group.AllReduceMax(total);
    if (warmup) continue;
    m.slowest_ms.push_back(slowest);
    spent_ms += slowest;
    ++m.timed_iterations;
    if (const char* reason = StopReason(options.repeats, m.slowest_ms, spent_ms)) {
      m.stop_reason = reason;
      break;
    }
  }
  if (energy_start) {
    if (auto end = options.energy->Read(&m.energy_unavailable))
      m.energy = EnergyBetween(*energy_start, *end, &m.energy_unavailable);
  }
  return m;
}

}  // namespace ditbench

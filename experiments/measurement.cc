#include "experiments/measurement.h"

#include <fmt/format.h>

#include "report/stats.h"

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

Measurement Measure(const MeasureOptions& options, RankGroup& group, IterationClock& clock,
                    const Work& work) {
  Measurement m;
  double spent_ms = 0;
  for (int iteration = 0;; ++iteration) {
    const bool warmup = iteration < options.warmup;
    int marks = 0;
    group.Barrier();
    clock.Mark(marks++);
    work([&] {
      if (marks + 1 < IterationClock::kMaxMarks) clock.Mark(marks++);
    });
    clock.Mark(marks++);
    clock.Synchronize();

    const double total = clock.ElapsedMs(0, marks - 1);
    m.samples.push_back({group.rank(), iteration, "iteration", total, warmup});
    // Stage k ends at mark k+1; the final mark closes the iteration, not a stage.
    for (int stage = 0; stage + 2 < marks; ++stage)
      m.samples.push_back({group.rank(), iteration,
                           fmt::format("{}:{}", options.stage_prefix, stage),
                           clock.ElapsedMs(stage, stage + 1), warmup});

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
  return m;
}

}  // namespace ditbench

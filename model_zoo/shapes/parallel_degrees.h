// The parallel degrees of a trial, and the one table that names them. Torch-free: the trial
// configuration, the result row, the validity rules, the planner, the report and the worker
// share it.
//
// Every list of degrees in ditbench walks kDegreeTable: setters, canonical keys, the labels
// ("u2 r1", "ulysses=2", "ulysses+ring"), query columns, constraint variables, the OOM order and
// the report. A new degree is a member here and a row in the table (and its place in the rank
// layout, model_zoo/shapes/parallel_layout.cc, and the results view, storage/schema.cc).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace ditbench {

struct ParallelDegrees {
  int dp = 1, cfg = 1, pipefusion = 1, ring = 1, ulysses = 1;
  // Tensor parallelism: each block's attention heads and MLP split over `tp` ranks that hold
  // the same tokens (model_zoo/parallel/tensor_parallel.h). Last, so that the five older
  // degrees keep their positions in a braced list.
  int tp = 1;
  int world_size() const { return dp * cfg * pipefusion * ring * ulysses * tp; }
  int sequence_size() const { return ring * ulysses; }
  bool operator==(const ParallelDegrees&) const = default;
};

// One degree: its name (the sweep axis, the canonical key, the results view's column, the
// constraint variable, the long label "ulysses=2"), its short label (the status line's "u2" and
// the plan table's column "u"), where ParallelDegrees holds it and the largest value a sweep
// may set (the smallest is 1). A degree that is not `shown_at_one` is left out of the labels
// that list every degree (the status line's "u1 r1 ...", validity's layout product and plan's
// columns) while it is 1: those texts read as they did before it existed.
struct DegreeInfo {
  std::string_view name;
  std::string_view short_label;
  int ParallelDegrees::*member;
  int max;
  bool shown_at_one = true;
};

// Innermost first (the rank layout's order, model_zoo/shapes/parallel_layout.h): the order in which
// every label, column and comparison lists the degrees.
inline constexpr std::array<DegreeInfo, 6> kDegreeTable{{
    {"tp", "tp", &ParallelDegrees::tp, 1024, /*shown_at_one=*/false},
    {"ulysses", "u", &ParallelDegrees::ulysses, 1024},
    {"ring", "r", &ParallelDegrees::ring, 1024},
    {"pipefusion", "pf", &ParallelDegrees::pipefusion, 1024},
    {"cfg", "cfg", &ParallelDegrees::cfg, 2},  // unconditional and conditional branch
    {"dp", "dp", &ParallelDegrees::dp, 1024},
}};

// Whether `d` is listed in a label of every degree for `degrees` (DegreeInfo::shown_at_one).
inline bool Listed(const DegreeInfo& d, const ParallelDegrees& degrees) {
  return d.shown_at_one || degrees.*d.member != 1;
}

// True when every degree of `a` is at most the same degree of `b`.
inline bool AllAtMost(const ParallelDegrees& a, const ParallelDegrees& b) {
  for (const DegreeInfo& d : kDegreeTable)
    if (a.*d.member > b.*d.member) return false;
  return true;
}

// The degree labels, each the text one output has always shown:
// "u2 r1 pf1 cfg1 dp1": every degree by its short label (the run's status line); "tp2 u1 ..."
// with tensor parallelism.
std::string ShortDegreesLabel(const ParallelDegrees& degrees);
// "ulysses=2 cfg=2": the degrees above 1 by name, space-separated; "" on one rank (the report).
std::string DegreesAboveOne(const ParallelDegrees& degrees);
// "ulysses+cfg": the names of the degrees above 1; "" on one rank (the report's chart series).
std::string StrategyName(const ParallelDegrees& degrees);
// "dp 1 x cfg 2 x pipefusion 1 x ring 1 x ulysses 4": the world size's factors, outermost
// first (validity's message).
std::string LayoutProduct(const ParallelDegrees& degrees);

}  // namespace ditbench

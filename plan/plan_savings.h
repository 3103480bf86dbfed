// What `on_oom: skip_larger`, `search: halving` and `--budget` are expected to save, by the
// plan's own estimates: trials predicted skipped or cut, and seconds. Pure: a plan in, figures
// out; `plan` prints them in its table and under "savings" in its JSON.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>

#include <nlohmann/json.hpp>

#include "experiments/sweep_spec.h"
#include "plan/sweep_plan.h"

namespace ditbench {

struct PlanSavings {
  // on_oom: skip_larger. A trial at least as large as another trial of the sweep is skipped if
  // that one runs out of memory first: an upper bound, since nobody knows which will.
  struct OnOom {
    std::size_t trials = 0;  // trials that can be skipped this way
    double seconds = 0;      // their estimated time (every launch)
  };
  // search: halving. Screening launches (repeats.min) of every trial, then at most the
  // re-measurement launches of each group's fastest; the estimate takes the fastest to be
  // those the plan estimates fastest.
  struct Halving {
    std::int64_t trials = 0, groups = 0;
    std::int64_t remeasured = 0;  // re-measurement launches, at most
    double full_s = 0;            // every trial measured to its target CI instead
    double screening_s = 0, remeasured_s = 0;
    double saved_s = 0;           // full_s - screening_s - remeasured_s (negative: it costs more)
  };
  // --budget: launches the budget starts (BudgetOrder), and what it leaves for the next run.
  struct Budget {
    double budget_s = 0;
    std::size_t launches = 0, fit = 0, cut = 0;
    double seconds = 0, fit_seconds = 0, cut_seconds = 0;
  };
  std::optional<OnOom> on_oom;      // set when the sweep says on_oom: skip_larger
  std::optional<Halving> halving;   // set when the sweep says search: halving
  std::optional<Budget> budget;     // set when a budget is given
  // Trials without an estimate (a command never measured) count as 0 s: their seconds are
  // left out of every figure above.
  std::size_t unestimated = 0;
};

// REQUIRES: `plan` is PlanSweep(spec, ...). budget_s < 0: no budget.
PlanSavings EstimateSavings(const SweepSpec& spec, const SweepPlan& plan, double budget_s);

// The table's lines ("savings: ..."); nothing when no search or budget is set.
void WriteSavings(const PlanSavings& savings, std::ostream& out);

// {"on_oom": {"trials", "seconds"}, "halving": {"trials", "groups", "remeasured_launches",
// "full_s", "screening_s", "remeasured_s", "saved_s"}, "budget": {"budget_s", "launches",
// "fit", "cut", "seconds", "fit_seconds", "cut_seconds"}, "unestimated_trials"}, each search's
// object present only when it is set.
nlohmann::json ToJson(const PlanSavings& savings);

}  // namespace ditbench

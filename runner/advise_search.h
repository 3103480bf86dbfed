// `run --search advise --budget 2h`: measure the trials in the advisor's order, most
// informative first, until the budget is spent or every group's leader is decided
// (plan/advisor.h). Before the database holds enough trials of the device for a cost model
// (plan/fitted_model.h), each next trial is the one whose features the measured ones cover
// least (the largest leverage: it teaches the fit the most); once a model is fitted, it is
// the leader of a group while the leader is only predicted, else the trial likeliest to beat
// a leader among those whose interval overlaps it. Every choice and its reason go to the
// console (RunStatus::SearchChoice) and the database (search_reasons). Like the halving
// search (runner/halving_search.h) it hands launches to the sweep loop through a RunRound,
// one launch per round, and it resumes from what the database holds.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "plan/sweep_plan.h"
#include "plan/trial_selection.h"
#include "runner/halving_search.h"
#include "runner/run_status.h"
#include "storage/campaign_writer.h"
#include "storage/planner_history.h"
#include "storage/results_reader.h"

namespace ditbench {

struct AdviseSearchSettings {
  std::string device;                // whose trials the model is fitted on
  double budget_s = -1;              // negative: no budget
  std::function<double()> now;       // seconds on a monotonic clock
};

// What ended the search.
enum class AdviseSearchEnd { kDecided, kBudgetSpent, kNothingLeft, kStopped };

AdviseSearchEnd RunAdviseSearch(const SweepPlan& plan, const TrialSelection& selection,
                                ResultsReader& reader, PlannerHistory& history,
                                CampaignWriter& writer, std::int64_t campaign,
                                const std::set<std::string>& live,
                                const AdviseSearchSettings& settings, const RunRound& run_round,
                                RunStatus& status);

// The index (into `candidates`) of the trial whose features the `measured` ones cover least:
// the largest leverage x' (X'X + ridge)^-1 x, features scaled by their largest value. Ties keep
// the first. REQUIRES: candidates not empty.
std::size_t MostInformative(const std::vector<std::vector<double>>& measured,
                            const std::vector<std::vector<double>>& candidates);

}  // namespace ditbench

// Deciding what a resumed `run` does, before it does it: which campaign it continues, and for
// each planned trial whether what the campaign recorded is kept or the trial runs (again).
// Pure: `run` executes these verdicts and `run --dry-run` prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/trial.h"
#include "runner/sweep_plan.h"
#include "storage/results_db.h"

namespace ditbench {

// A trial that ended badly (run again only with --rerun failed).
bool IsFailure(TrialStatus status);

// The campaign a run continues. `resume`: the newest campaign of the sweep, unless `fresh`,
// none exists, or its spec differs (then `changed_from` names it and `diff` says what changed)
// and `keep_campaign` (--continue) is not set.
struct CampaignChoice {
  std::optional<std::int64_t> resume;
  std::optional<std::int64_t> changed_from;
  std::string diff;
};
CampaignChoice ChooseCampaign(const std::vector<CampaignInfo>& campaigns,
                              const CampaignRecord& wanted, bool fresh, bool keep_campaign);

// What happens to one planned trial given its status in the resumed campaign (none: not
// recorded) and --rerun ("", "failed" or "all"). `note` says why, for `--dry-run`; empty for
// a trial never recorded.
struct ResumeVerdict {
  bool run = true;
  std::string note;
};
ResumeVerdict JudgeResume(const PlannedTrial& trial, std::optional<TrialStatus> recorded,
                          const std::string& rerun);

}  // namespace ditbench

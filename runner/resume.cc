#include "runner/resume.h"

#include <fmt/format.h>

#include "runner/spec_diff.h"

namespace ditbench {

bool IsFailure(TrialStatus s) {
  return s == TrialStatus::kFailed || s == TrialStatus::kOom || s == TrialStatus::kTimeout ||
         s == TrialStatus::kCrashed;
}

CampaignChoice ChooseCampaign(const std::vector<CampaignInfo>& campaigns,
                              const CampaignRecord& wanted, bool fresh, bool keep_campaign) {
  CampaignChoice choice;
  if (fresh) return choice;
  const CampaignInfo* newest = nullptr;
  for (const auto& c : campaigns)
    if (c.record.sweep_name == wanted.sweep_name && (!newest || c.id > newest->id)) newest = &c;
  if (!newest) return choice;
  if (newest->record.spec_hash != wanted.spec_hash && !keep_campaign) {
    choice.changed_from = newest->id;
    choice.diff = SpecDiff(newest->record.spec_text, wanted.spec_text);
    return choice;
  }
  choice.resume = newest->id;
  return choice;
}

ResumeVerdict JudgeResume(const PlannedTrial& trial, std::optional<TrialStatus> recorded,
                          const std::string& rerun) {
  if (!recorded) return {true, ""};
  const std::string status(StatusName(*recorded));
  if (rerun == "all") return {true, fmt::format("run again (was {}; --rerun all)", status)};
  switch (*recorded) {
    case TrialStatus::kOk:
      return {false, "recorded ok: kept"};
    case TrialStatus::kSkipped:
      // Judged again against this machine: more GPUs or CPU slots may make it runnable.
      if (trial.invalid_reason)
        return {false, "recorded skipped: kept (" + *trial.invalid_reason + ")"};
      return {true, "run (skipped earlier; fits this machine now)"};
    default:
      break;
  }
  if (IsFailure(*recorded)) {
    if (rerun == "failed") return {true, fmt::format("run again (was {}; --rerun failed)", status)};
    return {false, fmt::format("recorded {}: kept (--rerun failed retries it)", status)};
  }
  return {true, fmt::format("run again (was {})", status)};  // interrupted, pending, running
}

}  // namespace ditbench

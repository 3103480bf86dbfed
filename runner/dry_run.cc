#include "runner/dry_run.h"

#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "machine/host_info.h"
#include "plan/plan_output.h"
#include "plan/resume.h"
#include "runner/campaign_setup.h"
#include "storage/results_db.h"

namespace ditbench {

ResumePreview PreviewResume(const RunOptions& options, const SweepSpec& spec,
                            const SweepPlan& plan) {
  std::vector<std::string> notes;
  std::string resume_line = "would start a new campaign (no database yet)\n";
  std::error_code ec;
  if (std::filesystem::is_regular_file(options.db, ec)) {
    try {
      auto db = ResultsDb::Open(options.db, /*read_only=*/true);
      CampaignRecord wanted;
      wanted.sweep_name = spec.name;
      wanted.spec_hash = Sha256Hex(spec.text);
      wanted.spec_text = spec.text;
      const CampaignChoice choice =
          ChooseCampaign(db->reader().Campaigns(), wanted, options.fresh, options.keep_campaign);
      if (choice.resume) {
        const auto statuses = db->reader().TrialStatuses(*choice.resume);
        const auto launch_statuses = db->reader().LaunchStatuses(*choice.resume);
        const std::set<std::string> busy = BusyTrials(*db, *choice.resume);
        int kept = 0, runs = 0;
        for (const PlannedTrial& t : plan.trials) {
          auto found = statuses.find(t.key);
          auto launches = launch_statuses.find(t.key);
          const LaunchPlan verdict = PlanLaunches(
              t, spec.replicates,
              found == statuses.end() ? std::nullopt : std::optional(found->second),
              launches == launch_statuses.end() ? std::map<int, TrialStatus>{}
                                                : launches->second,
              RerunFor(options.rerun, t.key, busy));
          notes.push_back(verdict.note);
          if (verdict.launches.empty()) ++kept;
          else if (!t.invalid_reason) runs += static_cast<int>(verdict.launches.size());
        }
        resume_line = fmt::format(
            "would resume campaign {}: {} trial(s) already recorded and kept, {} {}to run\n",
            *choice.resume, kept, runs, spec.replicates > 1 ? "launch(es) " : "");
      } else if (choice.changed_from) {
        resume_line = fmt::format("would start a new campaign: sweep '{}' changed since campaign "
                                  "{} began (--continue resumes it)\n{}",
                                  spec.name, *choice.changed_from, choice.diff);
      } else {
        resume_line = "would start a new campaign\n";
      }
    } catch (const std::exception& e) {
      resume_line = fmt::format("cannot tell what is already recorded: {}\n", e.what());
    }
  }
  return {std::move(notes), std::move(resume_line)};
}

void WriteDryRun(const RunOptions& options, const SweepSpec& spec, const SweepPlan& plan,
                 const PlanAssumptions& assumptions, std::ostream& out) {
  const ResumePreview preview = PreviewResume(options, spec, plan);
  WritePlanTable(spec, plan, assumptions, out, preview.notes, options.budget_s);
  out << preview.line;
}

}  // namespace ditbench

// CampaignWriter: what `run` writes to the results database, and what a running or resumed
// campaign reads back of its own trials. Campaigns are created or resumed, stamped, labelled
// and set aside here; every finished launch of a trial is committed in its own transaction, so
// a coordinator killed at any instant loses at most the trial in flight.
//
// Made by ResultsDb::Open over its connection and borrowed from it (ResultsDb::writer()): it
// must not outlive the ResultsDb. Errors: every method throws StorageError (on a read-only
// database, SQLite's "attempt to write a readonly database"). Thread-safety: as ResultsDb.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/launch_summary.h"
#include "storage/records.h"

struct sqlite3;

namespace ditbench {

class CampaignWriter {
 public:
  CampaignWriter(const CampaignWriter&) = delete;
  CampaignWriter& operator=(const CampaignWriter&) = delete;

  // The newest campaign of `campaign.sweep_name` (resumed), or a new one when none exists or
  // `fresh` is set. Returns its id.
  std::int64_t ResumeOrCreateCampaign(const CampaignRecord& campaign, bool fresh);

  // Trials left `running` by a coordinator that `gone(host, pid)` says is gone become
  // `interrupted` (a trial with no recorded coordinator counts as gone). Returns how many;
  // trials of a live coordinator stay `running` and are listed in `still_running` by key.
  // Trials whose key is in `taken_over` stay `running` whoever ran them (this coordinator
  // watches their scheduler jobs again) and are not listed.
  using CoordinatorIsGone = std::function<bool(const std::string& host, std::int64_t pid)>;
  int MarkRunningAsInterrupted(std::int64_t campaign_id, const CoordinatorIsGone& gone,
                               std::vector<std::string>* still_running = nullptr,
                               const std::set<std::string>& taken_over = {});

  // Inserts or updates the trial row and its launch `trial.launch` with status `running`
  // (config, world size, start time, coordinator); that launch's samples and the trial's
  // summary metrics are removed (RecordLaunch writes them again). A launch that already holds
  // a finished measurement (ok or a failure: a rerun) is left exactly as recorded, so that an
  // interrupted or killed rerun never loses it; RecordLaunch replaces it.
  void MarkRunning(std::int64_t campaign_id, const TrialRecord& trial);

  // Records the batch scheduler's job (a Slurm job id) of a running trial. Throws
  // StorageError when the campaign has no such trial.
  void SetSchedulerJob(std::int64_t campaign_id, const std::string& trial_key,
                       const std::string& job);

  // The campaign's trials recorded `running`, with who runs them and their scheduler job.
  struct RunningTrial {
    std::string trial_key;
    std::string run_dir;
    std::string scheduler_job;  // empty: none recorded (local ranks)
    std::string coordinator_host;
    std::int64_t coordinator_pid = 0;
    double started_at = 0;
    int launch = 0;  // which of its launches is running (the highest recorded `running`)
  };
  std::vector<RunningTrial> RunningTrials(std::int64_t campaign_id);

  // Replaces the trial's row, launches, samples and metrics in one transaction: the trial as
  // one launch (launch 0, replicates as given), or no launch at all when skipped or pending.
  void RecordTrial(std::int64_t campaign_id, const TrialRecord& trial);

  // Records launch `launch.launch` of a trial (its row, samples and own latency) and the
  // trial's row with `trial`'s status, error and summary metrics, in one transaction. Other
  // launches of the trial are kept.
  // An interrupted launch over a finished measurement of the same launch records nothing.
  void RecordLaunch(std::int64_t campaign_id, const TrialRecord& launch, const TrialOutcome& trial);

  // Every stored launch of the trial but `except` (launch index), in launch order, with its
  // status, error, stored metrics (ok launches) and timed "iteration" samples: what
  // SummarizeLaunches needs besides the launch just measured.
  std::vector<LaunchMeasurement> Launches(std::int64_t campaign_id, const std::string& trial_key,
                                          int except = -1);

  // A trial's status and error in `campaign_id` and its extra metric `name` (metric_values;
  // nullopt when it has none), or nullopt when the trial is not recorded there: what a share
  // of capacity reads of its capacity trial (its requests_per_s).
  struct TrialFigure {
    TrialStatus status = TrialStatus::kPending;
    std::string error;
    std::optional<double> value;
    bool busy = false;  // measured while the machine was busy (its health_json)
  };
  std::optional<TrialFigure> TrialExtraMetric(std::int64_t campaign_id,
                                              const std::string& trial_key,
                                              const std::string& name);

  // Merges `environment` into the campaign's environment (top-level keys replaced).
  void UpdateCampaignEnvironment(std::int64_t campaign_id, const nlohmann::json& environment);

  // Stamps the campaign's finish time.
  void FinishCampaign(std::int64_t campaign_id);

  // Sets a campaign aside or takes it back (`ditbench campaigns --exclude/--include`), and
  // names it (an empty label clears it). Throws StorageError naming the known campaigns when
  // there is no campaign `id`.
  void SetCampaignExcluded(std::int64_t campaign_id, bool excluded);
  void SetCampaignLabel(std::int64_t campaign_id, const std::string& label);

  // Why `run --search advise` ran a launch (table search_reasons), in the order it chose.
  void RecordSearchReason(std::int64_t campaign_id, const std::string& trial_key, int launch,
                          const std::string& reason);

 private:
  friend class ResultsDb;
  CampaignWriter(sqlite3* db, const std::filesystem::path& path) : db_(db), path_(path) {}
  sqlite3* db_;                        // ResultsDb's connection, borrowed
  const std::filesystem::path& path_;  // ResultsDb's path, for messages
};

}  // namespace ditbench

// ResultsReader: the typed reads of stored results that the report, compare, history and the
// searches ask for: campaigns, the rows of the `results` view, the statuses of a campaign's
// trials and launches, and samples. It never writes.
//
// Made by ResultsDb::Open over its connection and borrowed from it (ResultsDb::reader()): it
// must not outlive the ResultsDb. Errors: every method throws StorageError. Thread-safety: as
// ResultsDb.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "contract/measurement_records.h"
#include "experiments/trial.h"
#include "storage/result_rows.h"

struct sqlite3;

namespace ditbench {

class ResultsReader {
 public:
  ResultsReader(const ResultsReader&) = delete;
  ResultsReader& operator=(const ResultsReader&) = delete;

  // The path the database was opened at, as given to ResultsDb::Open.
  const std::filesystem::path& path() const { return path_; }

  // Every campaign, oldest first, excluded ones included (CampaignInfo::excluded).
  std::vector<CampaignInfo> Campaigns();

  // Status of every trial recorded in the campaign, by trial key.
  std::map<std::string, TrialStatus> TrialStatuses(std::int64_t campaign_id);

  // Status of every recorded launch of every trial of the campaign: key -> launch -> status.
  std::map<std::string, std::map<int, TrialStatus>> LaunchStatuses(std::int64_t campaign_id);

  // Rows of the `results` view of the given campaigns, ordered by campaign and trial key.
  std::vector<ResultRow> Results(const std::vector<std::int64_t>& campaign_ids);

  // The samples of one launch of the trial ordered by iteration, rank, stage; empty when the
  // trial or launch is unknown.
  std::vector<Sample> Samples(std::int64_t campaign_id, const std::string& trial_key,
                              int launch = 0);

  // The slowest-rank series of `stage` (per timed iteration in order, the maximum over ranks:
  // SlowestSeries of metrics/trial_metrics.h) of every ok launch of every ok trial of the
  // campaign, by trial key, one series per launch in launch order. Storage only reads: each
  // launch's samples go to SlowestSeries, the one definition of the reduction. What `compare`
  // needs, without a copy of every sample.
  std::map<std::string, std::vector<std::vector<double>>> SlowestSeriesByLaunch(
      std::int64_t campaign_id, const std::string& stage);

 private:
  friend class ResultsDb;
  ResultsReader(sqlite3* db, const std::filesystem::path& path) : db_(db), path_(path) {}
  sqlite3* db_;                        // ResultsDb's connection, borrowed
  const std::filesystem::path& path_;  // ResultsDb's path
};

// Every campaign stored on the connection `db`, in id order (ResultsReader::Campaigns; the
// planner's history reads them too, to leave out campaigns that answer nothing).
std::vector<CampaignInfo> StoredCampaigns(sqlite3* db);

}  // namespace ditbench

// ResultsDb's campaigns (results_db.h): creating or resuming one, stamping and describing it,
// and the state of its trials that a resumed run starts from.
#include <functional>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "storage/iso_time.h"
#include "storage/results_db.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

double NowUnixSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::int64_t ResultsDb::ResumeOrCreateCampaign(const CampaignRecord& campaign, bool fresh) {
  Transaction transaction(db_);
  Statement add_sweep(db_,
                      "INSERT INTO sweeps (name, created_at) VALUES (?, ?) "
                      "ON CONFLICT (name) DO NOTHING");
  add_sweep.Bind(1, campaign.sweep_name).Bind(2, IsoUtc(NowUnixSeconds())).Run();
  Statement find_sweep(db_, "SELECT id FROM sweeps WHERE name = ?");
  find_sweep.Bind(1, campaign.sweep_name);
  if (!find_sweep.Step()) throw StorageError(SqliteErrorText(db_, "sweep row vanished"));
  std::int64_t sweep_id = find_sweep.Int(0);

  if (!fresh) {
    Statement newest(db_, "SELECT max(id) FROM campaigns WHERE sweep_id = ?");
    newest.Bind(1, sweep_id);
    if (newest.Step() && !newest.IsNull(0)) {
      std::int64_t id = newest.Int(0);
      Statement reopen(db_, "UPDATE campaigns SET finished_at = NULL WHERE id = ?");
      reopen.Bind(1, id).Run();
      transaction.Commit();
      return id;
    }
  }
  Statement insert(db_, R"sql(
    INSERT INTO campaigns (sweep_id, spec_hash, spec_text, sweep_path, build, host,
                           environment_json, started_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, sweep_id)
      .Bind(2, campaign.spec_hash)
      .Bind(3, campaign.spec_text)
      .Bind(4, campaign.sweep_path)
      .Bind(5, campaign.build)
      .Bind(6, campaign.host)
      .Bind(7, campaign.environment.dump())
      .Bind(8, IsoUtc(NowUnixSeconds()));
  insert.Run();
  std::int64_t id = sqlite3_last_insert_rowid(db_);
  transaction.Commit();
  return id;
}

std::map<std::string, TrialStatus> ResultsDb::TrialStatuses(std::int64_t campaign_id) {
  Statement query(db_, "SELECT trial_key, status FROM trials WHERE campaign_id = ?");
  query.Bind(1, campaign_id);
  std::map<std::string, TrialStatus> statuses;
  while (query.Step()) {
    std::string name = query.Text(1);
    std::optional<TrialStatus> status = ParseStatus(name);
    if (!status) {
      throw StorageError(fmt::format("unknown status '{}' for trial {} in '{}'", name,
                                     query.Text(0), path_.string()));
    }
    statuses.emplace(query.Text(0), *status);
  }
  return statuses;
}

int ResultsDb::MarkRunningAsInterrupted(std::int64_t campaign_id, const CoordinatorIsGone& gone,
                                        std::vector<std::string>* still_running,
                                        const std::set<std::string>& taken_over) {
  Transaction transaction(db_);
  Statement running(db_,
                    "SELECT id, trial_key, coordinator_host, coordinator_pid FROM trials "
                    "WHERE campaign_id = ? AND status = 'running'");
  running.Bind(1, campaign_id);
  std::vector<std::int64_t> dead;
  while (running.Step()) {
    if (taken_over.contains(running.Text(1))) continue;
    const bool known = !running.IsNull(2) && !running.IsNull(3);
    if (!known || gone(running.Text(2), running.Int(3))) {
      dead.push_back(running.Int(0));
    } else if (still_running) {
      still_running->push_back(running.Text(1));
    }
  }
  Statement update(db_,
                   "UPDATE trials SET status = 'interrupted', coordinator_host = NULL, "
                   "coordinator_pid = NULL, error = 'its coordinator died while it ran' "
                   "WHERE id = ?");
  Statement update_launches(db_,
                            "UPDATE launches SET status = 'interrupted', "
                            "error = 'its coordinator died while it ran' "
                            "WHERE trial_id = ? AND status = 'running'");
  for (std::int64_t id : dead) {
    update.Bind(1, id).Run();
    update.Reset();
    update_launches.Bind(1, id).Run();
    update_launches.Reset();
  }
  transaction.Commit();
  return static_cast<int>(dead.size());
}

std::vector<ResultsDb::RunningTrial> ResultsDb::RunningTrials(std::int64_t campaign_id) {
  Statement query(db_, fmt::format("SELECT trial_key, run_dir, scheduler_job, coordinator_host, "
                                   "coordinator_pid, {}, (SELECT MAX(launch) FROM launches l "
                                   "WHERE l.trial_id = t.id AND l.status = 'running') FROM "
                                   "trials t WHERE campaign_id = ? AND status = 'running' "
                                   "ORDER BY id",
                                   UnixSecondsSql("t.started_at")));
  query.Bind(1, campaign_id);
  std::vector<RunningTrial> trials;
  while (query.Step()) {
    RunningTrial t;
    t.trial_key = query.Text(0);
    if (!query.IsNull(1)) t.run_dir = query.Text(1);
    if (!query.IsNull(2)) t.scheduler_job = query.Text(2);
    if (!query.IsNull(3)) t.coordinator_host = query.Text(3);
    if (!query.IsNull(4)) t.coordinator_pid = query.Int(4);
    if (!query.IsNull(5)) t.started_at = query.Double(5);
    if (!query.IsNull(6)) t.launch = static_cast<int>(query.Int(6));
    trials.push_back(std::move(t));
  }
  return trials;
}

std::map<std::string, std::map<int, TrialStatus>> ResultsDb::LaunchStatuses(
    std::int64_t campaign_id) {
  Statement query(db_, R"sql(
    SELECT t.trial_key, l.launch, l.status FROM launches l JOIN trials t ON t.id = l.trial_id
    WHERE t.campaign_id = ?)sql");
  query.Bind(1, campaign_id);
  std::map<std::string, std::map<int, TrialStatus>> statuses;
  while (query.Step()) {
    const std::optional<TrialStatus> status = ParseStatus(query.Text(2));
    if (!status) {
      throw StorageError(fmt::format("unknown status '{}' for launch {} of trial {} in '{}'",
                                     query.Text(2), query.Int(1), query.Text(0), path_.string()));
    }
    statuses[query.Text(0)][static_cast<int>(query.Int(1))] = *status;
  }
  return statuses;
}

void ResultsDb::FinishCampaign(std::int64_t campaign_id) {
  Statement update(db_, "UPDATE campaigns SET finished_at = ? WHERE id = ?");
  update.Bind(1, IsoUtc(NowUnixSeconds())).Bind(2, campaign_id).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(
        fmt::format("no campaign {} in '{}' to finish", campaign_id, path_.string()));
  }
}

void ResultsDb::UpdateCampaignEnvironment(std::int64_t campaign_id,
                                          const nlohmann::json& environment) {
  // json_patch merges objects key by key (RFC 7396), in one statement: no read-modify-write.
  Statement update(db_,
                   "UPDATE campaigns SET environment_json = json_patch(environment_json, ?) "
                   "WHERE id = ?");
  update.Bind(1, environment.dump()).Bind(2, campaign_id).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(fmt::format("no campaign {} in '{}' to update", campaign_id,
                                   path_.string()));
  }
}

std::vector<CampaignInfo> ResultsDb::Campaigns() {
  Statement query(db_, fmt::format(R"sql(
    SELECT c.id, s.name, c.sweep_path, c.spec_hash, c.spec_text, c.build, c.host,
           c.environment_json, {}, {}, c.excluded, c.label,
           (SELECT count(*) FROM trials t WHERE t.campaign_id = c.id)
    FROM campaigns c JOIN sweeps s ON s.id = c.sweep_id ORDER BY c.id)sql",
                                   UnixSecondsSql("c.started_at"),
                                   UnixSecondsSql("c.finished_at")));
  std::vector<CampaignInfo> campaigns;
  while (query.Step()) {
    CampaignInfo info;
    info.id = query.Int(0);
    info.record.sweep_name = query.Text(1);
    info.record.sweep_path = query.Text(2);
    info.record.spec_hash = query.Text(3);
    info.record.spec_text = query.Text(4);
    info.record.build = query.Text(5);
    info.record.host = query.Text(6);
    info.record.environment =
        ParseStoredJson(query.Text(7));
    if (info.record.environment.is_discarded()) info.record.environment = nlohmann::json();
    info.started_at = query.Double(8);
    info.finished_at = query.OptionalDouble(9);
    info.excluded = query.Int(10) != 0;
    if (!query.IsNull(11)) info.label = query.Text(11);
    info.trials = query.Int(12);
    campaigns.push_back(std::move(info));
  }
  return campaigns;
}

namespace {

// One UPDATE of a campaign's column; StorageError naming the known campaigns when none matched.
void UpdateCampaign(sqlite3* db, const std::filesystem::path& path, std::int64_t campaign_id,
                    const char* sql, const std::function<void(Statement&)>& bind) {
  Statement update(db, sql);
  bind(update);
  update.Run();
  if (sqlite3_changes(db) == 1) return;
  Statement ids(db, "SELECT id FROM campaigns ORDER BY id");
  std::string known;
  while (ids.Step()) known += fmt::format("{}{}", known.empty() ? "" : ", ", ids.Int(0));
  throw StorageError(fmt::format("no campaign {} in '{}'; known: {}", campaign_id,
                                 path.string(), known.empty() ? "none" : known));
}

}  // namespace

void ResultsDb::SetCampaignExcluded(std::int64_t campaign_id, bool excluded) {
  UpdateCampaign(db_, path_, campaign_id, "UPDATE campaigns SET excluded = ? WHERE id = ?",
                 [&](Statement& s) { s.Bind(1, excluded ? 1 : 0).Bind(2, campaign_id); });
}

void ResultsDb::SetCampaignLabel(std::int64_t campaign_id, const std::string& label) {
  UpdateCampaign(db_, path_, campaign_id, "UPDATE campaigns SET label = ? WHERE id = ?",
                 [&](Statement& s) {
                   if (label.empty()) s.BindNull(1);
                   else s.Bind(1, label);
                   s.Bind(2, campaign_id);
                 });
}

}  // namespace ditbench

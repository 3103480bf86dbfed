// CampaignWriter (campaign_writer.h): campaigns, and a trial and its launches, samples and
// metrics, each finished launch in one transaction.
#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "experiments/trial_identity.h"
#include "storage/campaign_writer.h"
#include "storage/iso_time.h"
#include "storage/measurement_rows.h"
#include "storage/statement.h"
#include "storage/storage_error.h"

namespace ditbench {
namespace {

double NowUnixSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

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
  // A campaign the user named that is not there: the user's mistake (exit 2), like a query's.
  throw QueryError(fmt::format("no campaign {} in '{}'; known: {}", campaign_id, path.string(),
                               known.empty() ? "none" : known));
}

// The machine's health of a trial measured in several launches: busy when any launch was, so
// that a later, quiet launch does not hide an earlier, disturbed one (each launch's own health
// is what the coordinator sampled over that launch). `earlier` is the row's health before this
// launch; `latest` this launch's.
nlohmann::json FoldLaunchHealth(const nlohmann::json& earlier, nlohmann::json latest) {
  const auto busy = [](const nlohmann::json& h) {
    return h.is_object() && h.value("busy", false) == true;
  };
  if (!busy(earlier) || busy(latest)) return latest;
  if (!latest.is_object()) latest = nlohmann::json::object();
  latest["busy"] = true;
  latest["note"] = earlier.value("note", std::string("busy")) + " (an earlier launch)";
  latest["earlier_launch_busy"] = earlier;
  return latest;
}

// The health_json stored for the trial now, or null.
nlohmann::json StoredHealth(sqlite3* db, std::int64_t campaign_id, const std::string& key) {
  Statement query(db, "SELECT health_json FROM trials WHERE campaign_id = ? AND trial_key = ?");
  query.Bind(1, campaign_id).Bind(2, key);
  if (!query.Step() || query.IsNull(0)) return nullptr;
  return ParseStoredJson(query.Text(0));
}

// Inserts or updates the trial row; returns its id (stable across updates). The canonical
// configuration is stored split: what is computed (config_json) and how it is measured
// (policy_json), as the trial key sees them.
std::int64_t UpsertTrial(sqlite3* db, std::int64_t campaign_id, const TrialRecord& trial,
                         bool finished) {
  const TrialConfig& config = trial.config;
  Statement upsert(db, R"sql(
    INSERT INTO trials (campaign_id, trial_key, config_json, status, error, world_size, device,
                        run_dir, started_at, finished_at, policy_json, coordinator_host,
                        coordinator_pid, health_json, replicates, scheduler_job,
                        placement_json)
    VALUES (:campaign_id, :trial_key, :config_json, :status, :error, :world_size, :device,
            :run_dir, :started_at, :finished_at, :policy_json, :coordinator_host,
            :coordinator_pid, :health_json, :replicates, :scheduler_job, :placement_json)
    ON CONFLICT (campaign_id, trial_key) DO UPDATE SET
      config_json = excluded.config_json, status = excluded.status, error = excluded.error,
      world_size = excluded.world_size, device = excluded.device, run_dir = excluded.run_dir,
      started_at = excluded.started_at, finished_at = excluded.finished_at,
      policy_json = excluded.policy_json, coordinator_host = excluded.coordinator_host,
      coordinator_pid = excluded.coordinator_pid, health_json = excluded.health_json,
      replicates = excluded.replicates, scheduler_job = excluded.scheduler_job,
      placement_json = excluded.placement_json
    RETURNING id)sql");
  upsert.Bind(":campaign_id", campaign_id)
      .Bind(":trial_key", trial.trial_key)
      .Bind(":config_json", ComputationJson(config).dump())
      .Bind(":policy_json", PolicyJson(config).dump())
      .Bind(":status", StatusName(trial.status))
      .Bind(":world_size", trial.world_size)
      .Bind(":replicates", std::max(trial.replicates, 1));
  upsert.BindTextOrNull(":error", trial.error);
  upsert.BindTextOrNull(":device", trial.device);
  upsert.BindTextOrNull(":run_dir", trial.run_dir);
  upsert.BindTextOrNull(":coordinator_host", trial.coordinator_host);
  if (trial.coordinator_pid > 0) {
    upsert.Bind(":coordinator_pid", trial.coordinator_pid);
  } else {
    upsert.BindNull(":coordinator_pid");
  }
  // A later launch of the trial (replicates, a promoted halving trial) folds into the health
  // of the launches before it; a first launch starts afresh.
  const nlohmann::json health =
      trial.launch > 0
          ? FoldLaunchHealth(StoredHealth(db, campaign_id, trial.trial_key), trial.health)
          : trial.health;
  upsert.BindTextOrNull(":health_json", health.is_null() ? std::string() : health.dump());
  upsert.BindTextOrNull(":scheduler_job", trial.scheduler_job);
  upsert.BindTextOrNull(":placement_json",
                        trial.placement.is_null() ? std::string() : trial.placement.dump());
  if (trial.started_at > 0) {
    upsert.Bind(":started_at", IsoUtc(trial.started_at));
  } else {
    upsert.BindNull(":started_at");
  }
  if (finished && trial.finished_at > 0) {
    upsert.Bind(":finished_at", IsoUtc(trial.finished_at));
  } else {
    upsert.BindNull(":finished_at");
  }
  if (!upsert.Step()) throw StorageError(SqliteErrorText(db, "trial upsert returned no id"));
  std::int64_t id = upsert.Int(0);
  upsert.Run();
  return id;
}

// Every launch, sample and summary of the trial.
void DeleteMeasurements(sqlite3* db, std::int64_t trial_id) {
  for (const char* sql :
       {"DELETE FROM samples WHERE trial_id = ?", "DELETE FROM launches WHERE trial_id = ?",
        "DELETE FROM trial_metrics WHERE trial_id = ?"}) {
    Statement statement(db, sql);
    statement.Bind(1, trial_id).Run();
  }
}

// One launch's samples and the trial's summary (the other launches are kept).
void DeleteLaunchMeasurements(sqlite3* db, std::int64_t trial_id, int launch) {
  Statement samples(db, "DELETE FROM samples WHERE trial_id = ? AND launch = ?");
  samples.Bind(1, trial_id).Bind(2, launch).Run();
  Statement metrics(db, "DELETE FROM trial_metrics WHERE trial_id = ?");
  metrics.Bind(1, trial_id).Run();
}

// The launch's row: status, error, where and when it ran, its own latency and resources.
void UpsertLaunch(sqlite3* db, std::int64_t trial_id, const TrialRecord& launch, bool finished) {
  Statement upsert(db, R"sql(
    INSERT OR REPLACE INTO launches (trial_id, launch, status, error, run_dir, started_at,
      finished_at, latency_ms, ci_low_ms, ci_high_ms, iterations, warmup, peak_mem_mb,
      peak_reserved_mb, throttled, sm_clock_min_mhz, sm_clock_max_mhz, energy_j,
      joules_per_image)
    VALUES (:trial_id, :launch, :status, :error, :run_dir, :started_at, :finished_at,
      :latency_ms, :ci_low_ms, :ci_high_ms, :iterations, :warmup, :peak_mem_mb,
      :peak_reserved_mb, :throttled, :sm_clock_min_mhz, :sm_clock_max_mhz, :energy_j,
      :joules_per_image))sql");
  upsert.Bind(":trial_id", trial_id)
      .Bind(":launch", launch.launch)
      .Bind(":status", StatusName(launch.status));
  upsert.BindTextOrNull(":error", launch.error);
  upsert.BindTextOrNull(":run_dir", launch.run_dir);
  upsert.BindTextOrNull(":started_at", launch.started_at > 0 ? IsoUtc(launch.started_at) : "");
  upsert.BindTextOrNull(":finished_at",
                        finished && launch.finished_at > 0 ? IsoUtc(launch.finished_at) : "");
  const std::optional<TrialMetrics>& m = launch.metrics;
  upsert.Bind(":latency_ms", m ? std::optional<double>(m->latency_ms) : std::nullopt)
      .Bind(":ci_low_ms", m ? std::optional<double>(m->ci_low_ms) : std::nullopt)
      .Bind(":ci_high_ms", m ? std::optional<double>(m->ci_high_ms) : std::nullopt);
  if (m) {
    upsert.Bind(":iterations", m->iterations).Bind(":warmup", m->warmup);
  } else {
    upsert.BindNull(":iterations").BindNull(":warmup");
  }
  upsert.Bind(":peak_mem_mb", m ? m->peak_mem_mb : std::nullopt)
      .Bind(":peak_reserved_mb", m ? m->peak_reserved_mb : std::nullopt)
      .Bind(":throttled",
            m && m->throttled ? std::optional<double>(*m->throttled ? 1.0 : 0.0) : std::nullopt)
      .Bind(":sm_clock_min_mhz", m ? m->sm_clock_min_mhz : std::nullopt)
      .Bind(":sm_clock_max_mhz", m ? m->sm_clock_max_mhz : std::nullopt)
      .Bind(":energy_j", m ? m->energy_j : std::nullopt)
      .Bind(":joules_per_image", m ? m->joules_per_image : std::nullopt);
  upsert.Run();
}

int ReadSynchronous(sqlite3* db) {
  Statement query(db, "PRAGMA synchronous");
  return query.Step() ? static_cast<int>(query.Int(0)) : 2;
}

void RestoreSynchronous(sqlite3* db, int level) noexcept {
  try {
    Exec(db, fmt::format("PRAGMA synchronous = {}", level).c_str());
  } catch (...) {  // a connection that cannot run a pragma fails its next statement anyway
  }
}

// Whether launch `launch` of the trial holds a finished measurement (ok or a failure): what a
// rerun keeps until its own measurement replaces it.
bool HasFinishedLaunch(sqlite3* db, std::int64_t campaign_id, const std::string& trial_key,
                       int launch) {
  Statement query(db, R"sql(
    SELECT 1 FROM launches l JOIN trials t ON t.id = l.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND l.launch = ?
      AND l.status IN ('ok', 'failed', 'oom', 'timeout', 'crashed'))sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch);
  return query.Step();
}

}  // namespace

std::int64_t CampaignWriter::ResumeOrCreateCampaign(const CampaignRecord& campaign, bool fresh) {
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

int CampaignWriter::MarkRunningAsInterrupted(std::int64_t campaign_id,
                                             const CoordinatorIsGone& gone,
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

std::vector<CampaignWriter::RunningTrial> CampaignWriter::RunningTrials(std::int64_t campaign_id) {
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

void CampaignWriter::MarkRunning(std::int64_t campaign_id, const TrialRecord& trial) {
  // A rerun (--rerun all, --rerun failed) of a measured launch leaves the measurement as it
  // is: interrupted or killed, the trial keeps its result; RecordLaunch replaces it.
  if (HasFinishedLaunch(db_, campaign_id, trial.trial_key, trial.launch)) return;
  TrialRecord running = trial;
  running.status = TrialStatus::kRunning;
  running.error.clear();
  // Committed without waiting for the disk (the WAL is synced by the trial's RecordTrial, which
  // covers this commit too): a process crash keeps it, a power loss may forget that the trial
  // was running, and the trial then simply runs again. One fsync per trial, not two
  // (bench/command-overhead).
  running.metrics.reset();
  const int synchronous = ReadSynchronous(db_);
  Exec(db_, "PRAGMA synchronous = NORMAL");
  try {
    Transaction transaction(db_);
    std::int64_t trial_id = UpsertTrial(db_, campaign_id, running, /*finished=*/false);
    DeleteLaunchMeasurements(db_, trial_id, running.launch);
    UpsertLaunch(db_, trial_id, running, /*finished=*/false);
    transaction.Commit();
  } catch (...) {
    RestoreSynchronous(db_, synchronous);
    throw;
  }
  RestoreSynchronous(db_, synchronous);
}

void CampaignWriter::SetSchedulerJob(std::int64_t campaign_id, const std::string& trial_key,
                                     const std::string& job) {
  Statement update(db_,
                   "UPDATE trials SET scheduler_job = ? WHERE campaign_id = ? AND trial_key = ?");
  update.Bind(1, job).Bind(2, campaign_id).Bind(3, trial_key).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(fmt::format("no trial {} in campaign {} of '{}' to record job {} for",
                                   trial_key, campaign_id, path_.string(), job));
  }
}

void CampaignWriter::RecordTrial(std::int64_t campaign_id, const TrialRecord& trial) {
  Transaction transaction(db_);
  std::int64_t trial_id = UpsertTrial(db_, campaign_id, trial, /*finished=*/true);
  DeleteMeasurements(db_, trial_id);
  if (trial.status != TrialStatus::kSkipped && trial.status != TrialStatus::kPending) {
    TrialRecord launch = trial;
    launch.launch = 0;
    UpsertLaunch(db_, trial_id, launch, /*finished=*/true);
  }
  InsertSamples(db_, trial_id, 0, trial.samples);
  if (trial.metrics) InsertMetrics(db_, trial_id, *trial.metrics);
  if (trial.metrics && trial.trace) InsertTrace(db_, trial_id, *trial.trace);
  if (trial.metrics && !trial.steps.empty()) InsertSteps(db_, trial_id, trial.steps);
  transaction.Commit();
}

void CampaignWriter::RecordLaunch(std::int64_t campaign_id, const TrialRecord& launch,
                                  const TrialOutcome& trial) {
  TrialRecord row = launch;
  row.status = trial.status;
  row.error = trial.error;
  Transaction transaction(db_);
  if (launch.status == TrialStatus::kInterrupted &&
      HasFinishedLaunch(db_, campaign_id, launch.trial_key, launch.launch)) {
    return;  // an interrupted rerun measured nothing: the earlier measurement stays
  }
  std::int64_t trial_id = UpsertTrial(db_, campaign_id, row, /*finished=*/true);
  DeleteLaunchMeasurements(db_, trial_id, launch.launch);
  UpsertLaunch(db_, trial_id, launch, /*finished=*/true);
  InsertSamples(db_, trial_id, launch.launch, launch.samples);
  if (trial.metrics) InsertMetrics(db_, trial_id, *trial.metrics);
  // The newest launch's profile: a trace does not vary between launches.
  if (trial.metrics && launch.trace) InsertTrace(db_, trial_id, *launch.trace);
  if (trial.metrics && !launch.steps.empty()) InsertSteps(db_, trial_id, launch.steps);
  transaction.Commit();
}

std::optional<CampaignWriter::TrialFigure> CampaignWriter::TrialExtraMetric(
    std::int64_t campaign_id, const std::string& trial_key, const std::string& name) {
  Statement query(db_, R"sql(
    SELECT t.status, t.error, v.value, CASE WHEN json_valid(t.health_json)
           THEN json_extract(t.health_json, '$.busy') END FROM trials t
    LEFT JOIN metric_values v ON v.trial_id = t.id AND v.name = ?
    WHERE t.campaign_id = ? AND t.trial_key = ?)sql");
  query.Bind(1, name).Bind(2, campaign_id).Bind(3, trial_key);
  if (!query.Step()) return std::nullopt;
  TrialFigure figure;
  figure.status = ParseStatus(query.Text(0)).value_or(TrialStatus::kFailed);
  figure.error = query.Text(1);
  figure.value = query.OptionalDouble(2);
  figure.busy = query.OptionalDouble(3).value_or(0) != 0;
  return figure;
}

std::vector<LaunchMeasurement> CampaignWriter::Launches(std::int64_t campaign_id,
                                                        const std::string& trial_key, int except) {
  Statement query(db_, R"sql(
    SELECT l.launch, l.status, l.error, l.latency_ms, l.ci_low_ms, l.ci_high_ms, l.iterations,
           l.warmup, l.peak_mem_mb, l.peak_reserved_mb, l.throttled, l.sm_clock_min_mhz,
           l.sm_clock_max_mhz, l.trial_id, l.energy_j, l.joules_per_image
    FROM launches l JOIN trials t ON t.id = l.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND l.launch != ? ORDER BY l.launch)sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, except);
  std::vector<LaunchMeasurement> launches;
  std::int64_t trial_id = 0;
  while (query.Step()) {
    LaunchMeasurement launch;
    launch.launch = static_cast<int>(query.Int(0));
    launch.status = ParseStatus(query.Text(1)).value_or(TrialStatus::kFailed);
    launch.error = query.Text(2);
    trial_id = query.Int(13);
    if (launch.status == TrialStatus::kOk && !query.IsNull(3)) {
      TrialMetrics m;
      m.latency_ms = query.Double(3);
      m.ci_low_ms = query.OptionalDouble(4).value_or(m.latency_ms);
      m.ci_high_ms = query.OptionalDouble(5).value_or(m.latency_ms);
      m.iterations = query.IsNull(6) ? 0 : static_cast<int>(query.Int(6));
      m.warmup = query.IsNull(7) ? 0 : static_cast<int>(query.Int(7));
      m.peak_mem_mb = query.OptionalDouble(8);
      m.peak_reserved_mb = query.OptionalDouble(9);
      if (!query.IsNull(10)) m.throttled = query.Int(10) != 0;
      m.sm_clock_min_mhz = query.OptionalDouble(11);
      m.sm_clock_max_mhz = query.OptionalDouble(12);
      m.energy_j = query.OptionalDouble(14);
      m.joules_per_image = query.OptionalDouble(15);
      launch.metrics = m;
    }
    launches.push_back(std::move(launch));
  }
  if (launches.empty()) return launches;
  Statement samples(db_, R"sql(
    SELECT launch, rank, iteration, ms FROM samples
    WHERE trial_id = ? AND stage = ? AND warmup = 0 AND launch != ?
    ORDER BY launch, iteration, rank)sql");
  samples.Bind(1, trial_id).Bind(2, kIterationStage).Bind(3, except);
  while (samples.Step()) {
    const int index = static_cast<int>(samples.Int(0));
    auto it = std::find_if(launches.begin(), launches.end(),
                           [&](const LaunchMeasurement& l) { return l.launch == index; });
    if (it == launches.end()) continue;
    it->samples.push_back(Sample{static_cast<int>(samples.Int(1)), static_cast<int>(samples.Int(2)),
                                 kIterationStage, samples.Double(3), false});
  }
  return launches;
}

void CampaignWriter::UpdateCampaignEnvironment(std::int64_t campaign_id,
                                               const nlohmann::json& environment) {
  // json_patch merges objects key by key (RFC 7396), in one statement: no read-modify-write.
  Statement update(db_,
                   "UPDATE campaigns SET environment_json = json_patch(environment_json, ?) "
                   "WHERE id = ?");
  update.Bind(1, environment.dump()).Bind(2, campaign_id).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(
        fmt::format("no campaign {} in '{}' to update", campaign_id, path_.string()));
  }
}

void CampaignWriter::FinishCampaign(std::int64_t campaign_id) {
  Statement update(db_, "UPDATE campaigns SET finished_at = ? WHERE id = ?");
  update.Bind(1, IsoUtc(NowUnixSeconds())).Bind(2, campaign_id).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(
        fmt::format("no campaign {} in '{}' to finish", campaign_id, path_.string()));
  }
}

void CampaignWriter::SetCampaignExcluded(std::int64_t campaign_id, bool excluded) {
  UpdateCampaign(db_, path_, campaign_id, "UPDATE campaigns SET excluded = ? WHERE id = ?",
                 [&](Statement& s) { s.Bind(1, excluded ? 1 : 0).Bind(2, campaign_id); });
}

void CampaignWriter::SetCampaignLabel(std::int64_t campaign_id, const std::string& label) {
  UpdateCampaign(db_, path_, campaign_id, "UPDATE campaigns SET label = ? WHERE id = ?",
                 [&](Statement& s) {
                   if (label.empty())
                     s.BindNull(1);
                   else
                     s.Bind(1, label);
                   s.Bind(2, campaign_id);
                 });
}

void CampaignWriter::RecordSearchReason(std::int64_t campaign_id, const std::string& trial_key,
                                        int launch, const std::string& reason) {
  Statement insert(db_, R"sql(
    INSERT INTO search_reasons (campaign_id, trial_key, launch, step, reason, recorded_at)
    VALUES (?1, ?2, ?3,
            (SELECT COALESCE(max(step) + 1, 0) FROM search_reasons WHERE campaign_id = ?1),
            ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))sql");
  insert.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch).Bind(4, reason).Run();
}

}  // namespace ditbench

#include "storage/results_db.h"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "experiments/trial_identity.h"
#include "storage/iso_time.h"
#include "storage/schema.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

double NowUnixSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Text columns that mean "none" when empty are stored as NULL.
void BindTextOrNull(Statement& statement, int index, const std::string& text) {
  if (text.empty()) {
    statement.BindNull(index);
  } else {
    statement.Bind(index, text);
  }
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
  return nlohmann::json::parse(query.Text(0), nullptr, /*allow_exceptions=*/false);
}

// Inserts or updates the trial row; returns its id (stable across updates). The canonical
// configuration is stored split: what is computed (config_json) and how it is measured
// (policy_json), as the trial key sees them.
std::int64_t UpsertTrial(sqlite3* db, std::int64_t campaign_id, const TrialRecord& trial,
                         bool finished) {
  TrialConfig config;
  try {
    config = TrialConfigFromJson(trial.config);
  } catch (const std::exception& e) {
    throw StorageError(fmt::format("trial {}: config is not a canonical trial configuration: {}",
                                   trial.trial_key, e.what()));
  }
  Statement upsert(db, R"sql(
    INSERT INTO trials (campaign_id, trial_key, config_json, status, error, world_size, device,
                        run_dir, started_at, finished_at, policy_json, coordinator_host,
                        coordinator_pid, health_json, replicates, scheduler_job,
                        placement_json)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (campaign_id, trial_key) DO UPDATE SET
      config_json = excluded.config_json, status = excluded.status, error = excluded.error,
      world_size = excluded.world_size, device = excluded.device, run_dir = excluded.run_dir,
      started_at = excluded.started_at, finished_at = excluded.finished_at,
      policy_json = excluded.policy_json, coordinator_host = excluded.coordinator_host,
      coordinator_pid = excluded.coordinator_pid, health_json = excluded.health_json,
      replicates = excluded.replicates, scheduler_job = excluded.scheduler_job,
      placement_json = excluded.placement_json
    RETURNING id)sql");
  upsert.Bind(1, campaign_id)
      .Bind(2, trial.trial_key)
      .Bind(3, ComputationJson(config).dump())
      .Bind(11, PolicyJson(config).dump())
      .Bind(4, StatusName(trial.status))
      .Bind(6, trial.world_size)
      .Bind(15, std::max(trial.replicates, 1));
  BindTextOrNull(upsert, 5, trial.error);
  BindTextOrNull(upsert, 7, trial.device);
  BindTextOrNull(upsert, 8, trial.run_dir);
  BindTextOrNull(upsert, 12, trial.coordinator_host);
  if (trial.coordinator_pid > 0) {
    upsert.Bind(13, trial.coordinator_pid);
  } else {
    upsert.BindNull(13);
  }
  // A later launch of the trial (replicates, a promoted halving trial) folds into the health
  // of the launches before it; a first launch starts afresh.
  const nlohmann::json health =
      trial.launch > 0
          ? FoldLaunchHealth(StoredHealth(db, campaign_id, trial.trial_key), trial.health)
          : trial.health;
  BindTextOrNull(upsert, 14, health.is_null() ? std::string() : health.dump());
  BindTextOrNull(upsert, 16, trial.scheduler_job);
  BindTextOrNull(upsert, 17, trial.placement.is_null() ? std::string() : trial.placement.dump());
  if (trial.started_at > 0) {
    upsert.Bind(9, IsoUtc(trial.started_at));
  } else {
    upsert.BindNull(9);
  }
  if (finished && trial.finished_at > 0) {
    upsert.Bind(10, IsoUtc(trial.finished_at));
  } else {
    upsert.BindNull(10);
  }
  if (!upsert.Step()) throw StorageError(SqliteErrorText(db, "trial upsert returned no id"));
  std::int64_t id = upsert.Int(0);
  upsert.Run();
  return id;
}

// Every launch, sample and summary of the trial.
void DeleteMeasurements(sqlite3* db, std::int64_t trial_id) {
  for (const char* sql : {"DELETE FROM samples WHERE trial_id = ?",
                          "DELETE FROM launches WHERE trial_id = ?",
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
      peak_reserved_mb, throttled, sm_clock_min_mhz, sm_clock_max_mhz)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  upsert.Bind(1, trial_id).Bind(2, launch.launch).Bind(3, StatusName(launch.status));
  BindTextOrNull(upsert, 4, launch.error);
  BindTextOrNull(upsert, 5, launch.run_dir);
  BindTextOrNull(upsert, 6, launch.started_at > 0 ? IsoUtc(launch.started_at) : "");
  BindTextOrNull(upsert, 7,
                 finished && launch.finished_at > 0 ? IsoUtc(launch.finished_at) : "");
  const std::optional<TrialMetrics>& m = launch.metrics;
  upsert.Bind(8, m ? std::optional<double>(m->latency_ms) : std::nullopt)
      .Bind(9, m ? std::optional<double>(m->ci_low_ms) : std::nullopt)
      .Bind(10, m ? std::optional<double>(m->ci_high_ms) : std::nullopt);
  if (m) {
    upsert.Bind(11, m->iterations).Bind(12, m->warmup);
  } else {
    upsert.BindNull(11).BindNull(12);
  }
  upsert.Bind(13, m ? m->peak_mem_mb : std::nullopt)
      .Bind(14, m ? m->peak_reserved_mb : std::nullopt)
      .Bind(15, m && m->throttled ? std::optional<double>(*m->throttled ? 1.0 : 0.0)
                                  : std::nullopt)
      .Bind(16, m ? m->sm_clock_min_mhz : std::nullopt)
      .Bind(17, m ? m->sm_clock_max_mhz : std::nullopt);
  upsert.Run();
}

void InsertSamples(sqlite3* db, std::int64_t trial_id, int launch,
                   const std::vector<Sample>& samples) {
  Statement insert(db,
                   "INSERT INTO samples (trial_id, rank, iteration, stage, ms, warmup, launch) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const Sample& sample : samples) {
    insert.Bind(1, trial_id)
        .Bind(2, sample.rank)
        .Bind(3, sample.iteration)
        .Bind(4, sample.stage)
        .Bind(5, sample.ms)
        .Bind(6, sample.warmup ? 1 : 0)
        .Bind(7, launch);
    insert.Run();
    insert.Reset();
  }
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

void InsertMetrics(sqlite3* db, std::int64_t trial_id, const TrialMetrics& m) {
  Statement insert(db, R"sql(
    INSERT INTO trial_metrics (trial_id, latency_ms, mean_ms, p90_ms, p99_ms, std_ms, min_ms,
      max_ms, cov, ci_low_ms, ci_high_ms, rank0_ms, skew_ms, iterations, warmup, outliers,
      peak_mem_mb, peak_reserved_mb, flops, tflops, mfu, images_per_s, tokens_per_s,
      throttled, sm_clock_min_mhz, sm_clock_max_mhz, comm_mb_per_step, output_error,
      output_error_note, output_reference_key, extra_json, launches, launch_cov)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
            ?, ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, trial_id)
      .Bind(2, m.latency_ms)
      .Bind(3, m.mean_ms)
      .Bind(4, m.p90_ms)
      .Bind(5, m.p99_ms)
      .Bind(6, m.std_ms)
      .Bind(7, m.min_ms)
      .Bind(8, m.max_ms)
      .Bind(9, m.cov)
      .Bind(10, m.ci_low_ms)
      .Bind(11, m.ci_high_ms)
      .Bind(12, m.rank0_ms)
      .Bind(13, m.skew_ms)
      .Bind(14, m.iterations)
      .Bind(15, m.warmup)
      .Bind(16, m.outliers)
      .Bind(17, m.peak_mem_mb)
      .Bind(18, m.peak_reserved_mb)
      .Bind(19, m.flops)
      .Bind(20, m.tflops)
      .Bind(21, m.mfu)
      .Bind(22, m.images_per_s)
      .Bind(23, m.tokens_per_s)
      .Bind(24, m.throttled ? std::optional<double>(*m.throttled ? 1.0 : 0.0) : std::nullopt)
      .Bind(25, m.sm_clock_min_mhz)
      .Bind(26, m.sm_clock_max_mhz)
      .Bind(27, m.comm_mb_per_step)
      .Bind(28, m.output_error)
      .Bind(29, m.output_error_note)
      .Bind(30, m.output_reference_key)
      .Bind(32, std::max(m.launches, 1))
      .Bind(33, m.launch_cov);
  if (m.extra.empty()) insert.BindNull(31);
  else insert.Bind(31, nlohmann::json(m.extra).dump());
  insert.Run();
}

// An absolute path as the path of a file: URI (RFC 3986): '%', '?' and '#' escaped.
std::string UriPath(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  std::string uri;
  for (char c : (ec ? path : absolute).string()) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri;
}

// A database in WAL mode needs its -shm file even to be read. Where the folder cannot be
// written (read-only media, a results archive mounted read-only) and no writer is running (no
// -wal file), nothing can change under us: open it immutable, which needs no -shm.
SqliteConnection OpenForReading(const std::filesystem::path& path) {
  SqliteConnection db = OpenSqlite(path.string(), SQLITE_OPEN_READONLY);
  const int rc = sqlite3_exec(db.get(), "SELECT count(*) FROM sqlite_master", nullptr, nullptr,
                              nullptr);
  if ((rc & 0xff) != SQLITE_CANTOPEN) return db;
  std::error_code ec;
  if (std::filesystem::exists(path.string() + "-wal", ec)) return db;  // a writer: report it
  const std::string uri = fmt::format("file:{}?immutable=1", UriPath(path));
  return OpenSqlite(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

}  // namespace

struct ResultsDb::BusyState {
  BusyWait wait;
  std::filesystem::path path;
  std::chrono::milliseconds waited{0};  // in the current wait
  bool reported = false;                // `waiting` called in the current wait
};

namespace {

// SQLite's busy handler: sleeps with backoff and says whether to try again. `count` is 0 at
// the first retry of each statement, which starts a new wait.
extern "C" int RetryWhileBusy(void* context, int count) {
  auto& state = *static_cast<ResultsDb::BusyState*>(context);
  if (count == 0) {
    state.waited = std::chrono::milliseconds(0);
    state.reported = false;
  }
  if (state.wait.give_up && state.wait.give_up()) return 0;
  if (!state.reported && state.waited >= state.wait.report_after) {
    state.reported = true;
    if (state.wait.waiting) state.wait.waiting(state.path);
  }
  const auto pause = std::chrono::milliseconds(1LL << std::min(count, 10));
  std::this_thread::sleep_for(pause);
  state.waited += pause;
  return 1;
}

}  // namespace

std::int64_t StoredSchemaVersion(const std::filesystem::path& path) {
  SqliteConnection raw = OpenSqlite(path.string(), SQLITE_OPEN_READONLY);
  return ReadSchemaVersion(raw.get());
}

std::unique_ptr<ResultsDb> ResultsDb::Open(const std::filesystem::path& path, bool read_only,
                                           BusyWait wait) {
  if (read_only) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw StorageError(fmt::format("no results database at '{}'", path.string()));
    }
  }
  SqliteConnection db = read_only ? OpenForReading(path)
                                  : OpenSqlite(path.string(),
                                               SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  auto busy = std::make_unique<BusyState>();
  busy->path = path;
  busy->wait = std::move(wait);
  if (read_only) {
    sqlite3_busy_timeout(db.get(), 5000);
  } else {  // a writer waits for another program's lock, with backoff (BusyWait)
    sqlite3_busy_handler(db.get(), RetryWhileBusy, busy.get());
  }
  Exec(db.get(), "PRAGMA foreign_keys = ON");
  if (read_only) {
    CheckSchemaForReading(db.get());
  } else {
    Exec(db.get(), "PRAGMA journal_mode = WAL");
    MigrateSchema(db.get());
  }
  // Before anything is run or read: a damaged schema would otherwise surface only when a
  // finished trial is written.
  CheckSchemaComplete(db.get());
  auto results = std::unique_ptr<ResultsDb>(new ResultsDb(std::move(db), path));
  results->busy_ = std::move(busy);
  return results;
}

ResultsDb::ResultsDb(SqliteConnection connection, std::filesystem::path path)
    : connection_(std::move(connection)), db_(connection_.get()), path_(std::move(path)) {}

ResultsDb::~ResultsDb() = default;  // the connection closes before the busy state goes

void ResultsDb::SetBusyWait(BusyWait wait) { busy_->wait = std::move(wait); }

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

namespace {

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

void ResultsDb::MarkRunning(std::int64_t campaign_id, const TrialRecord& trial) {
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

void ResultsDb::SetSchedulerJob(std::int64_t campaign_id, const std::string& trial_key,
                                const std::string& job) {
  Statement update(db_,
                   "UPDATE trials SET scheduler_job = ? WHERE campaign_id = ? AND trial_key = ?");
  update.Bind(1, job).Bind(2, campaign_id).Bind(3, trial_key).Run();
  if (sqlite3_changes(db_) != 1) {
    throw StorageError(fmt::format("no trial {} in campaign {} of '{}' to record job {} for",
                                   trial_key, campaign_id, path_.string(), job));
  }
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

void ResultsDb::RecordTrial(std::int64_t campaign_id, const TrialRecord& trial) {
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
  transaction.Commit();
}

void ResultsDb::RecordLaunch(std::int64_t campaign_id, const TrialRecord& launch,
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
  transaction.Commit();
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

std::vector<LaunchMeasurement> ResultsDb::Launches(std::int64_t campaign_id,
                                                   const std::string& trial_key, int except) {
  Statement query(db_, R"sql(
    SELECT l.launch, l.status, l.error, l.latency_ms, l.ci_low_ms, l.ci_high_ms, l.iterations,
           l.warmup, l.peak_mem_mb, l.peak_reserved_mb, l.throttled, l.sm_clock_min_mhz,
           l.sm_clock_max_mhz, l.trial_id
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
    it->samples.push_back(Sample{static_cast<int>(samples.Int(1)),
                                 static_cast<int>(samples.Int(2)), kIterationStage,
                                 samples.Double(3), false});
  }
  return launches;
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
           c.environment_json, {}, {}
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
        nlohmann::json::parse(query.Text(7), nullptr, /*allow_exceptions=*/false);
    if (info.record.environment.is_discarded()) info.record.environment = nlohmann::json();
    info.started_at = query.Double(8);
    info.finished_at = query.OptionalDouble(9);
    campaigns.push_back(std::move(info));
  }
  return campaigns;
}

std::vector<Sample> ResultsDb::Samples(std::int64_t campaign_id, const std::string& trial_key,
                                       int launch) {
  Statement query(db_, R"sql(
    SELECT s.rank, s.iteration, s.stage, s.ms, s.warmup
    FROM samples s JOIN trials t ON t.id = s.trial_id
    WHERE t.campaign_id = ? AND t.trial_key = ? AND s.launch = ?
    ORDER BY s.iteration, s.rank, s.stage)sql");
  query.Bind(1, campaign_id).Bind(2, trial_key).Bind(3, launch);
  std::vector<Sample> samples;
  while (query.Step()) {
    samples.push_back(Sample{static_cast<int>(query.Int(0)), static_cast<int>(query.Int(1)),
                             query.Text(2), query.Double(3), query.Int(4) != 0});
  }
  return samples;
}

}  // namespace ditbench

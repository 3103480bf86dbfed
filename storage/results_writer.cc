// ResultsDb's writer (results_db.h): a trial and its launches, samples and metrics, each
// finished launch in one transaction.
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "base/untrusted_input.h"
#include "experiments/trial_identity.h"
#include "storage/iso_time.h"
#include "storage/metric_values.h"
#include "storage/results_db.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// Text columns that mean "none" when empty are stored as NULL.
void BindTextOrNull(Statement& statement, std::string_view name, const std::string& text) {
  if (text.empty()) {
    statement.BindNull(name);
  } else {
    statement.Bind(name, text);
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
  return ParseStoredJson(query.Text(0));
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
  BindTextOrNull(upsert, ":error", trial.error);
  BindTextOrNull(upsert, ":device", trial.device);
  BindTextOrNull(upsert, ":run_dir", trial.run_dir);
  BindTextOrNull(upsert, ":coordinator_host", trial.coordinator_host);
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
  BindTextOrNull(upsert, ":health_json", health.is_null() ? std::string() : health.dump());
  BindTextOrNull(upsert, ":scheduler_job", trial.scheduler_job);
  BindTextOrNull(upsert, ":placement_json",
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
      peak_reserved_mb, throttled, sm_clock_min_mhz, sm_clock_max_mhz, energy_j,
      joules_per_image)
    VALUES (:trial_id, :launch, :status, :error, :run_dir, :started_at, :finished_at,
      :latency_ms, :ci_low_ms, :ci_high_ms, :iterations, :warmup, :peak_mem_mb,
      :peak_reserved_mb, :throttled, :sm_clock_min_mhz, :sm_clock_max_mhz, :energy_j,
      :joules_per_image))sql");
  upsert.Bind(":trial_id", trial_id)
      .Bind(":launch", launch.launch)
      .Bind(":status", StatusName(launch.status));
  BindTextOrNull(upsert, ":error", launch.error);
  BindTextOrNull(upsert, ":run_dir", launch.run_dir);
  BindTextOrNull(upsert, ":started_at", launch.started_at > 0 ? IsoUtc(launch.started_at) : "");
  BindTextOrNull(upsert, ":finished_at",
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
      .Bind(":throttled", m && m->throttled ? std::optional<double>(*m->throttled ? 1.0 : 0.0)
                                  : std::nullopt)
      .Bind(":sm_clock_min_mhz", m ? m->sm_clock_min_mhz : std::nullopt)
      .Bind(":sm_clock_max_mhz", m ? m->sm_clock_max_mhz : std::nullopt)
      .Bind(":energy_j", m ? m->energy_j : std::nullopt)
      .Bind(":joules_per_image", m ? m->joules_per_image : std::nullopt);
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
      output_error_note, output_reference_key, extra_json, launches, launch_cov, psnr, ssim,
      energy_j, joules_per_image, energy_note, quality)
    VALUES (:trial_id, :latency_ms, :mean_ms, :p90_ms, :p99_ms, :std_ms, :min_ms,
      :max_ms, :cov, :ci_low_ms, :ci_high_ms, :rank0_ms, :skew_ms, :iterations, :warmup, :outliers,
      :peak_mem_mb, :peak_reserved_mb, :flops, :tflops, :mfu, :images_per_s, :tokens_per_s,
      :throttled, :sm_clock_min_mhz, :sm_clock_max_mhz, :comm_mb_per_step, :output_error,
      :output_error_note, :output_reference_key, :extra_json, :launches, :launch_cov, :psnr,
      :ssim, :energy_j, :joules_per_image, :energy_note, :quality))sql");
  insert.Bind(":trial_id", trial_id)
      .Bind(":latency_ms", m.latency_ms)
      .Bind(":mean_ms", m.mean_ms)
      .Bind(":p90_ms", m.p90_ms)
      .Bind(":p99_ms", m.p99_ms)
      .Bind(":std_ms", m.std_ms)
      .Bind(":min_ms", m.min_ms)
      .Bind(":max_ms", m.max_ms)
      .Bind(":cov", m.cov)
      .Bind(":ci_low_ms", m.ci_low_ms)
      .Bind(":ci_high_ms", m.ci_high_ms)
      .Bind(":rank0_ms", m.rank0_ms)
      .Bind(":skew_ms", m.skew_ms)
      .Bind(":iterations", m.iterations)
      .Bind(":warmup", m.warmup)
      .Bind(":outliers", m.outliers)
      .Bind(":peak_mem_mb", m.peak_mem_mb)
      .Bind(":peak_reserved_mb", m.peak_reserved_mb)
      .Bind(":flops", m.flops)
      .Bind(":tflops", m.tflops)
      .Bind(":mfu", m.mfu)
      .Bind(":images_per_s", m.images_per_s)
      .Bind(":tokens_per_s", m.tokens_per_s)
      .Bind(":throttled",
            m.throttled ? std::optional<double>(*m.throttled ? 1.0 : 0.0) : std::nullopt)
      .Bind(":sm_clock_min_mhz", m.sm_clock_min_mhz)
      .Bind(":sm_clock_max_mhz", m.sm_clock_max_mhz)
      .Bind(":comm_mb_per_step", m.comm_mb_per_step)
      .Bind(":output_error", m.output_error)
      .Bind(":output_error_note", m.output_error_note)
      .Bind(":output_reference_key", m.output_reference_key)
      .Bind(":launches", std::max(m.launches, 1))
      .Bind(":launch_cov", m.launch_cov)
      .Bind(":psnr", m.psnr)
      .Bind(":ssim", m.ssim)
      .Bind(":energy_j", m.energy_j)
      .Bind(":joules_per_image", m.joules_per_image);
  BindTextOrNull(insert, ":energy_note", m.energy_note);
  BindTextOrNull(insert, ":quality", m.quality.value_or(""));
  if (m.extra.empty()) insert.BindNull(":extra_json");
  else insert.Bind(":extra_json", nlohmann::json(m.extra).dump());
  insert.Run();
  WriteMetricValues(db, trial_id, m);
}

// A trial's profiles (`profile: trace`) beside its metrics: every rank's as JSON, and the
// slowest rank's shares of its step time.
void InsertTrace(sqlite3* db, std::int64_t trial_id, const TrialTrace& trace) {
  Statement update(db, R"sql(
    UPDATE trial_metrics SET profile_json = :profile_json, compute_share = :compute_share,
      comm_share = :comm_share, idle_share = :idle_share WHERE trial_id = :trial_id)sql");
  const RankTrace* slowest = trace.Slowest();
  const auto share = [&](double (TraceProfile::*of)() const) {
    return slowest ? std::optional<double>(((*slowest->profile).*of)()) : std::nullopt;
  };
  update.Bind(":profile_json", TrialTraceJson(trace).dump())
      .Bind(":compute_share", share(&TraceProfile::compute_share))
      .Bind(":comm_share", share(&TraceProfile::comm_share))
      .Bind(":idle_share", share(&TraceProfile::idle_share))
      .Bind(":trial_id", trial_id);
  update.Run();
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
  if (trial.metrics && trial.trace) InsertTrace(db_, trial_id, *trial.trace);
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
  // The newest launch's profile: a trace does not vary between launches.
  if (trial.metrics && launch.trace) InsertTrace(db_, trial_id, *launch.trace);
  transaction.Commit();
}

}  // namespace ditbench

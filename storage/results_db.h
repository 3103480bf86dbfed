// ResultsDb: the SQLite results database (schema in storage/schema.cc, docs/architecture.md).
//
// WAL mode, foreign keys on, a busy timeout, and a schema_version table with forward
// migrations: a database newer than this build is refused with a clear message rather than
// misread. Every finished trial is committed in its own transaction, so a coordinator killed
// at any instant loses at most the trial in flight.
//
// Errors: every method throws StorageError (one line: what failed, the path, SQLite's message).
// Thread-safety: one ResultsDb per thread; SQLite itself serialises writers across processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/quality_gate.h"
#include "experiments/workload.h"
#include "model_zoo/shapes/parallel_degrees.h"

#include "metrics/launch_summary.h"
#include "metrics/metric_table.h"
#include "storage/records.h"
#include "storage/results_query.h"
#include "storage/schema.h"
#include "storage/sqlite_connection.h"
#include "storage/storage_error.h"

struct sqlite3;

namespace ditbench {

// One row of the `results` view, typed: what the report reads. Unset optionals are NULL.
// The parallel degrees are the ParallelDegrees base (model_zoo/shapes/parallel_degrees.h), read from
// the view's column of each degree's name; `world_size` is the stored column.
struct ResultRow : ParallelDegrees {
  std::int64_t campaign = 0;
  std::string sweep, trial_key, status, model, precision, scope, device, build, error;
  std::string model_overrides;  // the model object as JSON when dimensions are overridden
  // The image's width and height in pixels (the view's width and height; equal for a square,
  // whose `resolution` is that number) and a video's frames (0: an image).
  std::int64_t resolution = 0, batch = 0, steps = 0;
  std::int64_t height = 0, frames = 0;
  std::int64_t world_size = 0;
  std::optional<double> latency_ms, ci_low_ms, ci_high_ms, cov, skew_ms, rank0_ms;
  std::optional<double> peak_mem_mb, tflops, mfu;
  std::optional<std::int64_t> iterations;
  bool throttled = false;  // the GPU slowed down during the timed part (NVML)
  bool profile_blocks = false;  // every transformer block was timed too (measurement policy)
  std::optional<double> output_error;      // rel L2 against the 1-rank trial (runner/output_error.h)
  std::optional<double> psnr, ssim;        // scope pipeline: the decoded image against the same
                                           // reference (metrics/image_quality.h)
  // The verdict of the trial's quality gates (experiments/quality_gate.h): "ok", "below: psnr 30.1
  // < 35", or empty (no gate, or not known yet). below_quality() reads it.
  std::string quality;
  // `profile: trace`: every rank's profile, and the slowest rank's shares of its step time.
  std::optional<TrialTrace> profile;
  std::optional<double> compute_share, comm_share, idle_share;
  std::string run_dir;  // the trial's run folder (where its traces are)
  std::optional<double> comm_mb_per_step;  // MiB a rank sent per step, max over ranks
  // Energy (GPU, NVML): joules per timed iteration over every rank, per image, and why a GPU
  // trial has none (TrialMetrics::energy_note).
  std::optional<double> energy_j, joules_per_image;
  std::string energy_note;
  bool busy = false;        // other work ran on the machine during the trial (machine health)
  std::string health_note;  // what was busy: "load 3.10 on 2 cores; others used ..."
  std::int64_t concurrent_trials = 0;  // other trials in flight beside it (--policy pack)
  Workload workload = Workload::kDit;  // parsed from the stored name (experiments/workload.h)
  std::string axes;      // a command's custom axes as a JSON object ("{}" when none)
  // Replicates: launches the sweep asked for, ok launches summarised (0: no metrics), and the
  // CoV of their medians. With launches > 1 the CI covers between-launch variation.
  std::int64_t replicates = 1, launches = 0;
  std::optional<double> launch_cov;
  std::int64_t seed = 0, pipefusion_patches = 0, pipefusion_warmup_steps = 1;
  // Extra metrics by name (metrics/metric_table.h; storage: metric_values): a command's own
  // numbers and built-in metrics without a column, each with how to show it.
  std::map<std::string, ExtraMetric> extra_metrics;
  // The trial's computation as stored (trials.config_json, experiments/trial_identity.h):
  // every field, including those the view has no column for (vae_tile). Read by Results().
  std::string computation;
  // Set by the report when it folds trials that differ only in seed into one row
  // (analysis/seed_folding.h): how many, and the range of their medians.
  std::int64_t folded = 1;
  std::optional<double> folded_min_ms, folded_max_ms;

  bool measured() const { return status == "ok" && latency_ms.has_value(); }
  bool below_quality() const { return IsBelowQuality(quality); }
  // "1024px" for a square, "1280x720px" otherwise, then " 81 frames" for a video.
  std::string resolution_label() const;
};

// An ok trial whose output error waits for its 1-rank reference.
struct AwaitingReference {
  std::int64_t trial_id = 0;
  std::string run_dir;
  QualityGate quality;  // its gates (the policy's "quality"); empty: none
};

// A campaign as stored (for reports and comparisons).
struct CampaignInfo {
  std::int64_t id = 0;
  CampaignRecord record;               // record.sweep_name names its sweep
  double started_at = 0;               // unix seconds (stored as ISO 8601: storage/iso_time.h)
  std::optional<double> finished_at;   // unset while unfinished
  // Set aside by `ditbench campaigns --exclude`: left out of history, learned noise floors
  // and reports, its rows kept (schema version 11).
  bool excluded = false;
  std::string label;                   // `ditbench campaigns --label`; empty when none
  std::int64_t trials = 0;             // trials recorded in it, whatever their status
};

// How a writable ResultsDb waits for a lock that another program holds (a write transaction
// from the sqlite3 shell or pandas): it retries with backoff (1 ms doubling to 1 s) for as long
// as `give_up` says no, so a finished trial is recorded once the lock is released rather than
// lost. `waiting` is called once per wait that lasts `report_after`, with the database's path.
// Without a BusyWait a writable database waits the same way, silently and without end.
struct BusyWait {
  std::function<void(const std::filesystem::path& db)> waiting;
  std::function<bool()> give_up;  // true: stop waiting (the statement fails "database is locked")
  std::chrono::milliseconds report_after{1000};
};

// The schema version stored in the database at `path`, read without migrating or checking
// anything else (`ditbench migrate` says from which version it brought a database). Throws
// StorageError when `path` is not a database.
std::int64_t StoredSchemaVersion(const std::filesystem::path& path);

class ResultsDb {
 public:
  // Opens or creates the database at `path`. `read_only` never creates or migrates. A writer
  // waits for another program's lock as `wait` says, from the first statement on (migration
  // included); SetBusyWait changes it later.
  static std::unique_ptr<ResultsDb> Open(const std::filesystem::path& path,
                                         bool read_only = false, BusyWait wait = {});
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;
  ~ResultsDb();

  struct BusyState;  // the busy handler's context (results_db.cc)

  // The path the database was opened at, as given to Open.
  const std::filesystem::path& path() const { return path_; }

  // Replaces how this connection waits for another program's lock (see BusyWait).
  // REQUIRES: opened for writing.
  void SetBusyWait(BusyWait wait);

  // The newest campaign of `campaign.sweep_name` (resumed), or a new one when none exists or
  // `fresh` is set. Returns its id.
  std::int64_t ResumeOrCreateCampaign(const CampaignRecord& campaign, bool fresh);

  // Status of every trial recorded in the campaign, by trial key.
  std::map<std::string, TrialStatus> TrialStatuses(std::int64_t campaign_id);

  // Trials left `running` by a coordinator that `gone(host, pid)` says is gone become
  // `interrupted` (a trial with no recorded coordinator counts as gone). Returns how many;
  // trials of a live coordinator stay `running` and are listed in `still_running` by key.
  // Trials whose key is in `taken_over` stay `running` whoever ran them (this coordinator
  // watches their scheduler jobs again) and are not listed.
  using CoordinatorIsGone = std::function<bool(const std::string& host, std::int64_t pid)>;
  int MarkRunningAsInterrupted(std::int64_t campaign_id, const CoordinatorIsGone& gone,
                               std::vector<std::string>* still_running = nullptr,
                               const std::set<std::string>& taken_over = {});

  // Status of every recorded launch of every trial of the campaign: key -> launch -> status.
  std::map<std::string, std::map<int, TrialStatus>> LaunchStatuses(std::int64_t campaign_id);

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

  // Merges `environment` into the campaign's environment (top-level keys replaced).
  void UpdateCampaignEnvironment(std::int64_t campaign_id, const nlohmann::json& environment);

  // Stamps the campaign's finish time.
  void FinishCampaign(std::int64_t campaign_id);

  // Every campaign, oldest first, excluded ones included (CampaignInfo::excluded).
  std::vector<CampaignInfo> Campaigns();

  // Sets a campaign aside or takes it back (`ditbench campaigns --exclude/--include`), and
  // names it (an empty label clears it). Throws StorageError naming the known campaigns when
  // there is no campaign `id`.
  void SetCampaignExcluded(std::int64_t campaign_id, bool excluded);
  void SetCampaignLabel(std::int64_t campaign_id, const std::string& label);

  // The samples of one launch of the trial ordered by iteration, rank, stage; empty when the
  // trial or launch is unknown.
  std::vector<Sample> Samples(std::int64_t campaign_id, const std::string& trial_key,
                              int launch = 0);

  // Timed (non-warm-up) samples of `stage` of every ok launch of every trial of the campaign,
  // by trial key, one vector per launch in launch order, each ordered by iteration and rank:
  // one query for a whole campaign (compare, report).
  std::map<std::string, std::vector<std::vector<Sample>>> TimedSamples(std::int64_t campaign_id,
                                                                       const std::string& stage);

  // The slowest-rank series of `stage` (per timed iteration in order, the maximum over ranks:
  // SlowestSeries of metrics/trial_metrics.h) of every ok launch of every ok trial of the
  // campaign, by trial key, one series per launch in launch order. Storage only reads: each
  // launch's samples go to SlowestSeries, the one definition of the reduction. What `compare`
  // needs, without TimedSamples' per-trial copies.
  std::map<std::string, std::vector<std::vector<double>>> SlowestSeriesByLaunch(
      std::int64_t campaign_id, const std::string& stage);

  // Rows of the `results` view of the given campaigns, ordered by campaign and trial key.
  std::vector<ResultRow> Results(const std::vector<std::int64_t>& campaign_ids);

  // Output error (runner/output_error.h): the run folder of the newest ok trial of
  // `trial_key` in any campaign; the ok trials whose reference is `reference_key` and whose
  // error is still unknown; and setting a trial's error (null, with the reason, when none).
  std::optional<std::string> NewestOkRunDir(const std::string& trial_key);
  std::vector<AwaitingReference> TrialsAwaitingReference(const std::string& reference_key);
  void SetOutputError(std::int64_t trial_id, std::optional<double> error, const std::string& note);
  // Scope pipeline: the decoded image's PSNR and SSIM against the reference's (null: unknown).
  void SetOutputQuality(std::int64_t trial_id, std::optional<double> psnr,
                        std::optional<double> ssim);
  // The verdict of the trial's quality gates (experiments/quality_gate.h; unset: none).
  void SetQualityVerdict(std::int64_t trial_id, const std::optional<std::string>& verdict);

  // What the newest ok result of each trial key measured (for `plan`'s estimates), any device.
  struct Measurement {
    double latency_ms = 0;
    std::optional<double> peak_mem_mb;  // per rank, max over ranks
    // The trial's wall time less its warm-up and timed iterations at the median: process
    // start, model build, rendezvous. Unset when the trial's times were not recorded.
    std::optional<double> startup_s;
  };
  // Every key's in one read: the planner asks for each trial of a sweep, and a query per key
  // scans the trials table (no index on the key alone) once per key.
  std::unordered_map<std::string, Measurement> NewestOkMeasurements();

  // The planner's observations (plan/cost_model.h): the newest ok measurement of every trial
  // key run on `device` (trials.device; every device when empty) on a machine that stayed
  // idle (busy trials left out), with its configuration as stored.
  struct ObservedTrial {
    std::string trial_key;
    nlohmann::json config;  // CanonicalJson: the computation and the measurement policy
    double latency_ms = 0;
    std::optional<double> comm_mb_per_step;
    // The trial's wall time less its warm-up and timed iterations at the median (as
    // Measurement::startup_s).
    std::optional<double> startup_s;
    std::optional<double> output_error;
    std::optional<double> psnr, ssim;  // scope pipeline: the decoded image's
    std::int64_t campaign = 0;
    // Where it ran, for the sharing factor of its ranks (machine/rank_sharing.h):
    // trials.placement_json (null when not recorded), and the cores of the host of its CPU
    // ranks (the campaign environment's worker cpu_count, else the coordinator's; nullopt for
    // a GPU trial or when not recorded).
    nlohmann::json placement;
    std::optional<int> cpu_cores;
  };
  // Measurements on a busy machine are left out; `busy_only`, when given, counts the keys
  // that have no other.
  std::vector<ObservedTrial> ObservedTrials(const std::string& device,
                                            std::size_t* busy_only = nullptr);

  // A fit of the planner's cost model (schema version 12, table model_fits).
  struct ModelFitRecord {
    std::string device;
    double fitted_at = 0;  // unix seconds
    std::int64_t trials = 0;
    std::optional<double> median_abs_error, max_abs_error;  // leave-one-out, fractions
    nlohmann::json terms = nlohmann::json::array();
    // [{"trial_key", "measured_ms", "predicted_ms", "low_ms", "high_ms"}, ...]
    nlohmann::json predictions = nlohmann::json::array();
  };
  void RecordModelFit(const ModelFitRecord& fit);
  // The newest fit for `device` (any device when empty).
  std::optional<ModelFitRecord> NewestModelFit(const std::string& device);

  // Why `run --search advise` ran a launch (table search_reasons), in the order it chose.
  struct SearchReason {
    std::string trial_key;
    int launch = 0;
    std::int64_t step = 0;
    std::string reason;
  };
  void RecordSearchReason(std::int64_t campaign_id, const std::string& trial_key, int launch,
                          const std::string& reason);
  std::vector<SearchReason> SearchReasons(std::int64_t campaign_id);

  // `ditbench query` (storage/results_query.h): the view's columns in order, the rows
  // matching a query, or one read-only statement as written. QueryError for a mistake in the
  // query.
  std::vector<std::string> ResultsColumns();
  ResultTable QueryResults(const ResultsQuery& query);
  ResultTable RunReadOnlySql(const std::string& sql);
  // One read-only statement as written, its rows handed to `sink` as they come, within
  // `limits` (QueryError when it runs past them).
  void StreamReadOnlySql(const std::string& sql, const SqlLimits& limits, ResultSink& sink);

 private:
  ResultsDb(SqliteConnection connection, std::filesystem::path path);
  std::unique_ptr<BusyState> busy_;  // declared before the connection: outlives it
  SqliteConnection connection_;
  sqlite3* db_;  // connection_.get(), borrowed for brevity in the SQL calls
  std::filesystem::path path_;
};

}  // namespace ditbench

#include "storage/schema.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <sqlite3.h>

#include "storage/iso_time.h"
#include "storage/key_migration.h"
#include "storage/results_view.h"
#include "storage/statement.h"

namespace ditbench {
namespace {

// Schema version 1. Times are unix seconds (REAL; ISO 8601 text from version 10 on);
// config_json is the trial's canonical JSON.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at REAL NOT NULL
);
CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY,
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  spec_hash TEXT NOT NULL,
  spec_text TEXT NOT NULL,
  sweep_path TEXT NOT NULL,
  build TEXT NOT NULL,
  host TEXT NOT NULL,
  environment_json TEXT NOT NULL DEFAULT '{}',
  started_at REAL NOT NULL,
  finished_at REAL
);
CREATE INDEX campaigns_by_sweep ON campaigns(sweep_id);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  trial_key TEXT NOT NULL,
  config_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ok', 'skipped', 'oom',
                                         'timeout', 'crashed', 'failed', 'interrupted')),
  error TEXT,
  world_size INTEGER NOT NULL,
  device TEXT,
  run_dir TEXT,
  started_at REAL,
  finished_at REAL,
  UNIQUE (campaign_id, trial_key)
);
CREATE TABLE samples (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL CHECK (rank >= 0),
  iteration INTEGER NOT NULL CHECK (iteration >= 0),
  stage TEXT NOT NULL,
  ms REAL NOT NULL,
  warmup INTEGER NOT NULL CHECK (warmup IN (0, 1))
);
CREATE INDEX samples_by_trial ON samples(trial_id);
CREATE TABLE trial_metrics (
  trial_id INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
  latency_ms REAL, mean_ms REAL, p90_ms REAL, p99_ms REAL, std_ms REAL,
  min_ms REAL, max_ms REAL, cov REAL, ci_low_ms REAL, ci_high_ms REAL,
  rank0_ms REAL, skew_ms REAL,
  iterations INTEGER NOT NULL, warmup INTEGER NOT NULL, outliers INTEGER NOT NULL,
  peak_mem_mb REAL, peak_reserved_mb REAL, flops REAL, tflops REAL, mfu REAL,
  images_per_s REAL, tokens_per_s REAL,
  throttled INTEGER, sm_clock_min_mhz REAL, sm_clock_max_mhz REAL
);
)sql";

// Schema version 2: key format v2 (storage/key_migration.h). The measurement policy moves
// beside the key; trials that no longer differ are listed in superseded_trials.
constexpr const char* kSchemaV2 = R"sql(
DROP VIEW results;
ALTER TABLE trials ADD COLUMN policy_json TEXT NOT NULL DEFAULT '{}';
CREATE TABLE superseded_trials (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  trial_key TEXT NOT NULL,
  kept_trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  old_trial_key TEXT NOT NULL,
  config_json TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  finished_at REAL,
  latency_ms REAL
);
)sql";

// Schema version 3: communication volume and output error per trial (ring, USP, PipeFusion).
constexpr const char* kSchemaV3 = R"sql(
DROP VIEW results;
ALTER TABLE trial_metrics ADD COLUMN comm_mb_per_step REAL;
ALTER TABLE trial_metrics ADD COLUMN output_error REAL;
ALTER TABLE trial_metrics ADD COLUMN output_error_note TEXT;
ALTER TABLE trial_metrics ADD COLUMN output_reference_key TEXT;
CREATE INDEX trial_metrics_by_reference ON trial_metrics(output_reference_key);
)sql";

// Schema version 4: who is running a trial
// (the coordinator's host and pid, so that resume marks `interrupted` only a dead
// coordinator's trials) and the machine's health at trial start and end. The `results` view is
// not touched.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE trials ADD COLUMN coordinator_host TEXT;
ALTER TABLE trials ADD COLUMN coordinator_pid INTEGER;
ALTER TABLE trials ADD COLUMN health_json TEXT;
)sql";

void MigrateToV4(sqlite3* db) { Exec(db, kSchemaV4); }

// Schema version 5: the machine's health reaches the `results` view: `busy` (1 when other
// work ran on the machine during the trial, 0 when it was idle, NULL when not sampled) and
// `health_note` (what was busy). No table changes.
void MigrateToV5(sqlite3* db) {
  Exec(db, "DROP VIEW results");
  Exec(db, ResultsView(5).c_str());
}

// Schema version 6: the `command` workload. A command trial's program (config_json.command)
// and custom axes (config_json.custom) live in its configuration; its own extra numbers go to
// trial_metrics.extra_json. The `results` view gains, at its end, `axes` (a JSON object, '{}'
// for built-in trials, usable as json_extract(axes, '$.name') and by `query --where
// name=value`), `command` (a JSON list, NULL for built-in trials) and `metrics` (the extra
// numbers as a JSON object, or NULL).
void MigrateToV6(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, "ALTER TABLE trial_metrics ADD COLUMN extra_json TEXT;");
  Exec(db, ResultsView(6).c_str());
}

// Schema version 7: replicates. A trial of a campaign may be launched several times (sweep
// field `replicates`); each launch has a row in `launches` (its status, run folder, times and
// its own median) and its samples carry its index. trial_metrics summarises the ok launches
// (how many: `launches`; the spread of their medians: `launch_cov`); trials.replicates is the
// number of launches the sweep asked for. Every trial already recorded (other than skipped or
// pending) becomes launch 0 of itself. The view gains seed, replicates, launches, launch_cov
// and ci_scope ('iterations': the CI is within one launch; 'launches': between launches).
constexpr const char* kSchemaV7 = R"sql(
DROP VIEW results;
ALTER TABLE samples ADD COLUMN launch INTEGER NOT NULL DEFAULT 0 CHECK (launch >= 0);
ALTER TABLE trials ADD COLUMN replicates INTEGER NOT NULL DEFAULT 1;
ALTER TABLE trial_metrics ADD COLUMN launches INTEGER NOT NULL DEFAULT 1;
ALTER TABLE trial_metrics ADD COLUMN launch_cov REAL;
CREATE TABLE launches (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  launch INTEGER NOT NULL CHECK (launch >= 0),
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ok', 'skipped', 'oom',
                                         'timeout', 'crashed', 'failed', 'interrupted')),
  error TEXT,
  run_dir TEXT,
  started_at REAL,
  finished_at REAL,
  latency_ms REAL, ci_low_ms REAL, ci_high_ms REAL,
  iterations INTEGER, warmup INTEGER,
  peak_mem_mb REAL, peak_reserved_mb REAL,
  throttled INTEGER, sm_clock_min_mhz REAL, sm_clock_max_mhz REAL,
  PRIMARY KEY (trial_id, launch)
);
INSERT INTO launches (trial_id, launch, status, error, run_dir, started_at, finished_at,
                      latency_ms, ci_low_ms, ci_high_ms, iterations, warmup, peak_mem_mb,
                      peak_reserved_mb, throttled, sm_clock_min_mhz, sm_clock_max_mhz)
SELECT t.id, 0, t.status, t.error, t.run_dir, t.started_at, t.finished_at, m.latency_ms,
       m.ci_low_ms, m.ci_high_ms, m.iterations, m.warmup, m.peak_mem_mb, m.peak_reserved_mb,
       m.throttled, m.sm_clock_min_mhz, m.sm_clock_max_mhz
FROM trials t LEFT JOIN trial_metrics m ON m.trial_id = t.id
WHERE t.status NOT IN ('skipped', 'pending');
)sql";

void MigrateToV7(sqlite3* db) {
  Exec(db, kSchemaV7);
  Exec(db, ResultsView(7).c_str());
}

// Schema version 8: the batch scheduler's job of a trial (a Slurm job id), recorded while it
// runs so that a restarted coordinator can ask the scheduler about it, and kept once it ended.
// The `results` view is not touched.
void MigrateToV8(sqlite3* db) { Exec(db, "ALTER TABLE trials ADD COLUMN scheduler_job TEXT;"); }

void MigrateToV1(sqlite3* db) {
  Exec(db, kSchemaV1);
  Exec(db, ResultsView(1).c_str());
}

void MigrateToV2(sqlite3* db) {
  Exec(db, kSchemaV2);
  RekeyTrialsToV2(db);
  Exec(db, ResultsView(2).c_str());
}

void MigrateToV3(sqlite3* db) {
  Exec(db, kSchemaV3);
  Exec(db, ResultsView(3).c_str());
}

// Schema version 9: where each trial ran. trials.placement_json holds its slots (GPU positions
// or CPU slots), its devices on GPU and `concurrent_trials`, the other trials in flight beside
// it (--policy pack); the view gains concurrent_trials and placement.
void MigrateToV9(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, "ALTER TABLE trials ADD COLUMN placement_json TEXT;");
  Exec(db, ResultsView(9).c_str());
}

// Schema version 10: every time column holds ISO 8601 UTC text with milliseconds
// ("2026-11-22T16:41:47.154Z", storage/iso_time.h) instead of unix seconds (REAL), converted
// in place. SQLite cannot change a column's type, so each becomes a new TEXT column (checked
// against the format; NULL stays NULL) that takes the old one's name and place in every
// query. The view's started_at and finished_at read the same as before.
void MigrateToV10(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  const std::pair<const char*, const char*> columns[] = {
      {"sweeps", "created_at"},       {"campaigns", "started_at"},
      {"campaigns", "finished_at"},   {"trials", "started_at"},
      {"trials", "finished_at"},      {"launches", "started_at"},
      {"launches", "finished_at"},    {"superseded_trials", "finished_at"}};
  for (const auto& [table, column] : columns) {
    const std::string steps = fmt::format(
        "ALTER TABLE {0} ADD COLUMN {1}_iso TEXT CHECK ({1}_iso IS NULL OR {1}_iso GLOB '{2}');"
        "UPDATE {0} SET {1}_iso = strftime('%Y-%m-%dT%H:%M:%fZ', {1}, 'unixepoch') "
        "WHERE {1} IS NOT NULL;"
        "ALTER TABLE {0} DROP COLUMN {1};"
        "ALTER TABLE {0} RENAME COLUMN {1}_iso TO {1};",
        table, column, kIsoUtcGlob);
    Exec(db, steps.c_str());
  }
  Exec(db, ResultsView(10).c_str());
}

// Schema version 11: campaigns a user set aside or named (`ditbench campaigns`):
// campaigns.excluded (1: left out of history, learned noise floors and reports; its rows are
// kept) and campaigns.label (free text, NULL when none). The view is unchanged.
void MigrateToV11(sqlite3* db) {
  Exec(db,
       "ALTER TABLE campaigns ADD COLUMN excluded INTEGER NOT NULL DEFAULT 0 "
       "CHECK (excluded IN (0, 1));"
       "ALTER TABLE campaigns ADD COLUMN label TEXT;");
}

// Schema version 12: the planner's cost model (plan/cost_model.h). `model_fits` keeps each fit
// of one device kind's trials: how many, the leave-one-out errors (fractions), the fitted terms
// and every trial's leave-one-out prediction against its measurement, as JSON. `search_reasons`
// keeps why `run --search advise` ran each launch, in the order it chose them.
constexpr const char* kSchemaV12 = R"sql(
CREATE TABLE model_fits (
  id INTEGER PRIMARY KEY,
  device TEXT NOT NULL,
  fitted_at TEXT NOT NULL,
  trials INTEGER NOT NULL CHECK (trials >= 0),
  median_abs_error REAL,
  max_abs_error REAL,
  terms_json TEXT NOT NULL DEFAULT '[]',
  predictions_json TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX model_fits_by_device ON model_fits(device, id);
CREATE TABLE search_reasons (
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  trial_key TEXT NOT NULL,
  launch INTEGER NOT NULL CHECK (launch >= 0),
  step INTEGER NOT NULL CHECK (step >= 0),
  reason TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (campaign_id, step)
);
)sql";

void MigrateToV12(sqlite3* db) { Exec(db, kSchemaV12); }

// Schema version 13: the view gains vae_tile (0: the decode is not tiled) and graph (eager or
// cuda_graph), from each trial's configuration, so that sweeps over them read apart in `query`.
void MigrateToV13(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, ResultsView(13).c_str());
}

// Schema version 14: video and non-square images. The view gains width and height (pixels; a
// `resolution` stored as "WIDTHxHEIGHT" text is split, a number is both: SQLite casts text by
// its leading digits) and frames (NULL for an image). No table changes.
void MigrateToV14(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, ResultsView(14).c_str());
}

// Schema version 15: profiles (`profile: trace`: each rank's profile as JSON, the slowest
// rank's shares of its step time) and output quality (scope pipeline: PSNR, SSIM).
void MigrateToV15(sqlite3* db) {
  Exec(db, R"sql(
DROP VIEW results;
ALTER TABLE trial_metrics ADD COLUMN psnr REAL;
ALTER TABLE trial_metrics ADD COLUMN ssim REAL;
ALTER TABLE trial_metrics ADD COLUMN compute_share REAL;
ALTER TABLE trial_metrics ADD COLUMN comm_share REAL;
ALTER TABLE trial_metrics ADD COLUMN idle_share REAL;
ALTER TABLE trial_metrics ADD COLUMN profile_json TEXT;
)sql");
  Exec(db, ResultsView(15).c_str());
}

// Schema version 16: energy per image (GPU, NVML's counter over the timed iterations of every
// rank): trial_metrics.energy_j (joules per timed iteration, summed over ranks),
// joules_per_image and energy_note (why a GPU trial has none); each launch keeps its own
// energy_j and joules_per_image, so that replicates summarise them. The view gains energy_j,
// joules_per_image and energy_note.
void MigrateToV16(sqlite3* db) {
  Exec(db, R"sql(
DROP VIEW results;
ALTER TABLE trial_metrics ADD COLUMN energy_j REAL;
ALTER TABLE trial_metrics ADD COLUMN joules_per_image REAL;
ALTER TABLE trial_metrics ADD COLUMN energy_note TEXT;
ALTER TABLE launches ADD COLUMN energy_j REAL;
ALTER TABLE launches ADD COLUMN joules_per_image REAL;
)sql");
  Exec(db, ResultsView(16).c_str());
}

// Schema version 17: quality gates (`quality: {...}`, experiments/quality_gate.h). A trial's
// verdict (trial_metrics.quality: "ok", "below: psnr 30.1 < 35", NULL: no gate or not known yet);
// the view gains quality and quality_ok (1 ok, 0 below, NULL).
void MigrateToV17(sqlite3* db) {
  Exec(db, R"sql(
DROP VIEW results;
ALTER TABLE trial_metrics ADD COLUMN quality TEXT;
)sql");
  Exec(db, ResultsView(17).c_str());
}

// Schema version 18: the metric table (metrics/metric_table.h). A trial's extra metrics (a
// command's own numbers, and built-in metrics without a column of their own) are rows of the
// narrow table metric_values: one per name, with the unit and better direction the program
// declared (NULL when none); they go with the trial's summary (trial_metrics) they belong to.
// trial_metrics.extra_note says what was dropped (an invalid name, too many). Numbers kept in
// extra_json by older versions are copied over where their names are valid; extra_json and
// the view are unchanged.
void MigrateToV18(sqlite3* db) {
  Exec(db, R"sql(
CREATE TABLE metric_values (
  trial_id INTEGER NOT NULL REFERENCES trial_metrics(trial_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT,
  better TEXT CHECK (better IN ('lower', 'higher')),
  PRIMARY KEY (trial_id, name)
);
ALTER TABLE trial_metrics ADD COLUMN extra_note TEXT;
INSERT INTO metric_values (trial_id, name, value)
  SELECT m.trial_id, j.key, j.value FROM trial_metrics m, json_each(m.extra_json) j
  WHERE m.extra_json IS NOT NULL AND json_valid(m.extra_json)
    AND json_type(m.extra_json) = 'object' AND j.type IN ('integer', 'real')
    AND length(j.key) BETWEEN 1 AND 64 AND j.key NOT GLOB '*[^A-Za-z0-9_]*'
    AND j.key NOT GLOB '[0-9]*';
)sql");
}

// Schema version 19: `ditbench selfcheck` (docs/selfcheck.md). One row per check of a device:
// its verdict rows (contract/selfcheck_row.h) and the worker's raw measurements
// (contract/selfcheck_measurements.h) as JSON, where and with which build it ran; the view is
// unchanged.
void MigrateToV19(sqlite3* db) {
  Exec(db, R"sql(
CREATE TABLE selfchecks (
  id INTEGER PRIMARY KEY,
  device TEXT NOT NULL,
  build TEXT NOT NULL,
  host TEXT NOT NULL,
  started_at TEXT NOT NULL,
  rows_json TEXT NOT NULL,
  measurements_json TEXT
);
CREATE INDEX selfchecks_by_device ON selfchecks (device, host, started_at);
)sql");
}

// Schema version 20: what each denoising step ran (worker/dit_trial.h: the attention kernels
// SDPA's dispatcher chose or the trial forced, and the linear layers' form, from rank 0's first
// iteration): trial_metrics.steps_json and attention_ran (the kernels of all steps, distinct,
// joined by '+'). The view gains the trial's attention, quant and schedule, and those two.
void MigrateToV20(sqlite3* db) {
  Exec(db, R"sql(
DROP VIEW results;
ALTER TABLE trial_metrics ADD COLUMN steps_json TEXT;
ALTER TABLE trial_metrics ADD COLUMN attention_ran TEXT;
)sql");
  Exec(db, ResultsView(20).c_str());
}

// Schema version 21: `cache` (issue 37): samples.reused, set on a "step:i" sample of a step
// whose transformer blocks the step cache skipped, for every rank and iteration (the ranks'
// agreement, and computed steps timed apart from reused ones); view unchanged.
void MigrateToV21(sqlite3* db) {
  Exec(db,
       "ALTER TABLE samples ADD COLUMN reused INTEGER NOT NULL DEFAULT 0 "
       "CHECK (reused IN (0, 1));");
}

// Schema version 22: every metric of the metric table is a column of the view: those held by
// name (decode_ms, p95_ms, slo_attainment, ...) read from metric_values, after the others
// (storage/results_view.h); no table changes.
void MigrateToV22(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, ResultsView(22).c_str());
}

// Schema version 23: the view gains tp (the tensor-parallel degree, 1 when a trial's
// configuration does not name it), before the metric columns; no table changes.
void MigrateToV23(sqlite3* db) {
  Exec(db, "DROP VIEW results;");
  Exec(db, ResultsView(23).c_str());
}

// kMigrations[v - 1] takes a database from version v - 1 to v. A schema change is a function
// above and a line here and in the history below; nothing else records the version.
//
// Version history (stored in the one-row table schema_version):
//   1: sweeps, campaigns, trials, samples, trial_metrics; view `results`.
//   2: key format v2 (experiments/trial_identity.h): trial keys recomputed from the stored
//      configuration, trials.policy_json (the measurement policy) beside the key,
//      superseded_trials for trials that now share a key (storage/key_migration.h); the
//      view reads profile_blocks from the policy and gains `workload` and `policy`.
//   3: communication volume and output error per trial: trial_metrics.comm_mb_per_step,
//      output_error, output_error_note, output_reference_key; the view gains
//      pipefusion_warmup_steps, comm_mb_per_step, output_error and output_error_note.
//   4: trials.coordinator_host, trials.coordinator_pid (who runs a `running` trial) and
//      trials.health_json (load and busy processes at trial start and end); view unchanged.
//   5: the results view gains busy and health_note (machine health).
//   6: the `command` workload: trial_metrics.extra_json; the view gains axes, command, metrics.
//   7: replicates: table `launches` (one row per launch of a trial), samples.launch,
//      trials.replicates, trial_metrics.launches and launch_cov; the view gains replicates,
//      launches, launch_cov and ci_scope. Existing trials become their own launch 0.
//   8: trials.scheduler_job (the Slurm job id of a trial run under --launcher slurm); view
//      unchanged.
//   9: trials.placement_json (slots, devices, concurrent_trials); the view gains
//      concurrent_trials and placement.
//  10: every time column is ISO 8601 UTC text with milliseconds (storage/iso_time.h), the
//      rows of older versions converted from unix seconds; the view's columns unchanged.
//  11: campaigns.excluded and campaigns.label (`ditbench campaigns`); view unchanged.
//  12: the planner's cost model: table `model_fits` (one row per fit: device kind, trials,
//      leave-one-out errors, terms and per-trial predictions as JSON) and `search_reasons`
//      (why `run --search advise` ran each launch); the view unchanged.
//  13: the view gains vae_tile (0 when the decode is not tiled) and graph (eager, cuda_graph).
//  14: the view gains width, height (of "WIDTHxHEIGHT" or a square) and frames (video).
//  15: profiles and output quality: trial_metrics.profile_json, compute_share, comm_share,
//      idle_share (`profile: trace`), psnr and ssim (scope pipeline); the view gains them.
//  16: energy: trial_metrics.energy_j, joules_per_image, energy_note; launches.energy_j and
//      joules_per_image; the view gains energy_j, joules_per_image and energy_note.
//  17: quality gates: trial_metrics.quality (the verdict); the view gains quality, quality_ok.
//  18: the metric table: table metric_values (trial, name, value, unit, better) for extra
//      metrics, trial_metrics.extra_note; older extra_json copied over; view unchanged.
//  19: table selfchecks (device, build, host, started_at, rows_json, measurements_json):
//      `ditbench selfcheck`'s verdicts per device; view unchanged.
//  20: the attention axis, FP8 layers and per-step schedules: trial_metrics.steps_json (what
//      each denoising step ran) and attention_ran; the view gains attention, quant,
//      schedule, attention_ran and step_kernels.
//  21: samples.reused (a step `cache` skipped the blocks of, per rank and iteration); view
//      unchanged.
//  22: the view gains a column per metric of the metric table held by name (metric_values);
//      a database whose view lacks a metric of this build's table has it created again on
//      open (MigrateSchema), without a new version.
//  23: the view gains tp (tensor parallelism) before the metric columns.
using Migration = void (*)(sqlite3*);
constexpr Migration kMigrations[] = {
    MigrateToV1,  MigrateToV2,  MigrateToV3,  MigrateToV4,  MigrateToV5,  MigrateToV6,
    MigrateToV7,  MigrateToV8,  MigrateToV9,  MigrateToV10, MigrateToV11, MigrateToV12,
    MigrateToV13, MigrateToV14, MigrateToV15, MigrateToV16, MigrateToV17, MigrateToV18,
    MigrateToV19, MigrateToV20, MigrateToV21, MigrateToV22, MigrateToV23};

}  // namespace

const int kSchemaVersion = static_cast<int>(std::size(kMigrations));

namespace {

bool HasTable(sqlite3* db, const char* name) {
  Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.Bind(1, name);
  return query.Step();
}

int CountUserObjects(sqlite3* db) {
  Statement query(db, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'");
  return query.Step() ? static_cast<int>(query.Int(0)) : 0;
}

// A version no build ever wrote (negative): the table was edited by hand.
void RefuseOutOfRange(sqlite3* db, std::int64_t version) {
  if (version < 0) {
    throw StorageError(fmt::format(
        "results database '{}': schema_version.version is {}; expected 1 to {} (the table was "
        "edited by hand: restore it from a backup)",
        DbFile(db), version, kSchemaVersion));
  }
}

void RefuseNewer(sqlite3* db, std::int64_t version) {
  RefuseOutOfRange(db, version);
  if (version > kSchemaVersion) {
    throw StorageError(fmt::format(
        "results database '{}' has schema version {}, newer than this build supports ({}); "
        "use a newer ditbench",
        DbFile(db), version, kSchemaVersion));
  }
}

// Whether the stored results view is this version's view of another build's metric table
// (storage/results_view.h: WithoutMetricColumns); false for this build's, none, or any other.
bool IsViewOfOtherMetrics(sqlite3* db) {
  Statement query(db, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'results'");
  if (!query.Step() || query.IsNull(0)) return false;
  // SQLite keeps a statement's text from CREATE to its end, without the semicolon.
  const auto statement = [](std::string_view sql) {
    sql.remove_prefix(std::min(sql.find("CREATE VIEW"), sql.size()));
    while (!sql.empty() && (sql.back() == ';' || sql.back() == '\n' || sql.back() == ' '))
      sql.remove_suffix(1);
    return std::string(sql);
  };
  const std::string stored = statement(query.Text(0));
  const std::string current = statement(ResultsView(kSchemaVersion));
  return stored != current && WithoutMetricColumns(stored) == WithoutMetricColumns(current);
}

}  // namespace

std::string DbFile(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return file && *file ? file : ":memory:";
}

std::int64_t ReadSchemaVersion(sqlite3* db) {
  if (!HasTable(db, "schema_version")) return 0;
  Statement query(db, "SELECT max(version) FROM schema_version");
  if (!query.Step() || query.IsNull(0)) return 0;
  return query.Int(0);
}

void MigrateSchema(sqlite3* db) {
  // Read and migrate under one write lock, so two processes opening a fresh file at once
  // do not both create the schema.
  Transaction transaction(db);
  const std::int64_t version = ReadSchemaVersion(db);
  RefuseNewer(db, version);  // also a negative version: kMigrations is indexed with it
  if (version == 0 && CountUserObjects(db) > 0) {
    throw StorageError(fmt::format(
        "'{}' is not a ditbench results database (it has tables but no schema_version)",
        DbFile(db)));
  }
  if (version == kSchemaVersion) {
    if (!IsViewOfOtherMetrics(db)) return;  // rolls back the empty transaction
    Exec(db, "DROP VIEW results");
    Exec(db, ResultsView(kSchemaVersion).c_str());
    transaction.Commit();
    return;
  }
  if (version == 0) Exec(db, "CREATE TABLE schema_version (version INTEGER NOT NULL)");
  for (int next = static_cast<int>(version) + 1; next <= kSchemaVersion; ++next) {
    kMigrations[next - 1](db);
  }
  Exec(db, "DELETE FROM schema_version");
  Statement stamp(db, "INSERT INTO schema_version (version) VALUES (?)");
  stamp.Bind(1, kSchemaVersion).Run();
  transaction.Commit();
}

void CheckSchemaForReading(sqlite3* db) {
  const std::int64_t version = ReadSchemaVersion(db);
  RefuseNewer(db, version);
  if (version == 0) {
    throw StorageError(
        fmt::format("'{}' is not a ditbench results database (no schema_version)", DbFile(db)));
  }
  if (version < kSchemaVersion) {
    throw OlderSchemaError(fmt::format(
        "results database '{}' has schema version {}, older than this build's ({}); run "
        "`ditbench migrate --db {}` once to migrate it",
        DbFile(db), version, kSchemaVersion, DbFile(db)));
  }
}

const std::vector<std::string>& ResultsContractColumns() {
  static const std::vector<std::string> columns = {
      "campaign",   "sweep",      "trial_key",  "status",      "model",      "resolution",
      "precision",  "scope",      "batch",      "steps",       "ulysses",    "ring",
      "pipefusion", "cfg",        "dp",         "world_size",  "latency_ms", "mean_ms",
      "p90_ms",     "std_ms",     "cov",        "ci_low_ms",   "ci_high_ms", "rank0_ms",
      "skew_ms",    "iterations", "warmup",     "peak_mem_mb", "tflops",     "mfu",
      "device",     "build",      "error"};
  return columns;
}

}  // namespace ditbench

// The results database schema: tables, the public `results` view, and forward migrations.
//
// Version history (stored in the one-row table schema_version):
//   1: sweeps, campaigns, trials, samples, trial_metrics; view `results`.
//   2: key format v2 (trial/trial_identity.h): trial keys recomputed from the stored
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
//  13: profiles and output quality: trial_metrics.profile_json, compute_share, comm_share,
//      idle_share (`profile: trace`), psnr and ssim (scope pipeline); the view gains them.
// A database with a lower version is migrated forward, one transaction per step. A newer one,
// or a file that is not a ditbench database, is refused with StorageError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct sqlite3;

namespace ditbench {

// The schema version recorded in `db`: 0 when the database has no schema_version table. As
// stored: a table edited by hand may hold any integer (MigrateSchema and
// CheckSchemaForReading refuse one outside 0..kSchemaVersion).
std::int64_t ReadSchemaVersion(sqlite3* db);

// Brings `db` to kSchemaVersion. REQUIRES: opened for writing. Throws StorageError for a
// newer schema, a negative version, or a database that holds other tables but no
// schema_version.
void MigrateSchema(sqlite3* db);

// Throws StorageError unless `db` is exactly at kSchemaVersion (for read-only opens, which
// never migrate).
void CheckSchemaForReading(sqlite3* db);

// Throws StorageError naming the first table, view or column that this build's schema has
// and `db` lacks (a column dropped by hand, a view deleted). Extra objects and columns are
// allowed. REQUIRES: `db` at kSchemaVersion.
void CheckSchemaComplete(sqlite3* db);

// The contract columns of the `results` view, in order (README.md, "The results view"). The
// view has these first, then extras (p99_ms, min_ms, ..., run_dir).
const std::vector<std::string>& ResultsContractColumns();

}  // namespace ditbench

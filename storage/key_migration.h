// Schema step 1 -> 2: trial keys under key format v2 (experiments/trial_identity.h).
//
// Every trial's key is recomputed from its stored configuration; the configuration is split
// into what is computed (trials.config_json) and how it is measured (trials.policy_json).
// Trials of one campaign that differed only in their measurement policy now share a key; of
// each such group one is kept, deterministically:
//   1. an `ok` trial before any other status;
//   2. then the newest: the latest finished_at (a trial never finished counts as oldest);
//   3. then the highest row id (the one inserted last).
// Each trial not kept is listed in `superseded_trials` (its old key, configuration, status,
// error, finish time, latency and the id of the trial kept) and deleted with its samples and
// metrics.
#pragma once

struct sqlite3;

namespace ditbench {

// REQUIRES: inside the migration's transaction, after the v2 tables and columns exist.
// Throws StorageError naming the trial when a stored configuration cannot be read.
void RekeyTrialsToV2(sqlite3* db);

}  // namespace ditbench

// PlannerHistory: what the planner (plan/, `advise`, `run --search advise`) reads of earlier
// measurements to estimate and fit its cost model, and the fits it records (schema version
// 12, table model_fits).
//
// Made by ResultsDb::Open over its connection and borrowed from it
// (ResultsDb::planner_history()): it must not outlive the ResultsDb. Errors: every method
// throws StorageError. Thread-safety: as ResultsDb.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/result_rows.h"

struct sqlite3;

namespace ditbench {

class PlannerHistory {
 public:
  PlannerHistory(const PlannerHistory&) = delete;
  PlannerHistory& operator=(const PlannerHistory&) = delete;

  // What the newest ok result of each trial key measured (for `plan`'s estimates), any device.
  // Only a row that timed something is a measurement: latency above 0 and at least one timed
  // iteration (NULL, from before the column, counts as some); ObservedTrials reads the same.
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
    // Measured only on a busy machine (no quiet measurement of its key on this device).
    bool busy = false;
  };
  // The newest quiet measurement of each key; a key measured only on a busy machine comes
  // with its newest busy measurement, `busy` set. `busy_only`, when given, counts those keys.
  // Campaigns in `left_out` (a `bisect` or excluded campaign: analysis/campaign_roles.h) are
  // not read.
  std::vector<ObservedTrial> ObservedTrials(const std::string& device,
                                            std::size_t* busy_only = nullptr,
                                            const std::vector<std::int64_t>& left_out = {});

  // Every ok trial with a step cache (`cache` in its stored configuration) and the steps per
  // iteration it skipped (its skipped_steps metric): what `plan` expects of the same model,
  // shape and cache (plan/step_cache_fraction.h). Any device.
  struct StepCacheObservation {
    nlohmann::json config;  // CanonicalJson, as stored
    double skipped_steps = 0;
  };
  std::vector<StepCacheObservation> StepCacheObservations();

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

  // Every campaign stored, in id order (as ResultsReader::Campaigns): the fit leaves out those
  // that answer nothing (analysis/campaign_roles.h).
  std::vector<CampaignInfo> Campaigns();

 private:
  friend class ResultsDb;
  explicit PlannerHistory(sqlite3* db) : db_(db) {}
  sqlite3* db_;  // ResultsDb's connection, borrowed
};

}  // namespace ditbench

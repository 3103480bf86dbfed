// What the coordinator hands to storage: plain values, no SQL. Storage stores; it decides
// nothing about what a number means (that was decided by the worker and the ingest step).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/trial.h"

namespace ditbench {

// One timed (or warm-up) measurement of one rank.
struct Sample {
  int rank = 0;
  int iteration = 0;          // 0-based over warm-up and timed iterations together
  std::string stage;          // "iteration" (whole scoped region), "step:3", "block:12", ...
  double ms = 0;
  bool warmup = false;
};

// Per-trial summary, computed by the coordinator from the samples (runner/ingest.cc).
// latency_* figures are over the per-iteration slowest-rank times of timed iterations.
struct TrialMetrics {
  double latency_ms = 0;  // median
  double mean_ms = 0, p90_ms = 0, p99_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0, cov = 0;
  double ci_low_ms = 0, ci_high_ms = 0;
  double rank0_ms = 0;  // median of rank 0's own times
  double skew_ms = 0;   // median over iterations of (max - min over ranks)
  int iterations = 0;   // timed iterations
  int warmup = 0;       // warm-up iterations
  int outliers = 0;
  std::optional<double> peak_mem_mb;       // max over ranks: allocator peak (GPU) or RSS (CPU)
  std::optional<double> peak_reserved_mb;  // max over ranks: allocator reserved (GPU only)
  std::optional<double> flops;             // analytic FLOPs of one timed iteration (all ranks)
  std::optional<double> tflops;            // flops / latency
  std::optional<double> mfu;               // tflops / dense peak; null when the device is unknown
  std::optional<double> images_per_s;
  std::optional<double> tokens_per_s;
  // GPU clocks during the timed part (NVML), over all ranks; empty when not sampled.
  std::optional<bool> throttled;           // a power, thermal or hardware slowdown was seen
  std::optional<double> sm_clock_min_mhz;
  std::optional<double> sm_clock_max_mhz;
};

// One finished (or skipped) trial, written in one transaction.
struct TrialRecord {
  std::string trial_key;
  nlohmann::json config;  // CanonicalJson of the TrialConfig
  TrialStatus status = TrialStatus::kPending;
  std::string error;      // empty when ok
  int world_size = 1;
  std::string device;     // e.g. "cpu" or "NVIDIA H100 80GB HBM3"
  std::string run_dir;
  double started_at = 0;   // unix seconds
  double finished_at = 0;  // unix seconds
  std::vector<Sample> samples;
  std::optional<TrialMetrics> metrics;
  // Rank 0's report of its environment (device, driver, library versions, threads, NCCL_*
  // variables). The coordinator stores it with the campaign, not per trial.
  nlohmann::json worker_environment;
};

// One execution of a sweep.
struct CampaignRecord {
  std::string sweep_name;
  std::string sweep_path;
  std::string spec_hash;    // Sha256Hex of the sweep file's text
  std::string spec_text;
  std::string build;        // git revision, "+dirty" appended when the tree was dirty
  std::string host;
  nlohmann::json environment = nlohmann::json::object();
};

}  // namespace ditbench

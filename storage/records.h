// What the coordinator hands to storage: plain values, no SQL. Storage stores; it decides
// nothing about what a number means (that was decided by the worker and the ingest step).
// Samples and metrics themselves are contract/measurement_records.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/measurement_records.h"
#include "experiments/trial.h"
#include "metrics/trial_trace.h"

namespace ditbench {

// One finished (or skipped) trial, written in one transaction.
struct TrialRecord {
  std::string trial_key;
  // The trial's configuration: storage stores it split into what is computed and how it is
  // measured (ComputationJson and PolicyJson, experiments/trial_identity.h).
  TrialConfig config;
  TrialStatus status = TrialStatus::kPending;
  std::string error;      // empty when ok
  int world_size = 1;
  std::string device;     // e.g. "cpu" or "NVIDIA H100 80GB HBM3"
  std::string run_dir;
  double started_at = 0;   // unix seconds
  double finished_at = 0;  // unix seconds
  // Who runs it (kept while `running`, so that resume can tell a live coordinator from a dead
  // one): the coordinator's host and pid; empty / 0 when unknown.
  std::string coordinator_host;
  std::int64_t coordinator_pid = 0;
  // The batch scheduler's job that ran it (a Slurm job id); empty for local ranks.
  std::string scheduler_job;
  // The machine's health at trial start and end (machine/machine_health.h); null when unknown.
  nlohmann::json health;
  // Where it ran: {"slots": [...], "devices": [...] (GPU), "concurrent_trials": N (other
  // trials in flight beside it, --policy pack)}; null when unknown.
  nlohmann::json placement;
  std::vector<Sample> samples;
  std::optional<TrialMetrics> metrics;
  // `profile: trace`: every rank's trace and its profile (stored with the metrics).
  std::optional<TrialTrace> trace;
  // Replicates: which launch of the trial this record is (0-based), and how many launches the
  // sweep asks for (storage/schema.h, version 7).
  int launch = 0;
  int replicates = 1;
  // Rank 0's report of its environment (device, driver, library versions, threads, NCCL_*
  // variables). The coordinator stores it with the campaign, not per trial.
  nlohmann::json worker_environment;
  // What each denoising step ran (rank 0's first iteration); empty for a program's trial.
  std::vector<StepKernels> steps;
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

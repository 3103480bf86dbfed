// The results database's rows as plain values: what the `results` view holds of a trial
// (ResultRow), a campaign as stored (CampaignInfo), and a trial whose output error waits for
// its reference (AwaitingReference). No SQL and no connection: a file that only reads these
// includes this header, not storage/results_db.h. What the coordinator hands to storage is
// storage/records.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contract/measurement_records.h"
#include "experiments/quality_gate.h"
#include "experiments/workload.h"
#include "metrics/metric_table.h"
#include "metrics/trial_trace.h"
#include "model_zoo/shapes/parallel_degrees.h"
#include "storage/records.h"

namespace ditbench {

// One row of the `results` view, typed: what the report reads. Unset optionals are NULL.
// The parallel degrees are the ParallelDegrees base (model_zoo/shapes/parallel_degrees.h), read
// from the view's column of each degree's name; `world_size` is the stored column.
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
  std::optional<double> peak_mem_mb, tflops, mfu, images_per_s;
  std::optional<std::int64_t> iterations;
  bool throttled = false;              // the GPU slowed down during the timed part (NVML)
  bool profile_blocks = false;         // every transformer block was timed too (measurement policy)
  std::optional<double> output_error;  // rel L2 against the 1-rank trial (runner/output_error.h)
  std::optional<double> psnr, ssim;    // scope pipeline: the decoded image against the same
                                       // reference (metrics/image_quality.h)
  // The verdict of the trial's quality gates (experiments/quality_gate.h): "ok", "below: psnr 30.1
  // < 35", or empty (no gate, or not known yet). below_quality() reads it.
  std::string quality;
  // `profile: trace`: every rank's profile, and the slowest rank's shares of its step time.
  std::optional<TrialTrace> profile;
  std::optional<double> compute_share, comm_share, idle_share;
  std::string run_dir;                     // the trial's run folder (where its traces are)
  std::optional<double> comm_mb_per_step;  // MiB a rank sent per step, max over ranks
  // Energy (GPU, NVML): joules per timed iteration over every rank, per image, and why a GPU
  // trial has none (TrialMetrics::energy_note).
  std::optional<double> energy_j, joules_per_image;
  std::string energy_note;
  bool busy = false;        // other work ran on the machine during the trial (machine health)
  std::string health_note;  // what was busy: "load 3.10 on 2 cores; others used ..."
  std::int64_t concurrent_trials = 0;  // other trials in flight beside it (--policy pack)
  Workload workload = Workload::kDit;  // parsed from the stored name (experiments/workload.h)
  std::string axes;                    // a command's custom axes as a JSON object ("{}" when none)
  // Replicates: launches the sweep asked for, ok launches summarised (0: no metrics), and the
  // CoV of their medians. With launches > 1 the CI covers between-launch variation.
  std::int64_t replicates = 1, launches = 0;
  std::optional<double> launch_cov;
  std::int64_t seed = 0, pipefusion_patches = 0, pipefusion_warmup_steps = 1;
  // Extra metrics by name (metrics/metric_table.h; storage: metric_values): a command's own
  // numbers and built-in metrics without a column, each with how to show it.
  std::map<std::string, ExtraMetric> extra_metrics;
  // What ingest said of those figures (trial_metrics.extra_note: a serving trial's unbounded
  // tails, a replica that fell behind, figures per request shape, an early stop; metrics a
  // command dropped), "" when nothing. Read from the database: untrusted text.
  std::string metrics_note;
  // The trial's computation as stored (trials.config_json, experiments/trial_identity.h):
  // every field, including those the view has no column for (vae_tile). Read by Results().
  std::string computation;
  // What each denoising step ran (rank 0's first iteration; contract/measurement_records.h),
  // and the attention kernels of all its steps joined by '+' ("" when not recorded).
  std::vector<StepKernels> step_kernels;
  std::string attention_ran;
  // Set by the report when it folds trials that differ only in seed into one row
  // (analysis/seed_folding.h): how many, and the range of their medians.
  std::int64_t folded = 1;
  std::optional<double> folded_min_ms, folded_max_ms;

  // Ok with a latency that timed something: a row stored ok at 0 ms or over no timed iteration
  // (an older ditbench's all-warm-up load; the database is untrusted) is never the fastest.
  bool measured() const {
    return status == "ok" && latency_ms && *latency_ms > 0 && iterations.value_or(1) > 0;
  }
  bool below_quality() const { return IsBelowQuality(quality); }
  // "1024px" for a square, "1280x720px" otherwise, then " 81 frames" for a video.
  std::string resolution_label() const;
};

// The member of ResultRow that holds a column metric of the metric table (MetricMember,
// metrics/metric_table.h: latency_ms, peak_mem_mb, psnr, ...), or nullptr for a metric held by
// name (ResultRow::extra_metrics). Every column metric has one (tested): the reader fills them
// by walking the table.
std::optional<double> ResultRow::*RowMemberOf(std::string_view metric);

// An ok trial whose output error waits for its 1-rank reference.
struct AwaitingReference {
  std::int64_t trial_id = 0;
  std::string run_dir;
  QualityGate quality;  // its gates (the policy's "quality"); empty: none
  // Its restart band (metric restart_psnr: an engine trial's, experiments/quality_gate.h), when
  // measured and finite.
  std::optional<double> restart_psnr;
};

// A campaign as stored (for reports and comparisons).
struct CampaignInfo {
  std::int64_t id = 0;
  CampaignRecord record;              // record.sweep_name names its sweep
  double started_at = 0;              // unix seconds (stored as ISO 8601: storage/iso_time.h)
  std::optional<double> finished_at;  // unset while unfinished
  // Set aside by `ditbench campaigns --exclude`: left out of history, learned noise floors
  // and reports, its rows kept (schema version 11).
  bool excluded = false;
  std::string label;        // `ditbench campaigns --label`; empty when none
  std::int64_t trials = 0;  // trials recorded in it, whatever their status
};

}  // namespace ditbench

// The "Stage breakdown" section of the report: where each trial's iteration time goes, so
// end-to-end, per-step and per-block numbers can be read side by side. Reads the samples of
// every ok launch of each trial through ResultsReader::Samples; the slowest rank per iteration is
// metrics/trial_metrics.h's SlowestPerIteration, as for the trial's latency. A trial with
// replicates counts each launch alike: per stage, the median over its launches of each
// launch's median.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/measurement_records.h"
#include "storage/results_reader.h"

namespace ditbench {

struct StageTrial {
  std::int64_t campaign = 0;
  std::string trial_key;
  std::string label;  // the configuration as the report names it
  // Trials with the same id differ only in seed (analysis/configuration_group.h: ConfigurationOf):
  // the table shows them as one row. Empty: a row of its own.
  std::string configuration;
  // Scope pipeline: its decode against its 1-rank trial's (analysis/speedup.h DecodeSpeedupOf),
  // with that figure's doubts ("" when plain); unset when either has no decode.
  std::optional<double> decode_speedup;
  std::string decode_speedup_doubts;
};

// Per stage, the median over timed iterations of the slowest rank's time (over launches: the
// median of the launches' medians).
struct StageSummary {
  double iteration_ms = 0;
  int steps = 0;
  double steps_ms = 0;        // sum of the step medians
  double first_step_ms = 0;
  std::vector<double> step_ms;  // each denoising step's median, by step index (the step chart)
  int blocks = 0;             // distinct block indices (0 without profile_blocks)
  double blocks_ms = 0;       // sum over steps and blocks of the block medians
  int slowest_block = -1;     // block index with the largest median summed over steps
  double slowest_block_ms = 0;
  std::optional<double> decode_ms;  // the VAE decode (scope pipeline), when it ran
};

// The breakdown of one launch's samples (every rank, warm-up included: it is left out here).
// nullopt when there is nothing to break down (no stage besides "iteration").
std::optional<StageSummary> SummarizeStages(const std::vector<Sample>& samples);

// The breakdown of a trial's launches (the samples of each, as above): per stage, the median
// over the launches that timed it of each launch's median. nullopt as above.
std::optional<StageSummary> SummarizeLaunchStages(
    const std::vector<std::vector<Sample>>& launches);

// The breakdown of each trial that has stage samples, in the order given, over every ok
// launch of it.
using StageSummaries = std::vector<std::pair<StageTrial, StageSummary>>;
StageSummaries SummarizeStages(ResultsReader& db, const std::vector<StageTrial>& trials);

// The section as HTML (empty when no trial has stage samples): one row per configuration,
// trials that differ only in seed folded into one with the median of each column over them.
std::string RenderStageBreakdown(const StageSummaries& summaries);

}  // namespace ditbench

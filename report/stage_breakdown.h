// The "Stage breakdown" section of the report: where each trial's iteration time goes, so
// end-to-end, per-step and per-block numbers can be read side by side. Reads each trial's
// samples through ResultsDb::Samples; the slowest rank per iteration is
// experiments/trial_metrics.h's SlowestPerIteration, as for the trial's latency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/measurement_records.h"
#include "storage/results_db.h"

namespace ditbench {

struct StageTrial {
  std::int64_t campaign = 0;
  std::string trial_key;
  std::string label;  // the configuration as the report names it
};

// Per stage, the median over timed iterations of the slowest rank's time.
struct StageSummary {
  double iteration_ms = 0;
  int steps = 0;
  double steps_ms = 0;        // sum of the step medians
  double first_step_ms = 0;
  int blocks = 0;             // distinct block indices (0 without profile_blocks)
  double blocks_ms = 0;       // sum over steps and blocks of the block medians
  int slowest_block = -1;     // block index with the largest median summed over steps
  double slowest_block_ms = 0;
  std::optional<double> decode_ms;  // the VAE decode (scope pipeline), when it ran
};

// The breakdown of one trial's samples (every rank, warm-up included: it is left out here).
// nullopt when there is nothing to break down (no stage besides "iteration").
std::optional<StageSummary> SummarizeStages(const std::vector<Sample>& samples);

// The breakdown of each trial that has stage samples, in the order given.
std::vector<std::pair<StageTrial, StageSummary>> SummarizeStages(
    ResultsDb& db, const std::vector<StageTrial>& trials);

// The section as HTML (empty when no trial has stage samples).
std::string RenderStageBreakdown(ResultsDb& db, const std::vector<StageTrial>& trials);

}  // namespace ditbench

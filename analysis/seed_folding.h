// Reports that scale: trials of one group and campaign that differ only in seed are one row,
// with the spread of their medians across seeds. A sweep of 1,000 seeds x 10 configurations
// becomes 10 rows, not 10,000 (a seed is a replicate of the same configuration: ranking one
// seed against another ranks noise). Pure: rows in, rows out.
#pragma once

#include <string>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

// Folds the measured (ok) rows of `rows` of one configuration (analysis/configuration_group.h:
// every computation field but seed, within one campaign, device and profile_blocks) into one
// row each when there are at least two: its latency_ms is the
// median of their medians, folded the count, folded_min_ms / folded_max_ms the range of their
// medians, ci_low_ms / ci_high_ms that range too, iterations the sum, trial_key the first
// one's. Other rows, and configurations measured with one seed, are kept as they are. Order:
// folded rows where their first member was.
std::vector<ResultRow> FoldSeeds(const std::vector<ResultRow>& rows);

}  // namespace ditbench

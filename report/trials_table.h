// The trials table of a report group (report/html_report.cc, RenderGroup): its optional
// columns, its header, and one row per trial with its speedup, interval and badges.
#pragma once

#include <string>
#include <vector>

#include "analysis/configuration_group.h"
#include "report/metric_columns.h"
#include "storage/result_rows.h"

namespace ditbench {

// Which optional columns a group's trials table has: GPUs or ranks, TFLOPS and MFU where the
// device's dense peak is known (never on CPU), energy per image where NVML's counter gave it,
// PSNR and SSIM where a trial decoded an image (scope pipeline).
struct GroupColumns {
  bool on_gpu = false, has_peak = false, has_energy = false, has_quality = false;
};
GroupColumns GroupColumnsOf(const std::vector<ResultRow>& group);

// The trials table's opening and header row.
std::string TrialsTableHead(const GroupColumns& with, const MetricColumns& metric_columns);

// A row's speedup cell: the number, its reference named under it when it is not the row's own
// computation, its doubts as badges (analysis/trust.h), and what it is against as its title.
struct SpeedupCells {
  std::string speedup = "-", efficiency = "-", title;
};
SpeedupCells SpeedupCellsOf(const OneRankBaselines& baselines, const ResultRow& row);

// One row of the trials table; `rank`: its place among the measured rows ("" for the others),
// `more_cell`: its last cell (key, error, the command that reproduces it).
std::string TrialRow(const ResultRow& row, const std::string& rank, const std::string& label,
                     const GroupColumns& with, const MetricColumns& metric_columns,
                     const SpeedupCells& speedup, const std::string& campaign_name,
                     const std::string& more_cell);

}  // namespace ditbench

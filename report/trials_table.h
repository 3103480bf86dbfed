// The trials table of a report group (report/html_report.cc, RenderGroup) as a Table: its
// optional columns, and one row per trial with its speedup, interval and badges. The values are
// the data; the page's links, badges and folded details are the cells' HTML (base/table.h,
// CellHtml), so the table is printed by the one HTML printer (base/table_printers.h).
#pragma once

#include <string>
#include <vector>

#include "analysis/configuration_group.h"
#include "base/table.h"
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

// The trials table's columns.
std::vector<Column> TrialsColumns(const GroupColumns& with, const MetricColumns& metric_columns);

// A row's speedup cell: the number, its reference named under it when it is not the row's own
// computation, its doubts as badges (analysis/trust.h), and what it is against as its title;
// and its efficiency. No value where the row has no speedup.
struct SpeedupCells {
  Cell speedup, efficiency;
};
SpeedupCells SpeedupCellsOf(const OneRankBaselines& baselines, const ResultRow& row);

// What a trials row shows besides the row itself: its place among the measured rows (0 for the
// others), its configuration as the group labels it, its speedup, its campaign's name, and its
// last cell's markup (key, error, the command that reproduces it).
struct TrialRowParts {
  int rank = 0;
  std::string label;
  SpeedupCells speedup;
  std::string campaign_name;
  std::string more_markup;
};

// Adds `row` to a table of TrialsColumns(with, metric_columns), anchored "trial-CAMPAIGN-KEY".
void AddTrialRow(Table& table, const ResultRow& row, const GroupColumns& with,
                 const MetricColumns& metric_columns, TrialRowParts parts);

}  // namespace ditbench

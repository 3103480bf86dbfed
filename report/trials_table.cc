#include "report/trials_table.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "analysis/speedup.h"
#include "analysis/trust.h"
#include "report/html_text.h"
#include "report/report_warnings.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

using Row = ResultRow;

// A row's PSNR and SSIM cells as the metric table formats them: "inf" for an image equal to the
// reference's.
std::string QualityCells(const Row& row) {
  return fmt::format("<td class=\"num psnr\">{}</td><td class=\"num ssim\">{}</td>",
                     MetricText(row.psnr, "psnr"), MetricText(row.ssim, "ssim"));
}

// A row's 95% interval, and what it covers when that is not the 95% of one launch: a range
// over folded seeds, an interval over launches, or the exact coverage of few iterations
// (stats/stats.h).
std::string CiText(const Row& row) {
  if (row.folded > 1)
    return fmt::format("{:.2f} – {:.2f} (range over {} seeds)", *row.folded_min_ms,
                       *row.folded_max_ms, row.folded);
  if (!row.ci_low_ms || !row.ci_high_ms) return "-";
  std::string ci = fmt::format("{:.2f} – {:.2f}", *row.ci_low_ms, *row.ci_high_ms);
  if (row.launches > 1) return ci + fmt::format(" ({} launches)", row.launches);
  if (row.iterations) {
    const double coverage = MedianCiCoverage(static_cast<std::size_t>(*row.iterations));
    if (coverage < 0.9495) ci += fmt::format(" ({:.0f}% only)", coverage * 100);
  }
  return ci;
}

// The status cell's badges: a busy machine, a trial below its quality gates.
std::string StatusBadges(const Row& row) {
  std::string badges;
  if (row.busy)
    badges += fmt::format(" <span class=\"busy\" title=\"{}\">busy machine</span>",
                          HtmlEscape(row.health_note));
  if (row.below_quality())
    badges += fmt::format(" <span class=\"below\" title=\"{}\">below quality</span>",
                          HtmlEscape(row.quality));
  return badges;
}

}  // namespace

GroupColumns GroupColumnsOf(const std::vector<Row>& group) {
  const auto any = [&](auto has) { return std::any_of(group.begin(), group.end(), has); };
  return {
      .on_gpu = any(RunsOnGpu),
      .has_peak = any([](const Row& r) { return r.mfu.has_value(); }),
      .has_energy = any([](const Row& r) { return r.joules_per_image.has_value(); }),
      .has_quality = any([](const Row& r) { return r.psnr.has_value() || r.ssim.has_value(); })};
}

// The trials table's opening and header row.
std::string TrialsTableHead(const GroupColumns& with, const MetricColumns& metric_columns) {
  return fmt::format(
      "<div class=\"scroll\"><table class=\"trials\"><tr><th>#</th><th>configuration</th>"
      "<th>{}</th>"
      "<th>campaign</th><th>status</th><th>latency ms</th>"
      "<th>95% CI ms</th><th>cov</th><th>skew ms</th>"
      "<th>rank 0 ms</th><th>peak mem MB</th><th>speedup</th><th>efficiency</th>"
      "<th title=\"image (video) tokens each rank of ring x ulysses attends over\">tokens per "
      "rank</th>{}{}"
      "<th title=\"relative L2 of the final output against the 1-rank trial\">output error</th>{}{}"
      "<th title=\"trial key, device, iterations, error, and the command that runs the trial "
      "again in its sweep's campaign (add --new to measure it in a fresh campaign)\">trial, "
      "error, reproduce</th></tr>\n",
      with.on_gpu ? "GPUs" : "ranks", with.has_peak ? "<th>TFLOPS</th><th>MFU</th>" : "",
      with.has_energy ? "<th title=\"joules of every rank's GPU board over the timed iterations, "
                        "per image (NVML's energy counter; docs/measurement.md)\">J/image</th>"
                      : "",
      with.has_quality
          ? "<th title=\"the decoded image against the 1-rank trial's, on [-1, 1]\">PSNR "
            "dB</th><th title=\"SSIM, 11x11 Gaussian window, sigma 1.5\">SSIM</th>"
          : "",
      metric_columns.HeaderCells());
}

SpeedupCells SpeedupCellsOf(const OneRankBaselines& baselines, const Row& row) {
  SpeedupCells cells;
  const std::optional<Speedup> found = SpeedupOf(baselines, row);
  if (!found) return cells;
  cells.speedup = fmt::format("{:.2f}x", found->value);
  cells.efficiency = fmt::format("{:.0f}%", 100 * found->efficiency);
  cells.title = fmt::format("against {} ({:.2f} ms; {})", found->baseline_key, found->baseline_ms,
                            found->ReferenceText());
  if (!found->settings_apart.empty())
    cells.speedup +=
        fmt::format("<span class=\"reference\">vs {}</span>", HtmlEscape(found->ReferenceText()));
  // One badge each, stacked under the number (report.css: table.trials): the column stays narrow.
  const Trust doubts = found->trust;
  if (!doubts.plain()) cells.title += "; " + doubts.Meanings();
  for (Doubt doubt : doubts.doubts())
    cells.speedup +=
        fmt::format("<span class=\"doubt\">{}</span>", HtmlEscape(std::string(InfoOf(doubt).name)));
  return cells;
}

// One row of the trials table; `rank`: its place among the measured rows ("" for the others),
// `more_cell`: its last cell (key, error, the command that reproduces it).
std::string TrialRow(const Row& row, const std::string& rank, const std::string& label,
                     const GroupColumns& with, const MetricColumns& metric_columns,
                     const SpeedupCells& speedup, const std::string& campaign_name,
                     const std::string& more_cell) {
  return fmt::format(
      "<tr id=\"trial-{}-{}\"><td class=\"num\">{}</td><td class=\"wrap\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\" title=\"{}\">{}</td>"
      "<td class=\"status-{}\">{}{}</td>"
      "<td class=\"num latency\">{}</td><td class=\"num wrap\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num speedup\"{}>{}</td><td class=\"num\">{}</td>"
      "<td class=\"num tokens-per-rank\">{}</td>{}{}"
      "<td class=\"num output-error\">{}</td>{}{}{}</tr>\n",
      row.campaign, HtmlEscape(row.trial_key), rank, HtmlEscape(label), row.world_size,
      HtmlEscape(campaign_name), row.campaign, HtmlEscape(row.status), HtmlEscape(row.status),
      StatusBadges(row), Number(row.latency_ms), CiText(row), Percent(row.cov), Number(row.skew_ms),
      Number(row.rank0_ms), Number(row.peak_mem_mb, "{:.0f}"),
      speedup.title.empty() ? "" : fmt::format(" title=\"{}\"", HtmlEscape(speedup.title)),
      speedup.speedup, speedup.efficiency,
      TokensPerRank(row) ? fmt::format("{}", *TokensPerRank(row)) : std::string("-"),
      with.has_peak ? fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                                  Number(row.tflops, "{:.1f}"), Percent(row.mfu))
                    : "",
      with.has_energy
          ? fmt::format(
                "<td class=\"num joules-per-image\"{}>{}</td>",
                row.energy_j ? fmt::format(" title=\"{:.4g} J per iteration\"", *row.energy_j) : "",
                Number(row.joules_per_image, "{:.4g}"))
          : "",
      row.output_error
          ? (*row.output_error == 0 ? std::string("0") : fmt::format("{:.2g}", *row.output_error))
          : "-",
      with.has_quality ? QualityCells(row) : "", metric_columns.Cells(row), more_cell);
}

}  // namespace ditbench

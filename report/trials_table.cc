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

// A metric's cell as the metric table formats it (PSNR "inf" for an image equal to the
// reference's); "-" when unset.
Cell MetricCell(const std::optional<double>& value, std::string_view name) {
  return MetricText(value, name);
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

std::vector<Column> TrialsColumns(const GroupColumns& with, const MetricColumns& metric_columns) {
  const auto number = [](std::string name, ColumnHint hint, int decimals, std::string css = "") {
    return Column{
        .name = std::move(name), .hint = hint, .decimals = decimals, .html_class = std::move(css)};
  };
  const auto right_text = [](std::string name, std::string css, std::string description = "") {
    return Column{.name = std::move(name),
                  .align = Align::kRight,
                  .description = std::move(description),
                  .html_class = std::move(css)};
  };
  std::vector<Column> columns = {
      number("#", ColumnHint::kCount, 0),
      Column{.name = "configuration", .html_class = "wrap"},
      number(with.on_gpu ? "GPUs" : "ranks", ColumnHint::kCount, 0),
      number("campaign", ColumnHint::kCount, 0),
      Column{.name = "status"},
      number("latency ms", ColumnHint::kMs, 2, "latency"),
      right_text("95% CI ms", "wrap"),
      right_text("cov", ""),
      number("skew ms", ColumnHint::kMs, 2),
      number("rank 0 ms", ColumnHint::kMs, 2),
      number("peak mem MB", ColumnHint::kNumber, 0),
      Column{.name = "speedup", .hint = ColumnHint::kRatio, .html_class = "speedup"},
      number("efficiency", ColumnHint::kPercent, 0),
      Column{.name = "tokens per rank",
             .hint = ColumnHint::kCount,
             .description = "image (video) tokens each rank of ring x ulysses attends over",
             .html_class = "tokens-per-rank"}};
  if (with.has_peak) {
    columns.push_back(number("TFLOPS", ColumnHint::kNumber, 1));
    columns.push_back(right_text("MFU", ""));
  }
  if (with.has_energy)
    columns.push_back(right_text("J/image", "joules-per-image",
                                 "joules of every rank's GPU board over the timed iterations, per "
                                 "image (NVML's energy counter; docs/measurement.md)"));
  columns.push_back(right_text("output error", "output-error",
                               "relative L2 of the final output against the 1-rank trial"));
  if (with.has_quality) {
    columns.push_back(
        right_text("PSNR dB", "psnr", "the decoded image against the 1-rank trial's, on [-1, 1]"));
    columns.push_back(right_text("SSIM", "ssim", "SSIM, 11x11 Gaussian window, sigma 1.5"));
  }
  for (Column& column : metric_columns.Columns()) columns.push_back(std::move(column));
  columns.push_back(Column{.name = "trial, error, reproduce",
                           .description = "trial key, device, iterations, error, and the command "
                                          "that runs the trial again in its sweep's campaign (add "
                                          "--new to measure it in a fresh campaign)",
                           .html_class = "more"});
  return columns;
}

SpeedupCells SpeedupCellsOf(const OneRankBaselines& baselines, const Row& row) {
  SpeedupCells cells;
  const std::optional<Speedup> found = SpeedupOf(baselines, row);
  if (!found) return cells;
  CellHtml html{.markup = fmt::format("{:.2f}x", found->value),
                .title = fmt::format("against {} ({:.2f} ms; {})", found->baseline_key,
                                     found->baseline_ms, found->ReferenceText())};
  if (!found->settings_apart.empty())
    html.markup +=
        fmt::format("<span class=\"reference\">vs {}</span>", HtmlEscape(found->ReferenceText()));
  // One badge each, stacked under the number (report.css: table.trials): the column stays narrow.
  const Trust doubts = found->trust;
  if (!doubts.plain()) html.title += "; " + doubts.Meanings();
  for (Doubt doubt : doubts.doubts())
    html.markup +=
        fmt::format("<span class=\"doubt\">{}</span>", HtmlEscape(std::string(InfoOf(doubt).name)));
  cells.speedup = Cell(found->value).WithHtml(std::move(html));
  cells.efficiency = Cell(100 * found->efficiency);
  return cells;
}

void AddTrialRow(Table& table, const Row& row, const GroupColumns& with,
                 const MetricColumns& metric_columns, TrialRowParts parts) {
  const auto optional = [](const std::optional<double>& v) { return v ? Cell(*v) : Cell(); };
  std::vector<Cell> cells = {
      parts.rank > 0 ? Cell(parts.rank) : Cell(""),  // "": not ranked, not unknown
      Cell(std::move(parts.label)),
      Cell(row.world_size),
      Cell(row.campaign).WithHtml({.title = parts.campaign_name}),
      Cell(row.status)
          .WithHtml({.markup = HtmlEscape(row.status) + StatusBadges(row),
                     .css_class = "status-" + row.status}),
      optional(row.latency_ms),
      Cell(CiText(row)),
      Cell(Percent(row.cov)),
      optional(row.skew_ms),
      optional(row.rank0_ms),
      optional(row.peak_mem_mb),
      std::move(parts.speedup.speedup),
      std::move(parts.speedup.efficiency),
      TokensPerRank(row) ? Cell(static_cast<std::int64_t>(*TokensPerRank(row))) : Cell()};
  if (with.has_peak) {
    cells.push_back(optional(row.tflops));
    cells.push_back(Cell(Percent(row.mfu)));
  }
  if (with.has_energy) {
    Cell energy(Number(row.joules_per_image, "{:.4g}"));
    if (row.energy_j)
      energy = std::move(energy).WithHtml(
          {.title = fmt::format("{:.4g} J per iteration", *row.energy_j)});
    cells.push_back(std::move(energy));
  }
  cells.push_back(Cell(
      row.output_error
          ? (*row.output_error == 0 ? std::string("0") : fmt::format("{:.2g}", *row.output_error))
          : std::string("-")));
  if (with.has_quality) {
    cells.push_back(MetricCell(row.psnr, "psnr"));
    cells.push_back(MetricCell(row.ssim, "ssim"));
  }
  for (Cell& cell : metric_columns.CellsOf(row)) cells.push_back(std::move(cell));
  cells.push_back(Cell(row.trial_key).WithHtml({.markup = std::move(parts.more_markup)}));
  table.AddRow(std::move(cells), {.id = fmt::format("trial-{}-{}", row.campaign, row.trial_key)});
}

}  // namespace ditbench

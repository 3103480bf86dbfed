#include "report/engines_section.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/configuration_group.h"
#include "analysis/row_metrics.h"
#include "base/table_printers.h"
#include "experiments/workload.h"
#include "report/html_text.h"

namespace ditbench {
namespace {

// A trial's load, from its computation: the rate (0 for a closed loop or a trace), or nullopt
// in latency mode.
std::optional<double> LoadRate(const ResultRow& row) {
  const nlohmann::json computation = nlohmann::json::parse(row.computation, nullptr, false);
  if (!computation.is_object() || !computation.contains("serve") ||
      !computation["serve"].is_object())
    return std::nullopt;
  return OfferedRate(row).value_or(0);  // a share of capacity: the rate it came to
}

// One row of a shape's table: an engine (or ditbench's own model) at one layout.
struct EngineLayout {
  std::string engine;  // "engine-serve-cpu (version 1)", "ditbench: pixart-alpha-tiny"
  std::string layout;  // ConfigurationLabel
  std::int64_t campaign = 0;
  const ResultRow* latency = nullptr;   // the latency-mode trial
  std::vector<const ResultRow*> loads;  // the serving trials, by rate
};

std::string EngineName(const ResultRow& row,
                       const std::map<std::int64_t, std::string>& engine_versions) {
  if (row.workload != Workload::kEngine) return "ditbench: " + row.model;
  const auto version = engine_versions.find(row.campaign);
  return version == engine_versions.end()
             ? row.sweep
             : fmt::format("{} (version {})", row.sweep, version->second);
}

// The shape two engines share: the image's size, a video's frames, the steps.
std::string ShapeOf(const ResultRow& row) {
  return fmt::format("{}, {} steps", row.resolution_label(), row.steps);
}

const char* BusyMark(const ResultRow& row) { return row.busy ? "?" : ""; }

std::string LatencyCell(const ResultRow* row) {
  if (!row || !row->latency_ms) return "-";
  std::string text = fmt::format("{:.1f}{}", *row->latency_ms, BusyMark(*row));
  if (row->ci_low_ms && row->ci_high_ms)
    text += fmt::format(" [{:.1f}, {:.1f}]", *row->ci_low_ms, *row->ci_high_ms);
  return text;
}

std::string LoadsCell(const std::vector<const ResultRow*>& loads) {
  std::string text;
  for (const ResultRow* row : loads) {
    const double rate = LoadRate(*row).value_or(0);
    const std::optional<double> p95 = MetricValue(*row, "p95_ms");
    text += fmt::format("{}{} at {}", text.empty() ? "" : "; ",
                        p95 ? fmt::format("{:.1f}{}", *p95, BusyMark(*row)) : "not bounded",
                        rate > 0 ? fmt::format("{:g}/s", rate) : "closed loop");
  }
  return text.empty() ? "-" : text;
}

// The first row of `e` that carries `name` (its latency trial first).
std::optional<double> FirstOf(const EngineLayout& e, const char* name) {
  if (e.latency)
    if (auto value = MetricValue(*e.latency, name)) return value;
  for (const ResultRow* row : e.loads)
    if (auto value = MetricValue(*row, name)) return value;
  return std::nullopt;
}

std::string QualityCell(const EngineLayout& e) {
  const ResultRow* row = e.latency ? e.latency : e.loads.front();
  std::string text;
  if (row->psnr) text = std::isinf(*row->psnr) ? "identical" : fmt::format("{:.1f} dB", *row->psnr);
  if (row->ssim) text += fmt::format("{}SSIM {:.4f}", text.empty() ? "" : ", ", *row->ssim);
  if (!row->quality.empty()) text += fmt::format("{}{}", text.empty() ? "" : "; ", row->quality);
  // Its own reference: error 0, nothing compared (runner/output_error.h).
  if (text.empty() && row->output_error == 0.0) return "the reference";
  return text.empty() ? "-" : text;
}

std::string BandCell(const EngineLayout& e) {
  if (e.engine.starts_with("ditbench: ")) return "-";
  if (auto psnr = FirstOf(e, "restart_psnr")) return fmt::format("{:.1f} dB", *psnr);
  if (FirstOf(e, "restart_ssim")) return "exact";
  return "not measured";
}

std::string SecondsText(std::optional<double> s) { return s ? fmt::format("{:.2f}", *s) : "-"; }
std::string MsText(std::optional<double> ms) { return ms ? fmt::format("{:.1f}", *ms) : "-"; }

}  // namespace

std::string RenderEnginesSection(const std::vector<ResultRow>& rows,
                                 const std::map<std::int64_t, std::string>& engine_versions) {
  if (std::none_of(rows.begin(), rows.end(), [](const ResultRow& row) {
        return row.workload == Workload::kEngine && row.measured();
      }))
    return "";
  // shape -> (engine, layout) -> its trials of the newest campaign that ran it.
  std::map<std::string, std::map<std::pair<std::string, std::string>, EngineLayout>> shapes;
  for (const ResultRow& row : rows) {
    if (!row.measured()) continue;
    EngineLayout& e =
        shapes[ShapeOf(row)][{EngineName(row, engine_versions), ConfigurationLabel(row)}];
    if (row.campaign < e.campaign) continue;
    if (row.campaign > e.campaign)
      e = {EngineName(row, engine_versions), ConfigurationLabel(row), row.campaign, nullptr, {}};
    if (LoadRate(row))
      e.loads.push_back(&row);
    else if (!e.latency)
      e.latency = &row;
  }
  for (auto& [shape, layouts] : shapes)
    for (auto& [name, e] : layouts)
      std::sort(e.loads.begin(), e.loads.end(), [](const ResultRow* a, const ResultRow* b) {
        return LoadRate(*a).value_or(0) < LoadRate(*b).value_or(0);
      });
  std::string html =
      "<h2 id=\"engines\">Engines side by side: each engine and layout per shape</h2>\n"
      "<p class=\"note\">Engine trials (docs/engines.md) and ditbench's own model at the same "
      "shape. Latency: one request at a time, with its 95% interval (for an engine, the "
      "client's send to last byte; for a video, submit to content). p95 under load: per load "
      "served, at its offered rate. Ready: the server's start to ready (the cold start). "
      "Quality: the output against its reference trial; the restart band is the least PSNR "
      "between the same request's outputs across server restarts (\"exact\": every restart "
      "gave the same output), below which a difference cannot be told from a restart. Memory "
      "of an engine's server is not measured here (no NVML). A trial measured while the "
      "machine was busy is marked ?. Where several campaigns ran the same engine and layout, "
      "the newest one's trials.</p>\n";
  for (const auto& [shape, layouts] : shapes) {
    html += fmt::format("<h3>{}</h3>\n", HtmlEscape(shape));
    Table table({{.name = "engine", .html_class = "layout"},
                 {.name = "layout", .html_class = "layout"},
                 {.name = "latency ms", .align = Align::kRight},
                 {.name = "p95 ms under load", .align = Align::kRight},
                 {.name = "ready s", .align = Align::kRight},
                 {.name = "first request ms", .align = Align::kRight},
                 {.name = "quality vs reference"},
                 {.name = "restart band"}});
    for (const auto& [name, e] : layouts)
      table.AddRow({Cell(e.engine), Cell(e.layout), Cell(LatencyCell(e.latency)),
                    Cell(LoadsCell(e.loads)), Cell(SecondsText(FirstOf(e, "ready_s"))),
                    Cell(MsText(FirstOf(e, "first_request_ms"))), Cell(QualityCell(e)),
                    Cell(BandCell(e))});
    html += "<div class=\"scroll\">" + HtmlTable(table, {.table_class = "engines"}) + "</div>\n";
  }
  return html;
}

}  // namespace ditbench

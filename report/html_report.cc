#include "report/html_report.h"
#include "report/output_file.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/comparison.h"
#include "report/comparison_html.h"
#include "report/configuration_group.h"
#include "report/group_charts.h"
#include "report/history.h"
#include "report/history_section.h"
#include "report/html_text.h"
#include "report/report_warnings.h"
#include "report/seed_folding.h"
#include "report/stage_breakdown.h"
#include "stats/stats.h"
#include "storage/results_db.h"

namespace ditbench {

// Chart.js, inlined at build time from DITBENCH_CHARTJS (generated chartjs_data.cc).
extern const char kChartJs[];
extern const std::size_t kChartJsSize;

namespace {

// One row of the `results` view (storage reads it; the report only renders).
using Row = ResultRow;

// Trials are compared only within a report group (report/configuration_group.h).
using GroupKey = ReportGroup;

GroupKey KeyOf(const Row& row) { return ReportGroupOf(row); }

std::string GroupTitle(const GroupKey& key) {
  const auto& [model, resolution, precision, scope, batch, steps, profile_blocks, workload] =
      key;
  return fmt::format("{}{} · {} px · {} · {} · batch {} · {} steps{}",
                     // a workload whose model is only a label says what ran
                     TraitsOf(workload).builtin_model
                         ? std::string()
                         : std::string(WorkloadName(workload)) + " · ",
                     model, resolution, precision,
                     scope, batch, steps, profile_blocks ? " · blocks profiled" : "");
}

std::string ConfigLabel(const Row& row) { return ConfigurationLabel(row); }

// The stage breakdown table names a trial with its group too (it lists every group).
std::string StageLabel(const Row& row) {
  const std::string settings = SettingsLabel(row);
  return TrialLabel(row) + (settings.empty() ? "" : " " + settings);
}

// Rows of a group's table shown open (best first); the rest are collapsed.
constexpr std::size_t kShownRows = 50;

std::vector<CampaignInfo> SelectCampaigns(ResultsDb& db, const ReportOptions& options) {
  std::vector<CampaignInfo> all = db.Campaigns();
  // Campaigns set aside (`ditbench campaigns --exclude`) appear only when named by id.
  if (options.sweeps.empty() && options.campaigns.empty()) {
    std::erase_if(all, [](const CampaignInfo& c) { return c.excluded; });
    return all;
  }
  std::set<std::int64_t> chosen;
  for (const std::string& sweep : options.sweeps) {
    bool found = false;
    std::set<std::string> known;
    for (const CampaignInfo& c : all) {
      known.insert(c.record.sweep_name);
      if (c.record.sweep_name == sweep) {
        if (!c.excluded) chosen.insert(c.id);
        found = true;
      }
    }
    if (!found) {
      throw std::invalid_argument(fmt::format("no sweep named '{}' in '{}' (known: {})", sweep,
                                              options.db.string(), fmt::join(known, ", ")));
    }
  }
  for (std::int64_t id : options.campaigns) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.id == id; });
    if (it == all.end()) {
      throw std::invalid_argument(fmt::format("no campaign {} in '{}' ({} campaigns stored)", id,
                                              options.db.string(), all.size()));
    }
    chosen.insert(id);
  }
  std::vector<CampaignInfo> selected;
  for (CampaignInfo& c : all) {
    if (chosen.count(c.id)) selected.push_back(std::move(c));
  }
  return selected;
}

constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; }
.status-ok { color: #1a7f37; } .status-skipped { color: #777; }
.status-oom, .status-timeout, .status-crashed, .status-failed, .status-interrupted {
  color: #b42318; font-weight: bold; }
td.error { max-width: 40em; white-space: pre-wrap; font-family: monospace; font-size: 0.85em; }
.chart { position: relative; height: 320px; max-width: 900px; }
.warning { background: #fff4e5; border-left: 4px solid #f79009; padding: 0.3em 0.8em;
  margin: 0.5em 0; }
.busy { background: #f79009; color: #fff; border-radius: 3px; padding: 0 0.3em; font-size: 0.8em; }
.warning details { font-size: 0.9em; } .warning ul { margin: 0.2em 0; }
.note { color: #555; font-size: 0.9em; }
)css";


void RenderHeader(std::string& html, const std::vector<CampaignInfo>& campaigns,
                  const std::map<std::int64_t, int>& trials_per_campaign) {
  std::set<std::string> sweeps;
  for (const CampaignInfo& c : campaigns) sweeps.insert(c.record.sweep_name);
  std::string sweep_list = HtmlEscape(fmt::format("{}", fmt::join(sweeps, ", ")));
  auto now = std::chrono::system_clock::now();
  html += fmt::format(
      "<h1>ditbench report: {}</h1>\n<p class=\"note\">Generated {} by ditbench. Latencies "
      "are medians of the slowest rank per iteration; CI is the 95% confidence interval of "
      "the median (its exact coverage is shown where fewer iterations make it smaller). "
      "It is within one launch (the iterations of one process: a second launch may land "
      "outside it) unless marked <em>N launches</em>: then the latency is the median of N "
      "launch medians and the CI covers launch-to-launch variation too (sweep field "
      "<code>replicates</code>).</p>\n",
      sweep_list.empty() ? "no campaigns" : sweep_list,
      IsoTime(std::chrono::duration<double>(now.time_since_epoch()).count()));
  html += "<h2>Campaigns</h2>\n<div class=\"scroll\"><table><tr><th>campaign</th><th>sweep</th>"
          "<th>build</th>"
          "<th>host</th><th>started</th><th>finished</th><th>spec</th><th>trials</th></tr>\n";
  for (const CampaignInfo& c : campaigns) {
    auto count = trials_per_campaign.find(c.id);
    html += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td title=\"{}\">{}</td><td class=\"num\">{}</td></tr>\n",
        c.id, HtmlEscape(c.record.sweep_name), HtmlEscape(c.record.build),
        HtmlEscape(c.record.host), IsoTime(c.started_at),
        c.finished_at ? IsoTime(*c.finished_at) : "unfinished",
        HtmlEscape(c.record.sweep_path), HtmlEscape(c.record.spec_hash.substr(0, 12)),
        count == trials_per_campaign.end() ? 0 : count->second);
  }
  html += "</table></div>\n";
}

void RenderStatusCounts(std::string& html, const std::vector<Row>& rows) {
  std::map<std::string, int> counts;
  for (const Row& row : rows) ++counts[row.status];
  html += "<h2>Status</h2>\n<table><tr>";
  for (const auto& [status, count] : counts) {
    html += fmt::format("<th class=\"status-{0}\">{0}</th>", HtmlEscape(status));
  }
  html += "<th>total</th></tr>\n<tr>";
  for (const auto& entry : counts) html += fmt::format("<td class=\"num\">{}</td>", entry.second);
  html += fmt::format("<td class=\"num\">{}</td></tr></table>\n", rows.size());
}

// The command that runs the row's trial again, as HTML; a row folded over seeds names one
// of them.
std::string Reproduce(const Row& row, const std::map<std::int64_t, std::string>& sweep_paths) {
  auto path = sweep_paths.find(row.campaign);
  if (path == sweep_paths.end() || path->second.empty()) return "-";
  std::string html =
      "<code>" + HtmlEscape(ReproduceCommand(path->second, row.trial_key)) + "</code>";
  if (row.folded > 1) html += fmt::format(" (seed {}; one of {})", row.seed, row.folded);
  return html;
}

// One group: its chart (when it has measured trials) and its table, ranked by latency.
// `sweep_paths`: each campaign's sweep file, for the command that reproduces a row.
void RenderGroup(std::string& html, nlohmann::json& charts, const GroupKey& key,
                 std::vector<Row>& unfolded,
                 const std::map<std::int64_t, std::string>& sweep_paths,
                 const StagesByTrial& stages) {
  // Trials that differ only in seed are one row: the page stays readable (and small) at
  // thousands of seeds, and seeds are not ranked against each other.
  std::vector<Row> group = FoldSeeds(unfolded);
  std::stable_sort(group.begin(), group.end(), [](const Row& a, const Row& b) {
    if (a.measured() != b.measured()) return a.measured();
    if (a.measured()) return *a.latency_ms < *b.latency_ms;
    return std::tie(a.status, a.trial_key) < std::tie(b.status, b.trial_key);
  });
  std::set<std::int64_t> group_campaigns;
  for (const Row& row : group) group_campaigns.insert(row.campaign);
  bool several_campaigns = group_campaigns.size() > 1;
  auto label = [&](const Row& row) {
    return several_campaigns ? fmt::format("campaign {}: {}", row.campaign, ConfigLabel(row))
                             : ConfigLabel(row);
  };

  html += fmt::format("<h2>{}</h2>\n", HtmlEscape(GroupTitle(key)));
  bool has_baseline = std::any_of(group.begin(), group.end(), [](const Row& r) {
    return r.world_size == 1 && r.measured();
  });
  const bool on_gpu = std::any_of(group.begin(), group.end(), RunsOnGpu);
  // TFLOPS and MFU only where the device's dense peak is known (never on CPU).
  const bool has_peak = std::any_of(group.begin(), group.end(),
                                    [](const Row& r) { return r.mfu.has_value(); });
  if (!has_baseline) {
    html += fmt::format("<p class=\"note\">No 1-{} trial of this precision and scope: no "
                        "speedup shown.</p>\n", on_gpu ? "GPU" : "rank");
  }

  // Each chart's id is set below, in page order.
  const std::string title = GroupTitle(key);
  for (nlohmann::json chart :
       {LatencyChart("", title, group), SpeedupChart("", "Speedup vs world size: " + title, group),
        StageChart("", "Stage breakdown: " + title, group, unfolded, stages),
        MemoryChart("", "Peak memory per rank vs world size: " + title, group),
        OutputErrorChart("", "Output error vs speedup: " + title, group)}) {
    if (chart.is_null()) continue;
    chart["id"] = fmt::format("chart-{}", charts.size());
    html += fmt::format("<div class=\"chart\"><canvas id=\"{}\"></canvas></div>\n",
                        chart["id"].get<std::string>());
    charts.push_back(std::move(chart));
  }

  const std::string table_head = fmt::format(
      "<div class=\"scroll\"><table><tr><th>#</th><th>configuration</th><th>{}</th>"
      "<th>campaign</th><th>trial</th><th>status</th><th>latency ms</th>"
      "<th>95% CI ms (exact coverage if less)</th><th>cov</th><th>skew ms</th>"
      "<th>rank 0 ms</th><th>peak mem MB</th><th>speedup</th><th>efficiency</th>{}"
      "<th title=\"relative L2 of the final output against the 1-rank trial\">output error</th>"
      "<th>comm MiB/step</th><th>iterations</th><th>device</th><th>error</th>"
      "<th title=\"runs the trial again in its sweep's campaign; add --new to measure it in a "
      "fresh campaign\">reproduce</th></tr>\n",
      on_gpu ? "GPUs" : "ranks", has_peak ? "<th>TFLOPS</th><th>MFU</th>" : "");
  html += table_head;
  const OneRankBaselines baselines(group);  // the charts above use the same ones
  int rank = 0;
  std::size_t shown = 0;
  for (const Row& row : group) {
    // The best kShownRows rows open; the rest in a collapsed list below them.
    if (shown++ == kShownRows) {
      html += fmt::format("</table></div>\n<details><summary>{} more trial(s) of this group"
                          "</summary>\n", group.size() - kShownRows);
      html += table_head;
    }
    std::string speedup = "-", efficiency = "-";
    const Row* baseline = row.measured() ? baselines.For(row) : nullptr;
    if (baseline && *row.latency_ms > 0) {
      double s = *baseline->latency_ms / *row.latency_ms;
      speedup = fmt::format("{:.2f}x", s);
      efficiency = fmt::format("{:.0f}%", 100 * s / static_cast<double>(row.world_size));
    }
    std::string ci = row.ci_low_ms && row.ci_high_ms
                         ? fmt::format("{:.2f} – {:.2f}", *row.ci_low_ms, *row.ci_high_ms)
                         : "-";
    // Few iterations: the interval's exact coverage is below 95% (stats/stats.h); say so.
    if (row.folded > 1) {
      ci = fmt::format("{:.2f} – {:.2f} (range over {} seeds)", *row.folded_min_ms,
                       *row.folded_max_ms, row.folded);
    } else if (row.ci_low_ms && row.launches > 1) {
      ci += fmt::format(" ({} launches)", row.launches);
    } else if (row.ci_low_ms && row.iterations) {
      const double coverage = MedianCiCoverage(static_cast<std::size_t>(*row.iterations));
      if (coverage < 0.9495) ci += fmt::format(" ({:.0f}% only)", coverage * 100);
    }
    html += fmt::format(
        "<tr id=\"trial-{}-{}\"><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td><code>{}</code></td><td class=\"status-{}\">{}{}</td>"
        "<td class=\"num latency\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num speedup\"{}>{}</td><td class=\"num\">{}</td>{}"
        "<td class=\"num output-error\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td class=\"error\">{}"
        "</td><td class=\"reproduce\">{}</td></tr>\n",
        row.campaign, HtmlEscape(row.trial_key), row.measured() ? fmt::format("{}", ++rank) : "",
        HtmlEscape(label(row)), row.world_size, row.campaign,
        row.folded > 1 ? fmt::format("{} … ({} seeds)", HtmlEscape(row.trial_key), row.folded)
                       : HtmlEscape(row.trial_key),
        HtmlEscape(row.status), HtmlEscape(row.status),
        row.busy ? fmt::format(" <span class=\"busy\" title=\"{}\">busy machine</span>",
                               HtmlEscape(row.health_note))
                 : "",
        Number(row.latency_ms), ci,
        Percent(row.cov), Number(row.skew_ms), Number(row.rank0_ms),
        Number(row.peak_mem_mb, "{:.0f}"),
        baseline ? fmt::format(" title=\"against {} ({:.2f} ms)\"",
                               HtmlEscape(baseline->trial_key), *baseline->latency_ms)
                 : "",
        speedup, efficiency,
        has_peak ? fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                               Number(row.tflops, "{:.1f}"), Percent(row.mfu))
                 : "",
        row.output_error ? fmt::format("{:.2g}", *row.output_error) : "-",
        Number(row.comm_mb_per_step, "{:.1f}"),
        row.iterations ? fmt::format("{}", *row.iterations) : "-", HtmlEscape(row.device),
        HtmlEscape(row.error), Reproduce(row, sweep_paths));
  }
  html += "</table></div>\n";
  if (group.size() > kShownRows) html += "</details>\n";
}

// The selected campaigns (minus the baseline's) compared with the baseline.
std::string RenderBaselineComparison(ResultsDb& db, const ReportOptions& options,
                                     const std::vector<std::int64_t>& selected) {
  const CampaignSet baseline = ParseCampaignSet(options.baseline, options.db);
  CampaignSet candidate{options.db, {}, "selected campaigns"};
  const bool same_db = std::filesystem::weakly_canonical(baseline.db) ==
                       std::filesystem::weakly_canonical(options.db);
  for (std::int64_t id : selected) {
    const bool in_baseline = std::find(baseline.campaigns.begin(), baseline.campaigns.end(),
                                       id) != baseline.campaigns.end();
    if (!(same_db && in_baseline)) candidate.campaigns.push_back(id);
  }
  if (candidate.campaigns.empty()) {
    throw std::invalid_argument(fmt::format(
        "--baseline {}: no other campaign is selected to compare with it (add --campaign ID)",
        options.baseline));
  }
  std::unique_ptr<ResultsDb> other;
  ResultsDb* baseline_db = &db;
  if (!same_db) {
    other = ResultsDb::Open(baseline.db, /*read_only=*/true);
    baseline_db = other.get();
  }
  return RenderComparisonSection(CompareCampaigns(*baseline_db, baseline, db, candidate),
                                 kReportComparisonRows);
}

}  // namespace

std::string RenderHtmlReport(const ReportOptions& options) {
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  std::vector<CampaignInfo> campaigns = SelectCampaigns(*db, options);
  std::vector<std::int64_t> ids;
  for (const CampaignInfo& c : campaigns) ids.push_back(c.id);
  std::vector<Row> rows = db->Results(ids);

  std::map<std::int64_t, int> trials_per_campaign;
  std::map<std::int64_t, std::string> sweep_paths;
  for (const CampaignInfo& c : campaigns) sweep_paths[c.id] = c.record.sweep_path;
  std::map<GroupKey, std::vector<Row>> groups;
  for (const Row& row : rows) {
    ++trials_per_campaign[row.campaign];
    groups[KeyOf(row)].push_back(row);
  }

  std::string html;
  html.reserve(kChartJsSize + 64 * 1024);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<title>ditbench report</title>\n<style>";
  html += kStyle;
  html += kComparisonStyle;
  html += "</style>\n<script>\n";
  html.append(kChartJs, kChartJsSize);
  html += "\n</script>\n</head>\n<body>\n";
  RenderHeader(html, campaigns, trials_per_campaign);
  RenderStatusCounts(html, rows);
  html += RenderWarnings(ReportWarnings(campaigns, rows));
  if (!options.baseline.empty()) html += RenderBaselineComparison(*db, options, ids);
  html += RenderHistorySection(BuildHistory(campaigns, rows, {}));  // 3+ campaigns only
  // Where each measured trial's iteration goes (over all its ok launches): the groups' stage
  // charts and the stage breakdown table.
  std::vector<StageTrial> measured;
  for (const Row& row : rows)
    if (row.measured())
      measured.push_back({row.campaign, row.trial_key, StageLabel(row), ConfigurationOf(row)});
  const StageSummaries stage_summaries = SummarizeStages(*db, measured);
  StagesByTrial stages;
  for (const auto& [trial, summary] : stage_summaries)
    stages.emplace(std::make_pair(trial.campaign, trial.trial_key), summary);
  nlohmann::json charts = nlohmann::json::array();
  if (rows.empty()) html += "<p>No trials selected.</p>\n";
  for (auto& [key, group] : groups) RenderGroup(html, charts, key, group, sweep_paths, stages);
  html += RenderStageBreakdown(stage_summaries);
  html += "<script type=\"application/json\" id=\"ditbench-charts\">" + ScriptJson(charts) +
          "</script>\n<script>";
  html += kChartScript;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

void WriteHtmlReport(const ReportOptions& options) {
  WriteOutputFile(options.output, RenderHtmlReport(options));
}

}  // namespace ditbench

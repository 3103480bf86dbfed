#include "report/html_report.h"
#include "report/output_file.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/campaign_roles.h"
#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "analysis/history.h"
#include "analysis/seed_folding.h"
#include "analysis/speedup.h"
#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "base/user_error.h"
#include "report/chart_style.h"
#include "report/comparison_html.h"
#include "report/engines_section.h"
#include "report/group_charts.h"
#include "report/history_section.h"
#include "report/html_text.h"
#include "report/metric_columns.h"
#include "report/planner_section.h"
#include "report/profile_section.h"
#include "report/quality_section.h"
#include "report/report_assets.h"
#include "report/report_summary.h"
#include "report/report_warnings.h"
#include "report/selfcheck_section.h"
#include "report/serving_section.h"
#include "report/stage_breakdown.h"
#include "report/trials_table.h"
#include "stats/stats.h"
#include "storage/results_db.h"

namespace ditbench {

namespace {

// One row of the `results` view (storage reads it; the report only renders).
using Row = ResultRow;

// Trials are compared only within a report group (analysis/configuration_group.h).
using GroupKey = ReportGroup;

GroupKey KeyOf(const Row& row) { return ReportGroupOf(row); }

std::string GroupTitle(const GroupKey& key) { return key.Label(); }

std::string ConfigLabel(const Row& row) { return ConfigurationLabel(row); }

// Rows of a group's table shown open (best first); the rest are collapsed.
constexpr std::size_t kShownRows = 50;
// A nightly sweep's report selects many campaigns: above this many, their table is folded
// under a one-line summary, so that the answer (summary, history, groups) stays near the top.
constexpr std::size_t kShownCampaigns = 8;

std::vector<CampaignInfo> SelectCampaigns(ResultsReader& db, const ReportOptions& options) {
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
      throw UserError(fmt::format("no sweep named '{}' in '{}' (known: {})", sweep,
                                  options.db.string(), fmt::join(known, ", ")));
    }
  }
  for (std::int64_t id : options.campaigns) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.id == id; });
    if (it == all.end()) {
      throw UserError(fmt::format("no campaign {} in '{}' ({} campaigns stored)", id,
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

// The page's title and how to read its numbers.
void RenderTitle(std::string& html, const std::vector<CampaignInfo>& campaigns) {
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
}

// The campaigns the page shows, with build, host and times.
void RenderHeader(std::string& html, const std::vector<CampaignInfo>& campaigns,
                  const std::map<std::int64_t, int>& trials_per_campaign) {
  html += "<h2 id=\"campaigns\">Campaigns</h2>\n";
  const bool folded = campaigns.size() > kShownCampaigns;
  if (folded) {
    html += fmt::format("<details class=\"campaigns\"><summary>{} campaigns, #{} ({}) to #{} ({})"
                        "</summary>\n",
                        campaigns.size(), campaigns.front().id, IsoTime(campaigns.front().started_at),
                        campaigns.back().id, IsoTime(campaigns.back().started_at));
  }
  Table table({{.name = "campaign", .hint = ColumnHint::kCount},
               {.name = "sweep"},
               {.name = "build"},
               {.name = "host"},
               {.name = "started"},
               {.name = "finished"},
               {.name = "spec", .description = "the sweep file and its spec hash"},
               {.name = "trials", .hint = ColumnHint::kCount}});
  for (const CampaignInfo& c : campaigns) {
    auto count = trials_per_campaign.find(c.id);
    // A campaign that answers nothing (analysis/campaign_roles.h) is listed, and says so.
    const std::string role =
        RoleOf(c) == CampaignRole::kBisect
            ? std::string(
                  " <span class=\"note\">(bisect: left out of the summary, charts and "
                  "baselines)</span>")
        : RoleOf(c) == CampaignRole::kExcluded
            ? std::string(" <span class=\"note\">(excluded: shown because named by id)</span>")
            : std::string();
    table.AddRow(
        {Cell(c.id),
         Cell(c.record.sweep_name).WithHtml({.markup = HtmlEscape(c.record.sweep_name) + role}),
         Cell(c.record.build), Cell(c.record.host), Cell(IsoTime(c.started_at)),
         Cell(c.finished_at ? IsoTime(*c.finished_at) : "unfinished"),
         Cell(c.record.spec_hash.substr(0, 12)).WithHtml({.title = c.record.sweep_path}),
         Cell(count == trials_per_campaign.end() ? 0 : count->second)});
  }
  html += "<div class=\"scroll\">" + HtmlTable(table) + "</div>\n";
  if (folded) html += "</details>\n";
}

// The newest selfcheck of each device the rows ran on (none stored: left out).
std::vector<SelfcheckRecord> DeviceChecks(ResultsDb& db, const std::vector<Row>& rows) {
  std::set<std::string> devices;
  for (const Row& row : rows)
    if (!row.device.empty()) devices.insert(row.device);
  std::vector<SelfcheckRecord> checks;
  for (const std::string& device : devices)
    if (auto check = db.selfchecks().LatestFor(device)) checks.push_back(std::move(*check));
  return checks;
}

void RenderStatusCounts(std::string& html, const std::vector<Row>& rows) {
  std::map<std::string, int> counts;
  for (const Row& row : rows) ++counts[row.status];
  Table table({{.name = "status"}, {.name = "trials", .hint = ColumnHint::kCount}});
  for (const auto& [status, count] : counts)
    table.AddRow({Cell(status).WithHtml({.css_class = "status-" + status}), Cell(count)});
  table.AddRow({Cell("total"), Cell(rows.size())});
  html += "<h2 id=\"status\">Status</h2>\n" + HtmlTable(table);
}

// The command that runs the row's trial again, as HTML; a row folded over seeds names one
// of them.
std::string Reproduce(const Row& row, const std::map<std::int64_t, CampaignRun>& runs) {
  auto run = runs.find(row.campaign);
  if (run == runs.end() || run->second.sweep_path.empty()) return "-";
  std::string html =
      "<code>" + HtmlEscape(ReproduceCommand(run->second, row.trial_key)) + "</code>";
  if (row.folded > 1) html += fmt::format(" (seed {}; one of {})", row.seed, row.folded);
  return html;
}

// A group's rows as its table shows them: trials that differ only in seed folded into one
// row (the page stays readable at thousands of seeds, and seeds are not ranked against each
// other), measured rows first, fastest first.
std::vector<Row> Ranked(const std::vector<Row>& unfolded) {
  std::vector<Row> group = FoldSeeds(unfolded);
  std::stable_sort(group.begin(), group.end(), [](const Row& a, const Row& b) {
    if (a.measured() != b.measured()) return a.measured();
    if (a.measured()) return *a.latency_ms < *b.latency_ms;
    return std::tie(a.status, a.trial_key) < std::tie(b.status, b.trial_key);
  });
  return group;
}

// The last cell of a row, as markup: what a reader needs less often (trial key, device,
// iterations, the error and the command that reproduces it), folded so that the table fits the
// window.
std::string MoreCell(const Row& row, const std::string& reproduce) {
  std::string summary = "trial";
  if (!row.error.empty()) {
    summary = row.error.size() > 48 ? row.error.substr(0, 45) + "..." : row.error;
  }
  std::string html = fmt::format(
      "<details><summary>{}</summary><div>trial <code>{}</code>{}</div>"
      "<div>{}{}</div>",
      HtmlEscape(summary),
      row.folded > 1 ? fmt::format("{} … ({} seeds)", HtmlEscape(row.trial_key), row.folded)
                     : HtmlEscape(row.trial_key),
      row.device.empty() ? "" : " on " + HtmlEscape(row.device),
      row.iterations ? fmt::format("{} iterations", *row.iterations) : "",
      row.comm_mb_per_step ? fmt::format(", {:.1f} MiB sent per step", *row.comm_mb_per_step) : "");
  if (!row.error.empty())
    html += "<div class=\"error\">" + HtmlEscape(row.error) + "</div>";
  html += "<div class=\"reproduce\">" + reproduce + "</div></details>";
  return html;
}

// The group's charts, each given its id in page order, and the image pair of a pipeline.
void RenderGroupCharts(std::string& html, nlohmann::json& charts, const std::string& title,
                       const std::vector<Row>& group, const std::vector<Row>& unfolded,
                       const StagesByTrial& stages, const CampaignLabels& campaign_labels) {
  for (nlohmann::json chart :
       {LatencyChart("", title, group, campaign_labels),
        SpeedupChart("", "Speedup vs world size: " + title, group, campaign_labels),
        StageChart("", "Stage breakdown: " + title, group, unfolded, stages, campaign_labels),
        MemoryChart("", "Peak memory per rank vs world size: " + title, group, campaign_labels),
        OutputErrorChart("", "Output error vs speedup: " + title, group, campaign_labels),
        ProfileChart("", "Where the slowest rank's step time goes (profile: trace): " + title,
                     group),
        StepChart("", "Time per denoising step: step 0 against the steady steps: " + title, group,
                  unfolded, stages),
        ParetoChart("", "Speedup against output quality (Pareto front): " + title, group)}) {
    if (chart.is_null()) continue;
    chart["id"] = fmt::format("chart-{}", charts.size());
    html += fmt::format("<div class=\"chart\"><canvas id=\"{}\"></canvas></div>\n",
                        chart["id"].get<std::string>());
    charts.push_back(std::move(chart));
  }
  html += RenderImagePair(group);  // "" unless scope pipeline with a parallel image
}

// One group: its charts (when it has measured trials) and its table, ranked by latency.
// `group`: its rows as Ranked gives them; `unfolded`: its trials. `runs`: how each campaign
// ran, for the command that reproduces a row. `anchor`: the section's id.
void RenderGroup(std::string& html, nlohmann::json& charts, const GroupKey& key,
                 const std::string& anchor, const std::vector<Row>& group,
                 const std::vector<Row>& unfolded,
                 const std::map<std::int64_t, CampaignRun>& runs,
                 const StagesByTrial& stages, const CampaignLabels& campaign_labels,
                 const PlannerView& planner) {
  std::set<std::int64_t> group_campaigns;
  for (const Row& row : group) group_campaigns.insert(row.campaign);
  bool several_campaigns = group_campaigns.size() > 1;
  auto label = [&](const Row& row) {
    return several_campaigns ? fmt::format("{}: {}", CampaignName(campaign_labels, row.campaign),
                                           ConfigLabel(row))
                             : ConfigLabel(row);
  };

  html += fmt::format("<h2 id=\"{}\">{}</h2>\n", anchor, HtmlEscape(GroupTitle(key)));
  if (auto advice = planner.groups.find(key.Text()); advice != planner.groups.end())
    html += RenderRecommendations(advice->second);
  const GroupColumns with = GroupColumnsOf(group);
  const MetricColumns metric_columns(group);  // one column per extra metric some row has
  const bool has_baseline = std::any_of(
      group.begin(), group.end(), [](const Row& r) { return r.world_size == 1 && r.measured(); });
  if (!has_baseline) {
    html += fmt::format(
        "<p class=\"note\">No 1-{} trial of this precision and scope: no "
        "speedup shown.</p>\n",
        with.on_gpu ? "GPU" : "rank");
  }
  RenderGroupCharts(html, charts, GroupTitle(key), group, unfolded, stages, campaign_labels);

  const OneRankBaselines baselines(group);  // the charts above use the same ones
  // The best kShownRows rows open; the rest in a collapsed table below them.
  Table shown(TrialsColumns(with, metric_columns)), more(shown.columns());
  int rank = 0;
  for (const Row& row : group) {
    AddTrialRow(shown.rows().size() < kShownRows ? shown : more, row, with, metric_columns,
                {.rank = row.measured() ? ++rank : 0,
                 .label = label(row),
                 .speedup = SpeedupCellsOf(baselines, row),
                 .campaign_name = CampaignName(campaign_labels, row.campaign),
                 .more_markup = MoreCell(row, Reproduce(row, runs))});
  }
  const HtmlOptions trials{.table_class = "trials", .none = "-"};
  html += "<div class=\"scroll\">" + HtmlTable(shown, trials) + "</div>\n";
  if (!more.empty())
    html += fmt::format(
        "<details><summary>{} more trial(s) of this group</summary>\n<div class=\"scroll\">{}"
        "</div>\n</details>\n",
        more.rows().size(), HtmlTable(more, trials));
  html += RenderProfileTable(group);
}

// `--baseline A`: A compared with the campaigns named by --campaign (those not in A), else with
// the newest answering campaign of the selection (analysis/campaign_roles.h: never a bisect or
// excluded one), and the section says which.
std::string RenderBaselineComparison(ResultsDb& db, const ReportOptions& options,
                                     const std::vector<CampaignInfo>& selected) {
  const CampaignSet baseline = ParseCampaignSet(options.baseline, options.db);
  CampaignSet candidate{options.db, {}, "selected campaigns"};
  const bool same_db = std::filesystem::weakly_canonical(baseline.db) ==
                       std::filesystem::weakly_canonical(options.db);
  const auto in_baseline = [&](std::int64_t id) {
    return same_db && std::find(baseline.campaigns.begin(), baseline.campaigns.end(), id) !=
                          baseline.campaigns.end();
  };
  for (std::int64_t id : options.campaigns)
    if (!in_baseline(id)) candidate.campaigns.push_back(id);
  std::string which;
  if (candidate.campaigns.empty()) {
    const std::set<std::int64_t> answering = AnsweringCampaigns(selected);
    for (auto it = answering.rbegin(); it != answering.rend(); ++it) {
      if (in_baseline(*it)) continue;
      candidate.campaigns.push_back(*it);
      candidate.text = fmt::format("{}", *it);
      which = fmt::format(
          "<p class=\"note\">Candidate: the newest campaign, #{} (name others with "
          "--campaign).</p>\n",
          *it);
      break;
    }
  } else {
    candidate.text = fmt::format("{}", fmt::join(candidate.campaigns, ","));
    which = fmt::format("<p class=\"note\">Candidate: campaign(s) {}, named by --campaign.</p>\n",
                        candidate.text);
  }
  if (candidate.campaigns.empty()) {
    throw UserError(fmt::format(
        "--baseline {}: no other campaign is selected to compare with it (add --campaign ID)",
        options.baseline));
  }
  std::unique_ptr<ResultsDb> other;
  ResultsDb* baseline_db = &db;
  if (!same_db) {
    other = ResultsDb::Open(baseline.db, /*read_only=*/true);
    baseline_db = other.get();
  }
  std::string html = RenderComparisonSection(
      CompareCampaigns(baseline_db->reader(), baseline, db.reader(), candidate, {},
                       &baseline_db->selfchecks(), &db.selfchecks()),
      kReportComparisonRows);
  // Right under the section's heading.
  const std::size_t heading_end = html.find("</h2>\n");
  if (heading_end != std::string::npos) html.insert(heading_end + 6, which);
  return html;
}

// Each campaign's engine version, as its first ok engine trial's server gave it
// (runner/engine_trial.h, EngineCampaignEnvironment); read from the database: untrusted, so
// only a string is taken, cut short.
std::map<std::int64_t, std::string> EngineVersions(const std::vector<CampaignInfo>& campaigns) {
  constexpr std::size_t kVersionChars = 80;
  std::map<std::int64_t, std::string> versions;
  for (const CampaignInfo& c : campaigns) {
    const nlohmann::json& env = c.record.environment;
    if (!env.is_object() || !env.contains("worker") || !env["worker"].is_object()) continue;
    const nlohmann::json& version = env["worker"].value("engine_version", nlohmann::json());
    if (version.is_string())
      versions[c.id] = ForTerminal(version.get<std::string>(), kVersionChars);
  }
  return versions;
}

// Every measured trial whose iteration the groups' stage charts and the stage breakdown table
// break down (over all its ok launches), in the order of the groups' rankings, each with its
// decode speedup.
std::vector<StageTrial> StageTrialsOf(const std::map<GroupKey, std::vector<Row>>& groups,
                                      const std::map<GroupKey, std::vector<Row>>& ranked) {
  std::vector<StageTrial> measured;
  for (const auto& [key, group] : ranked) {
    std::map<std::string, std::vector<const Row*>> trials;  // configuration -> its trials
    for (const Row& row : groups.at(key))
      if (row.measured()) trials[ConfigurationOf(row)].push_back(&row);
    const OneRankBaselines baselines(groups.at(key));
    for (const Row& folded : group) {
      auto found = folded.measured() ? trials.find(ConfigurationOf(folded)) : trials.end();
      if (found == trials.end()) continue;
      for (const Row* row : found->second) {
        StageTrial trial;
        trial.campaign = row->campaign;
        trial.trial_key = row->trial_key;
        trial.label = TrialLabel(*row);  // the stage table lists every group
        trial.configuration = found->first;
        if (auto decode = DecodeSpeedupOf(baselines, *row)) {
          trial.decode_speedup = decode->value;
          trial.decode_speedup_doubts = decode->trust.Names();
        }
        measured.push_back(std::move(trial));
      }
      trials.erase(found);
    }
  }
  return measured;
}

}  // namespace

std::string RenderHtmlReport(const ReportOptions& options) {
  std::unique_ptr<ResultsDb> db = ResultsDb::Open(options.db, /*read_only=*/true);
  std::vector<CampaignInfo> campaigns = SelectCampaigns(db->reader(), options);
  std::vector<std::int64_t> ids;
  for (const CampaignInfo& c : campaigns) ids.push_back(c.id);
  std::vector<Row> rows = db->reader().Results(ids);
  const CampaignLabels campaign_labels = LabelCampaigns(campaigns);

  std::map<std::int64_t, int> trials_per_campaign;
  std::map<std::int64_t, CampaignRun> runs;
  for (const CampaignInfo& c : campaigns) runs[c.id] = CampaignRunOf(c, options.db.string());
  // Campaigns of `ditbench bisect` and excluded ones named by id are listed and counted, but
  // their rows answer nothing: no group, chart, summary, baseline or warning uses them.
  const std::vector<Row> answering = AnsweringRows(campaigns, rows, options.campaigns);
  for (const Row& row : rows) ++trials_per_campaign[row.campaign];
  std::map<GroupKey, std::vector<Row>> groups;
  for (const Row& row : answering) groups[KeyOf(row)].push_back(row);
  // Each group ranked once: its table, its charts, the summary and the stage table agree.
  std::map<GroupKey, std::vector<Row>> ranked;
  std::map<GroupKey, std::string> anchors;
  std::vector<SummaryGroup> summary;
  for (const auto& [key, group] : groups) {
    ranked[key] = Ranked(group);
    anchors[key] = fmt::format("group-{}", anchors.size() + 1);
    summary.push_back({GroupTitle(key), anchors[key], WinnerOf(ranked[key])});
  }

  std::string html;
  html.reserve(kChartJsSize + 64 * 1024);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<title>ditbench report</title>\n<style>";
  html += kReportStyle;
  html += kComparisonStyle;
  html += "</style>\n<script>\n";
  html.append(kChartJs, kChartJsSize);
  html += "\n</script>\n</head>\n<body>\n";
  RenderTitle(html, campaigns);

  const std::vector<StageTrial> measured = StageTrialsOf(groups, ranked);
  const StageSummaries stage_summaries = SummarizeStages(db->reader(), measured);
  StagesByTrial stages;
  for (const auto& [trial, summary] : stage_summaries)
    stages.emplace(std::make_pair(trial.campaign, trial.trial_key), summary);
  const std::vector<ReportWarning> warnings = ReportWarnings(campaigns, answering);
  const std::string history = RenderHistorySection(BuildHistory(campaigns, rows, {}));
  const std::string engines = RenderEnginesSection(answering, EngineVersions(campaigns));
  const PlannerView planner = options.planner
                                  ? options.planner(db->planner_history(), campaigns, answering)
                                  : PlannerView{};

  // The table of contents, in page order.
  std::vector<std::pair<std::string, std::string>> contents;
  if (!options.baseline.empty())
    contents.emplace_back("comparison", "Comparison with the baseline (regressions first)");
  if (!summary.empty())
    contents.emplace_back("summary", "Summary: the fastest configuration per group");
  contents.emplace_back("campaigns", "Campaigns");
  contents.emplace_back("status", "Status");
  if (!warnings.empty()) contents.emplace_back("warnings", "Warnings");
  if (!history.empty()) contents.emplace_back("history", "History: each trial over the campaigns");
  if (!planner.devices.empty())
    contents.emplace_back("planner", "Planner: predicted against measured latency");
  if (!ServedTrials(answering).empty())
    contents.emplace_back("serving", "Serving under load: latency against offered load");
  if (!engines.empty()) contents.emplace_back("engines", "Engines side by side");
  for (const auto& [key, anchor] : anchors) contents.emplace_back(anchor, GroupTitle(key));
  if (!stage_summaries.empty()) contents.emplace_back("stages", "Stage breakdown");
  html += RenderContents(contents);

  // The answer first: with a baseline, what got slower; then the winner of every group.
  if (!options.baseline.empty()) html += RenderBaselineComparison(*db, options, campaigns);
  html += RenderSummary(summary, campaign_labels);
  RenderHeader(html, campaigns, trials_per_campaign);
  html += RenderSelfcheckSection(DeviceChecks(*db, rows));
  RenderStatusCounts(html, rows);
  html += RenderWarnings(warnings);
  html += history;  // "" below kHistoryMinCampaigns campaigns
  nlohmann::json charts = nlohmann::json::array();
  html += RenderPlannerSection(planner, charts);  // "" without a planner
  html += RenderServingSection(answering, charts);  // "" without serving trials
  html += engines;                                  // "" without engine trials
  if (rows.empty()) html += "<p>No trials selected.</p>\n";
  for (const auto& [key, group] : groups)
    RenderGroup(html, charts, key, anchors[key], ranked[key], group, runs, stages,
                campaign_labels, planner);
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

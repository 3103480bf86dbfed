#include "report/stage_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "base/table_printers.h"
#include "metrics/trial_metrics.h"
#include "report/html_report.h"
#include "stats/stats.h"

namespace ditbench {

namespace {

// A step chart shows at most this many steps (a sweep may ask for 10,000).
constexpr int kMaxChartedSteps = 1000;

// Per stage timed in `samples`, the median over timed iterations of the slowest rank.
std::map<std::string, double> StageMedians(const std::vector<Sample>& samples) {
  std::set<std::string> stages;
  for (const Sample& sample : samples)
    if (!sample.warmup) stages.insert(sample.stage);
  std::map<std::string, double> medians;
  for (const std::string& stage : stages)
    medians[stage] = Summarize(SlowestSeries(samples, stage)).median;
  return medians;
}

std::optional<StageSummary> SummarizeMedians(const std::map<std::string, double>& medians) {
  if (medians.size() <= 1) return std::nullopt;  // only "iteration": nothing to break down
  StageSummary s;
  std::map<int, double> per_block;  // block index -> sum over steps of its median
  for (const auto& [stage, median] : medians) {
    int step = -1, block = -1;
    if (stage == kIterationStage) {
      s.iteration_ms = median;
    } else if (stage == "decode") {
      s.decode_ms = median;
    } else if (std::sscanf(stage.c_str(), "step:%d/block:%d", &step, &block) == 2) {
      per_block[block] += median;
      s.blocks_ms += median;
    } else if (std::sscanf(stage.c_str(), "step:%d", &step) == 1) {
      ++s.steps;
      s.steps_ms += median;
      if (step == 0) s.first_step_ms = median;
      if (step >= 0 && step < kMaxChartedSteps) {
        if (s.step_ms.size() <= static_cast<std::size_t>(step)) s.step_ms.resize(step + 1, 0.0);
        s.step_ms[step] = median;
      }
    }
  }
  s.blocks = static_cast<int>(per_block.size());
  for (const auto& [block, ms] : per_block)
    if (ms > s.slowest_block_ms) {
      s.slowest_block = block;
      s.slowest_block_ms = ms;
    }
  return s;
}

}  // namespace

std::optional<StageSummary> SummarizeStages(const std::vector<Sample>& samples) {
  return SummarizeMedians(StageMedians(samples));
}

std::optional<StageSummary> SummarizeLaunchStages(
    const std::vector<std::vector<Sample>>& launches) {
  std::map<std::string, std::vector<double>> per_launch;  // stage -> each launch's median
  for (const std::vector<Sample>& samples : launches)
    for (const auto& [stage, median] : StageMedians(samples)) per_launch[stage].push_back(median);
  std::map<std::string, double> medians;
  for (auto& [stage, values] : per_launch) {
    std::sort(values.begin(), values.end());
    medians[stage] = Quantile(values, 0.5);
  }
  return SummarizeMedians(medians);
}

StageSummaries SummarizeStages(ResultsReader& db, const std::vector<StageTrial>& trials) {
  StageSummaries out;
  std::map<std::int64_t, std::map<std::string, std::map<int, TrialStatus>>> launches;
  for (const StageTrial& trial : trials) {
    auto campaign = launches.find(trial.campaign);
    if (campaign == launches.end())
      campaign = launches.emplace(trial.campaign, db.LaunchStatuses(trial.campaign)).first;
    std::vector<std::vector<Sample>> samples;
    if (auto found = campaign->second.find(trial.trial_key); found != campaign->second.end())
      for (const auto& [launch, status] : found->second)
        if (status == TrialStatus::kOk)
          samples.push_back(db.Samples(trial.campaign, trial.trial_key, launch));
    if (auto summary = SummarizeLaunchStages(samples)) out.emplace_back(trial, *summary);
  }
  return out;
}

namespace {

double MedianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Quantile(values, 0.5);
}

// Trials of one configuration (seeds) as one: each column the median over them.
StageSummary MedianSummary(const std::vector<const StageSummary*>& members) {
  StageSummary s = *members.front();
  auto median = [&](double StageSummary::*field) {
    std::vector<double> values;
    for (const StageSummary* m : members) values.push_back(m->*field);
    return MedianOf(values);
  };
  s.iteration_ms = median(&StageSummary::iteration_ms);
  s.steps_ms = median(&StageSummary::steps_ms);
  s.first_step_ms = median(&StageSummary::first_step_ms);
  s.blocks_ms = median(&StageSummary::blocks_ms);
  s.slowest_block_ms = median(&StageSummary::slowest_block_ms);
  std::vector<double> decode;
  for (const StageSummary* m : members)
    if (m->decode_ms) decode.push_back(*m->decode_ms);
  s.decode_ms = decode.empty() ? std::nullopt : std::optional<double>(MedianOf(decode));
  return s;
}

}  // namespace

std::string RenderStageBreakdown(const StageSummaries& all) {
  if (all.empty()) return "";
  // Seeds of one configuration fold into one row, where the first of them was.
  std::map<std::string, std::vector<const StageSummary*>> members;
  for (const auto& [trial, summary] : all)
    if (!trial.configuration.empty()) members[trial.configuration].push_back(&summary);
  std::vector<std::tuple<StageTrial, StageSummary, std::size_t>> summaries;
  std::set<std::string> shown;
  for (const auto& [trial, summary] : all) {
    if (trial.configuration.empty()) {
      summaries.emplace_back(trial, summary, 1);
    } else if (shown.insert(trial.configuration).second) {
      const auto& same = members.at(trial.configuration);
      summaries.emplace_back(trial, MedianSummary(same), same.size());
    }
  }
  std::string html =
      "<h2 id=\"stages\">Stage breakdown</h2>\n<p>Medians over timed iterations of the "
      "slowest rank, per stage, in each group's ranking (fastest first); per "
      "stage (with replicates, the median over the trial's launches; over seeds of one "
      "configuration, the median over them). <em>Outside blocks</em> "
      "is step time not spent in transformer blocks (embeddings, final layer, gathers, the "
      "sampler); blocks are timed with <code>profile_blocks: true</code>.</p>\n";
  const auto ms3 = [](const char* name) {
    return Column{.name = name, .hint = ColumnHint::kMs, .decimals = 3};
  };
  Table table({{.name = "campaign", .hint = ColumnHint::kCount},
               {.name = "configuration"},
               {.name = "trial"},
               ms3("iteration ms"),
               {.name = "steps", .hint = ColumnHint::kCount},
               ms3("mean step ms"),
               ms3("first step ms"),
               ms3("blocks ms"),
               ms3("outside blocks ms"),
               {.name = "slowest block"},
               ms3("VAE decode ms"),
               {.name = "decode share",
                .hint = ColumnHint::kPercent,
                .decimals = 0,
                .description = "the VAE decode's part of the iteration (scope pipeline)",
                .html_class = "decode-share"},
               {.name = "decode speed-up",
                .hint = ColumnHint::kRatio,
                .notes = true,
                .description = "the 1-rank trial's decode time over this one's: what "
                               "vae_parallel bought",
                .html_class = "decode-speedup"}});
  for (const auto& [trial, s, seeds] : summaries) {
    const bool blocks = s.blocks > 0;
    const std::string key =
        seeds > 1 ? fmt::format("{} … ({} seeds)", trial.trial_key, seeds) : trial.trial_key;
    Cell decode_speedup;
    if (trial.decode_speedup)
      decode_speedup =
          Cell(*trial.decode_speedup, trial.decode_speedup_doubts)
              .WithHtml({.markup = fmt::format("{:.2f}x{}", *trial.decode_speedup,
                                               trial.decode_speedup_doubts.empty()
                                                   ? ""
                                                   : " <span class=\"doubt\">(" +
                                                         HtmlEscape(trial.decode_speedup_doubts) +
                                                         ")</span>")});
    table.AddRow(
        {Cell(trial.campaign), Cell(trial.label),
         Cell(key).WithHtml({.markup = "<code>" + HtmlEscape(key) + "</code>"}),
         Cell(s.iteration_ms), Cell(s.steps), Cell(s.steps ? s.steps_ms / s.steps : 0.0),
         Cell(s.first_step_ms), blocks ? Cell(s.blocks_ms) : Cell(),
         blocks ? Cell(s.steps_ms - s.blocks_ms) : Cell(),
         Cell(blocks ? fmt::format("block {} ({:.3f} ms over all steps)", s.slowest_block,
                                   s.slowest_block_ms)
                     : "-"),
         s.decode_ms ? Cell(*s.decode_ms) : Cell(),
         s.decode_ms && s.iteration_ms > 0 ? Cell(100.0 * *s.decode_ms / s.iteration_ms) : Cell(),
         std::move(decode_speedup)});
  }
  html += "<div class=\"scroll\">" + HtmlTable(table, {.none = "-"}) + "</div>\n";
  return html;
}

}  // namespace ditbench

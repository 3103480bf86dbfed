#include "report/stage_breakdown.h"

#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/trial_metrics.h"
#include "report/html_report.h"
#include "stats/stats.h"

namespace ditbench {

std::optional<StageSummary> SummarizeStages(const std::vector<Sample>& samples) {
  std::set<std::string> stages;
  for (const Sample& sample : samples)
    if (!sample.warmup) stages.insert(sample.stage);
  if (stages.size() <= 1) return std::nullopt;  // only "iteration": nothing to break down

  StageSummary s;
  std::map<int, double> per_block;  // block index -> sum over steps of its median
  for (const std::string& stage : stages) {
    const double median = Summarize(SlowestSeries(samples, stage)).median;
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

std::vector<std::pair<StageTrial, StageSummary>> SummarizeStages(
    ResultsDb& db, const std::vector<StageTrial>& trials) {
  std::vector<std::pair<StageTrial, StageSummary>> out;
  for (const StageTrial& trial : trials)
    if (auto summary = SummarizeStages(db.Samples(trial.campaign, trial.trial_key)))
      out.emplace_back(trial, *summary);
  return out;
}

std::string RenderStageBreakdown(ResultsDb& db, const std::vector<StageTrial>& trials) {
  auto summaries = SummarizeStages(db, trials);
  if (summaries.empty()) return "";
  std::string html =
      "<h2>Stage breakdown</h2>\n<p>Medians over timed iterations of the slowest rank, per "
      "stage. <em>Outside blocks</em> is step time not spent in transformer blocks (embeddings, "
      "final layer, gathers, the sampler); blocks are timed with <code>profile_blocks: "
      "true</code>.</p>\n<div class=\"scroll\"><table><tr><th>campaign</th><th>configuration</th><th>trial</th>"
      "<th>iteration ms</th><th>steps</th><th>mean step ms</th><th>first step ms</th>"
      "<th>blocks ms</th><th>outside blocks ms</th><th>slowest block</th>"
      "<th>VAE decode ms</th></tr>\n";
  for (const auto& [trial, s] : summaries) {
    const bool blocks = s.blocks > 0;
    html += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td>"
        "<td class=\"num\">{:.3f}</td><td class=\"num\">{}</td><td class=\"num\">{:.3f}</td>"
        "<td class=\"num\">{:.3f}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td>{}</td><td class=\"num\">{}</td></tr>\n",
        trial.campaign, HtmlEscape(trial.label), HtmlEscape(trial.trial_key), s.iteration_ms,
        s.steps, s.steps ? s.steps_ms / s.steps : 0.0, s.first_step_ms,
        blocks ? fmt::format("{:.3f}", s.blocks_ms) : "-",
        blocks ? fmt::format("{:.3f}", s.steps_ms - s.blocks_ms) : "-",
        blocks ? fmt::format("block {} ({:.3f} ms over all steps)", s.slowest_block,
                             s.slowest_block_ms)
               : "-",
        s.decode_ms ? fmt::format("{:.3f}", *s.decode_ms) : "-");
  }
  html += "</table></div>\n";
  return html;
}

}  // namespace ditbench

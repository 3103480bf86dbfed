#include "report/report_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "report/html_text.h"

namespace ditbench {

std::optional<GroupWinner> WinnerOf(const std::vector<ResultRow>& ranked) {
  std::optional<std::int64_t> newest;
  for (const ResultRow& row : ranked)
    if (row.measured() && (!newest || row.campaign > *newest)) newest = row.campaign;
  if (!newest) return std::nullopt;
  const OneRankBaselines baselines(ranked);
  std::optional<GroupWinner> winner;
  std::size_t count = 0;
  std::vector<ResultRow> skipped;
  for (const ResultRow& row : ranked) {
    if (!row.measured() || row.campaign != *newest) continue;
    ++count;
    if (winner) continue;
    if (row.below_quality()) {  // fast at output it gets wrong: never the answer
      skipped.push_back(row);
      continue;
    }
    winner.emplace();
    winner->row = row;
    if (const ResultRow* baseline = baselines.For(row)) {
      winner->baseline = *baseline;
      if (*row.latency_ms > 0) {
        winner->speedup = *baseline->latency_ms / *row.latency_ms;
        winner->efficiency = *winner->speedup / static_cast<double>(row.world_size);
      }
    }
  }
  if (!winner) {
    winner.emplace();
    winner->found = false;
  }
  winner->ranked = count;
  winner->skipped = std::move(skipped);
  return winner;
}

std::string RenderSummary(const std::vector<SummaryGroup>& groups,
                          const CampaignLabels& campaigns) {
  if (groups.empty()) return "";
  std::string html =
      "<h2 id=\"summary\">Summary: the fastest configuration per group</h2>\n"
      "<p class=\"note\">Per group, the fastest configuration of its newest campaign; speedup, "
      "efficiency and output error are against the 1-rank trial of the same computation (the "
      "tables' and charts' baseline). A configuration below quality (it missed its sweep's "
      "quality gates) is never the winner; a faster one skipped for that is named.</p>\n"
      "<div class=\"scroll\"><table class=\"summary\"><tr><th>group</th><th>fastest "
      "configuration</th><th>campaign</th><th>latency ms</th><th>speedup vs 1 rank</th>"
      "<th>efficiency</th><th>peak mem MB</th><th>output error</th><th>of</th></tr>\n";
  for (const SummaryGroup& group : groups) {
    const std::string link =
        fmt::format("<a href=\"#{}\">{}</a>", group.anchor, HtmlEscape(group.title));
    if (!group.winner) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"8\">no measured trial</td></tr>\n", link);
      continue;
    }
    const GroupWinner& w = *group.winner;
    std::string skipped;
    for (const ResultRow& row : w.skipped)
      skipped += fmt::format("<div class=\"below-quality\">skipped {}: below quality ({})</div>",
                             HtmlEscape(ConfigurationLabel(row)),
                             HtmlEscape(std::string(MissedGates(row.quality))));
    if (!w.found) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"8\">no configuration meets the quality "
                          "gates{}</td></tr>\n", link, skipped);
      continue;
    }
    const ResultRow& row = w.row;
    html += fmt::format(
        "<tr class=\"winner\"><td>{}</td><td><strong>{}</strong>{}</td><td>{}</td>"
        "<td class=\"num\">{:.2f}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} "
        "configuration(s)</td></tr>\n",
        link, HtmlEscape(ConfigurationLabel(row)), skipped,
        HtmlEscape(CampaignName(campaigns, row.campaign)), *row.latency_ms,
        w.speedup ? fmt::format("{:.2f}x", *w.speedup) : "- (no 1-rank trial)",
        w.efficiency ? fmt::format("{:.0f}%", 100 * *w.efficiency) : "-",
        row.peak_mem_mb ? fmt::format("{:.0f}", *row.peak_mem_mb) : "-",
        row.output_error ? (*row.output_error == 0 ? std::string("0 (exact)")
                                                   : fmt::format("{:.2g}", *row.output_error))
                         : (row.world_size == 1 ? std::string("- (is the 1-rank trial)")
                                                : std::string("-")),
        w.ranked);
  }
  return html + "</table></div>\n";
}

std::string RenderContents(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string html = "<nav class=\"contents\"><h2>Contents</h2>\n<ol>\n";
  for (const auto& [anchor, text] : entries)
    html += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", anchor, HtmlEscape(text));
  return html + "</ol></nav>\n";
}

}  // namespace ditbench

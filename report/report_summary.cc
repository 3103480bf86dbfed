#include "report/report_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "report/html_text.h"

namespace ditbench {

std::string RenderSummary(const std::vector<SummaryGroup>& groups,
                          const CampaignLabels& campaigns) {
  if (groups.empty()) return "";
  std::string html =
      "<h2 id=\"summary\">Summary: the fastest configuration per group</h2>\n"
      "<p class=\"note\">Per group, the fastest configuration of its newest campaign; speedup, "
      "efficiency and output error are against the 1-rank reference trial: the same "
      "computation without the settings that approximate it or skip work (the tables' and "
      "charts' baseline; a cached winner's says \"vs 1 rank without cache\"). A configuration "
      "below quality (it missed its sweep's quality gates) is never the winner; a faster one "
      "skipped for that is named. A winner whose numbers are in doubt (a busy machine, a "
      "baseline borrowed from another campaign or measured busy, a speedup above the world "
      "size, too few launches) is marked "
      "<span class=\"doubt\">suspect</span> with the reason: measure it again before "
      "acting on it. Campaigns of <code>ditbench bisect</code> and excluded campaigns take no "
      "part.</p>\n"
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
    // A winner in doubt is no plain answer: the row is not green and its cell says why.
    const std::string doubt =
        w.trust.plain() ? ""
                        : fmt::format(" <span class=\"doubt\" title=\"{}\">suspect: {}</span>",
                                      HtmlEscape(w.trust.Meanings()), HtmlEscape(w.trust.Names()));
    const auto mark = [&](std::string text) {
      return w.trust.plain() || text == "-" ? text : text + " ?";
    };
    html += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td><strong>{}</strong>{}{}</td><td>{}</td>"
        "<td class=\"num\">{:.2f}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} "
        "configuration(s)</td></tr>\n",
        w.trust.plain() ? "winner" : "winner suspect", link, HtmlEscape(ConfigurationLabel(row)),
        doubt, skipped, HtmlEscape(CampaignName(campaigns, row.campaign)), *row.latency_ms,
        (w.speedup ? mark(fmt::format("{:.2f}x", *w.speedup)) : "- (no 1-rank trial)") +
            (w.speedup && w.reference != "1 rank"
                 ? fmt::format("<div class=\"note\">vs {}</div>", HtmlEscape(w.reference))
                 : std::string()),
        w.efficiency ? mark(fmt::format("{:.0f}%", 100 * *w.efficiency)) : "-",
        row.peak_mem_mb ? fmt::format("{:.0f}", *row.peak_mem_mb) : "-",
        row.output_error
            ? (*row.output_error == 0 ? std::string("0 (exact)")
                                      : fmt::format("{:.2g}", *row.output_error))
            : (row.world_size == 1 ? std::string("- (is the 1-rank trial)") : std::string("-")),
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

#include "report/report_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/comparison.h"
#include "analysis/configuration_group.h"
#include "base/table_printers.h"
#include "report/html_text.h"

namespace ditbench {

namespace {

// A group's winner as the summary's row: `skipped`, the faster configurations below quality
// named under it.
std::vector<Cell> WinnerCells(Cell link, const GroupWinner& w, const std::string& skipped,
                              const CampaignLabels& campaigns) {
  const ResultRow& row = w.row;
  // A winner in doubt is no plain answer: the row is not green and its cell says why.
  const std::string doubt =
      w.trust.plain() ? ""
                      : fmt::format(" <span class=\"doubt\" title=\"{}\">suspect: {}</span>",
                                    HtmlEscape(w.trust.Meanings()), HtmlEscape(w.trust.Names()));
  const auto mark = [&](std::string text) {
    return w.trust.plain() || text == "-" ? text : text + " ?";
  };
  const std::string label = ConfigurationLabel(row);
  Cell speedup("- (no 1-rank trial)");
  if (w.speedup) {
    std::string text = mark(fmt::format("{:.2f}x", *w.speedup));
    speedup = Cell(text).WithHtml(
        {.markup = HtmlEscape(text) +
                   (w.reference != "1 rank"
                        ? fmt::format("<div class=\"note\">vs {}</div>", HtmlEscape(w.reference))
                        : std::string())});
  }
  return {
      std::move(link),
      Cell(label).WithHtml(
          {.markup = fmt::format("<strong>{}</strong>{}{}", HtmlEscape(label), doubt, skipped)}),
      Cell(CampaignName(campaigns, row.campaign)),
      Cell(*row.latency_ms),
      std::move(speedup),
      Cell(w.efficiency ? mark(fmt::format("{:.0f}%", 100 * *w.efficiency)) : "-"),
      row.peak_mem_mb ? Cell(*row.peak_mem_mb) : Cell(),
      Cell(row.output_error
               ? (*row.output_error == 0 ? std::string("0 (exact)")
                                         : fmt::format("{:.2g}", *row.output_error))
               : (row.world_size == 1 ? std::string("- (is the 1-rank trial)") : std::string("-"))),
      Cell(fmt::format("{} configuration(s)", w.ranked))};
}

}  // namespace

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
      "part.</p>\n";
  Table table({{.name = "group"},
               {.name = "fastest configuration"},
               {.name = "campaign"},
               {.name = "latency ms", .hint = ColumnHint::kMs},
               {.name = "speedup vs 1 rank", .align = Align::kRight},
               {.name = "efficiency", .align = Align::kRight},
               {.name = "peak mem MB", .hint = ColumnHint::kNumber, .decimals = 0},
               {.name = "output error", .align = Align::kRight},
               {.name = "of", .align = Align::kRight}});
  for (const SummaryGroup& group : groups) {
    Cell link = Cell(group.title)
                    .WithHtml({.markup = fmt::format("<a href=\"#{}\">{}</a>", group.anchor,
                                                     HtmlEscape(group.title))});
    // A group without a winner says why in its configuration cell, the rest of its row empty.
    const auto without_winner = [&](Cell why) {
      std::vector<Cell> cells(table.columns().size(), Cell(""));
      cells[0] = std::move(link);
      cells[1] = std::move(why);
      table.AddRow(std::move(cells));
    };
    if (!group.winner) {
      without_winner(Cell("no measured trial"));
      continue;
    }
    const GroupWinner& w = *group.winner;
    std::string skipped;
    for (const ResultRow& row : w.skipped)
      skipped += fmt::format("<div class=\"below-quality\">skipped {}: below quality ({})</div>",
                             HtmlEscape(ConfigurationLabel(row)),
                             HtmlEscape(std::string(MissedGates(row.quality))));
    if (!w.found) {
      const std::string why = "no configuration meets the quality gates";
      without_winner(Cell(why).WithHtml({.markup = why + skipped}));
      continue;
    }
    table.AddRow(WinnerCells(std::move(link), w, skipped, campaigns),
                 {.css_class = w.trust.plain() ? "winner" : "winner suspect"});
  }
  return html + "<div class=\"scroll\">" +
         HtmlTable(table, {.table_class = "summary", .none = "-"}) + "</div>\n";
}

std::string RenderContents(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string html = "<nav class=\"contents\"><h2>Contents</h2>\n<ol>\n";
  for (const auto& [anchor, text] : entries)
    html += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", anchor, HtmlEscape(text));
  return html + "</ol></nav>\n";
}

}  // namespace ditbench

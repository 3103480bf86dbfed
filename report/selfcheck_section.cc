#include "report/selfcheck_section.h"

#include <fmt/format.h>

#include "base/table_printers.h"
#include "report/html_text.h"

namespace ditbench {

std::string RenderSelfcheckSection(const std::vector<SelfcheckRecord>& checks) {
  if (checks.empty()) return "";
  std::string html =
      "<h3 id=\"selfcheck\">Machine checks</h3>\n<p>The newest <code>ditbench selfcheck</code> "
      "of each device (docs/selfcheck.md): its rows that did not pass.</p>\n"
      "";
  Table table({{.name = "device"},
               {.name = "host"},
               {.name = "build"},
               {.name = "checked"},
               {.name = "rows", .description = "the rows that did not pass"}});
  for (const SelfcheckRecord& check : checks) {
    std::string text, markup;
    for (const std::string& line : NotPassingLines(check.rows)) {
      text += (text.empty() ? "" : "\n") + line;
      markup += (markup.empty() ? "" : "<br>") + HtmlEscape(line);
    }
    table.AddRow({Cell(check.device), Cell(check.host), Cell(check.build), Cell(check.started_at),
                  Cell(text).WithHtml({.markup = markup})});
  }
  return html + "<div class=\"scroll\">" + HtmlTable(table) + "</div>\n";
}

}  // namespace ditbench

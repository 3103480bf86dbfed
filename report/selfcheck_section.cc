#include "report/selfcheck_section.h"

#include <fmt/format.h>

#include "report/html_text.h"

namespace ditbench {

std::string RenderSelfcheckSection(const std::vector<SelfcheckRecord>& checks) {
  if (checks.empty()) return "";
  std::string html =
      "<h3 id=\"selfcheck\">Machine checks</h3>\n<p>The newest <code>ditbench selfcheck</code> "
      "of each device (docs/selfcheck.md): its rows that did not pass.</p>\n"
      "<div class=\"scroll\"><table><tr><th>device</th><th>host</th><th>build</th>"
      "<th>checked</th><th>rows</th></tr>\n";
  for (const SelfcheckRecord& check : checks) {
    std::string lines;
    for (const std::string& line : NotPassingLines(check.rows))
      lines += (lines.empty() ? "" : "<br>") + HtmlEscape(line);
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        HtmlEscape(check.device), HtmlEscape(check.host), HtmlEscape(check.build),
                        HtmlEscape(check.started_at), lines);
  }
  return html + "</table></div>\n";
}

}  // namespace ditbench

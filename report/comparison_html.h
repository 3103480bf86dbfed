// The comparison (analysis/comparison.h) as a section of the HTML report (`report --baseline`):
// what differs between baseline and candidate first, then every matched trial sorted by
// effect (most slowed down first) with its verdict coloured (slower red, faster green, same
// grey, inconclusive amber), the change with its 95% CI drawn as a bar, the thresholds used,
// and the unmatched trials in a collapsible list. Pure: text in, text out.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/comparison.h"

namespace ditbench {

// The section's HTML (an <h2> and what follows). CSS classes: verdict-slower, verdict-faster,
// verdict-same, verdict-inconclusive (styles in kComparisonStyle, report/report_assets.h).
// At most `max_rows` trials are listed (0: all): those whose verdict is not `same` first, in
// the comparison's order (by change); the rest are counted, with the command that lists them.
std::string RenderComparisonSection(const Comparison& comparison, std::size_t max_rows = 0);

// Rows of the comparison section of `report --baseline`: the page stays small at thousands
// of matched trials (`ditbench compare` lists every one).
inline constexpr std::size_t kReportComparisonRows = 200;

// A self-contained page holding only the section (`compare --format html`): no script, no
// network.
std::string RenderComparisonPage(const Comparison& comparison);

}  // namespace ditbench

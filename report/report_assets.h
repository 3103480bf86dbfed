// The report's own script and style sheets, and Chart.js: files under report/assets/ (Chart.js:
// DITBENCH_CHARTJS), compiled into the report library by report/CMakeLists.txt as raw string
// literals, so `ditbench report` needs no file and no network at run time. Each is inlined into
// a page as written: a script holds no "</script", a style sheet no "</style" (the build
// checks). The report's own texts begin with a line break: the element's text starts on a line
// of its own, as when they were literals in the source.
#pragma once

#include <cstddef>

namespace ditbench {

// The report page's style sheet (report/assets/report.css).
extern const char kReportStyle[];

// The comparison section's style sheet (report/assets/comparison.css): the verdict classes
// verdict-slower, verdict-faster, verdict-same, verdict-inconclusive, and the interval bars.
extern const char kComparisonStyle[];

// The chart script (report/assets/charts.js): reads the JSON array in
// <script id="ditbench-charts"> and draws each chart of report/group_charts.h's kinds, and the
// Planner section's "prediction" scatter (report/planner_section.h).
extern const char kChartScript[];

// The history section's style sheet and script (report/assets/history.css, history.js): the
// script draws every chart in <script id="ditbench-history">: points with interval whiskers,
// the stepped segment levels, change points as dashed vertical lines with their size.
extern const char kHistoryStyle[];
extern const char kHistoryScript[];

// Chart.js, minified: kChartJsSize bytes (no terminating NUL counted).
extern const char kChartJs[];
extern const std::size_t kChartJsSize;

}  // namespace ditbench

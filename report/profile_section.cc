#include "report/profile_section.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "analysis/configuration_group.h"
#include "base/table_printers.h"
#include "experiments/trial_settings.h"
#include "report/html_text.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

double MedianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Quantile(values, 0.5);
}

// The steps of a PipeFusion configuration that run synchronously (its warm-up steps).
std::string SynchronousSteps(const ResultRow& row) {
  if (row.pipefusion <= 1 || row.pipefusion_warmup_steps <= 0) return "";
  return row.pipefusion_warmup_steps == 1
             ? " (step 0 synchronous)"
             : fmt::format(" (steps 0-{} synchronous)", row.pipefusion_warmup_steps - 1);
}

// The trial's per-step schedule as stored (experiments/trial.h); empty when it has none.
StepSchedule ScheduleOf(const ResultRow& row) {
  const nlohmann::json computation = RowIdentity(row);
  TrialConfig scratch;
  std::string expected;
  if (computation.is_object() && computation.contains("schedule"))
    ApplySetting(scratch, "schedule", computation["schedule"], &expected);
  return scratch.schedule;
}

// The steps a schedule keeps in high precision, as a label says them: "0-1, 18-19".
std::string HighPrecisionSteps(const StepSchedule& schedule, int steps) {
  std::vector<std::string> ranges;
  auto range = [&](int first, int last) {
    if (first > last) return;
    ranges.push_back(first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last));
  };
  range(0, schedule.high_precision_first - 1);
  range(steps - schedule.high_precision_last, steps - 1);
  std::string text;
  for (const std::string& r : ranges) text += (text.empty() ? "" : ", ") + r;
  return text;
}

// What a step ran, as its point's tooltip says it: "attention flash · fp8_rowwise".
std::string StepRan(const StepKernels& step) {
  std::string ran = step.attention.empty()
                        ? step.linear
                        : fmt::format("attention {} · {}", step.attention, step.linear);
  if (step.reused) ran += " · reused the cached blocks (block 0 ran)";
  return step.expert != 0 ? fmt::format("expert {} · {}", step.expert + 1, ran) : ran;
}

// The steps where a model of experts (Wan 2.2 A14B) changed expert, as the chart's vertical
// marks: between step i - 1 and step i, named "expert 1 -> 2".
void MarkExpertSwitches(const std::vector<StepKernels>& steps, nlohmann::json& marks) {
  for (std::size_t i = 1; i < steps.size(); ++i) {
    if (steps[i].expert == steps[i - 1].expert) continue;
    const std::string text =
        fmt::format("expert {} -> {}", steps[i - 1].expert + 1, steps[i].expert + 1);
    const double x = static_cast<double>(i) - 0.5;
    bool seen = false;
    for (const nlohmann::json& mark : marks) seen |= mark["x"] == x && mark["label"] == text;
    if (!seen) marks.push_back({{"x", x}, {"label", text}});
  }
}

// A rank's trace in the trial's run folder, as stored: an absolute path, which a report opened
// from disk follows as a file:// link.
std::string TraceHref(const ResultRow& row, const RankTrace& rank) {
  return (std::filesystem::path(row.run_dir) / rank.trace_file).string();
}

}  // namespace

nlohmann::json ProfileChart(const std::string& id, const std::string& title,
                            const std::vector<ResultRow>& rows) {
  nlohmann::json labels = nlohmann::json::array();
  nlohmann::json compute = nlohmann::json::array(), comm = nlohmann::json::array(),
                 idle = nlohmann::json::array();
  for (const ResultRow& row : rows) {
    if (!row.compute_share || !row.comm_share || !row.idle_share) continue;
    labels.push_back(ConfigurationLabel(row));
    compute.push_back(100 * *row.compute_share);
    comm.push_back(100 * *row.comm_share);
    idle.push_back(100 * *row.idle_share);
  }
  if (labels.empty()) return nullptr;
  nlohmann::json datasets = nlohmann::json::array();
  for (auto& [segment, data] : {std::pair{"compute", compute},
                                std::pair{"exposed communication", comm},
                                std::pair{"idle", idle}})
    datasets.push_back({{"label", segment}, {"color", StageColor(segment)}, {"data", data}});
  return {{"id", id},
          {"kind", "stages"},
          {"title", title},
          {"y_title", "% of the slowest rank's step time (profiled pass)"},
          {"labels", labels},
          {"datasets", datasets}};
}

nlohmann::json StepChart(const std::string& id, const std::string& title,
                         const std::vector<ResultRow>& rows,
                         const std::vector<ResultRow>& unfolded, const StagesByTrial& stages) {
  // Per configuration, per step, the medians of its trials (seeds).
  std::map<std::string, std::vector<std::vector<double>>> by_label;
  for (const ResultRow& row : unfolded) {
    const auto found = stages.find({row.campaign, row.trial_key});
    if (!row.measured() || found == stages.end() || found->second.step_ms.size() < 2) continue;
    auto& steps = by_label[ConfigurationLabel(row)];
    const std::vector<double>& ms = found->second.step_ms;
    if (steps.size() < ms.size()) steps.resize(ms.size());
    for (std::size_t i = 0; i < ms.size(); ++i)
      if (ms[i] > 0) steps[i].push_back(ms[i]);
  }
  if (by_label.empty()) return nullptr;
  nlohmann::json datasets = nlohmann::json::array(), marks = nlohmann::json::array();
  std::map<std::string, int> styles;
  std::vector<std::string> done;
  for (const ResultRow& row : rows) {
    const std::string label = ConfigurationLabel(row);
    const auto found = by_label.find(label);
    if (found == by_label.end() || std::find(done.begin(), done.end(), label) != done.end())
      continue;
    done.push_back(label);
    MarkExpertSwitches(row.step_kernels, marks);
    nlohmann::json points = nlohmann::json::array();
    std::vector<double> steady;
    double first = 0;
    // A per-step schedule's high-precision steps are hollow; every point says what it ran.
    const StepSchedule schedule = ScheduleOf(row);
    const int steps = static_cast<int>(found->second.size());
    int reused_steps = 0;  // steps whose cache reused the blocks after the first (hollow)
    for (std::size_t i = 0; i < found->second.size(); ++i) {
      if (found->second[i].empty()) continue;
      const double ms = MedianOf(found->second[i]);
      nlohmann::json point = {{"x", i}, {"y", ms}};
      if (i < row.step_kernels.size()) point["ran"] = StepRan(row.step_kernels[i]);
      const bool reused = i < row.step_kernels.size() && row.step_kernels[i].reused;
      reused_steps += reused;
      if (reused || (!schedule.empty() && schedule.HighPrecision(static_cast<int>(i), steps)))
        point["hollow"] = true;
      points.push_back(std::move(point));
      if (i == 0) first = ms;
      else steady.push_back(ms);
    }
    std::string name = label + SynchronousSteps(row);
    if (!schedule.empty())
      name +=
          fmt::format(" (hollow: steps {} in high precision)", HighPrecisionSteps(schedule, steps));
    if (first > 0 && !steady.empty())
      name += fmt::format(": step 0 = {:.1f}x steady", first / MedianOf(steady));
    const std::string strategy = StrategyName(row);
    datasets.push_back({{"label", name},
                        {"color", StrategyColor(strategy)},
                        {"style", styles[strategy]++},
                        {"points", std::move(points)}});
  }
  nlohmann::json chart = {{"id", id}, {"kind", "steps"}, {"title", title}, {"datasets", datasets}};
  if (!marks.empty()) chart["marks"] = std::move(marks);
  return chart;
}

std::string RenderProfileTable(const std::vector<ResultRow>& rows) {
  Table table({{.name = "configuration", .html_class = "wrap"},
               {.name = "slowest rank",
                .hint = ColumnHint::kCount,
                .description = "the rank with the longest profiled steps"},
               {.name = "steps ms",
                .hint = ColumnHint::kMs,
                .description = "one profiled denoising pass, summed over steps"},
               {.name = "compute", .align = Align::kRight},
               {.name = "exposed comm",
                .align = Align::kRight,
                .description = "communication with no compute beside it"},
               {.name = "idle", .align = Align::kRight},
               {.name = "overlap ms",
                .hint = ColumnHint::kMs,
                .description = "communication hidden behind compute"},
               {.name = "top kernels (slowest rank)", .html_class = "wrap kernels"},
               {.name = "traces"}});
  for (const ResultRow& row : rows) {
    if (!row.profile) continue;
    const RankTrace* slowest = row.profile->Slowest();
    std::string kernels, links;
    if (slowest) {
      for (const KernelTime& k : slowest->profile->top_kernels) {
        if (!kernels.empty()) kernels += "<br>";
        kernels += fmt::format("{:.2f} ms{} {}", k.ms, k.communication ? " (comm)" : "",
                               HtmlEscape(k.name.size() > 80 ? k.name.substr(0, 77) + "..."
                                                              : k.name));
      }
    }
    for (const RankTrace& rank : row.profile->ranks) {
      if (!links.empty()) links += " ";
      if (rank.trace_file.empty() || !rank.profile)
        links += fmt::format("<span title=\"{}\">rank {}: -</span>", HtmlEscape(rank.error),
                             rank.rank);
      else
        links += fmt::format("<a href=\"{}\">rank {}</a>",
                             HtmlEscape(TraceHref(row, rank)), rank.rank);
    }
    const StepProfile* total = slowest ? &slowest->profile->total : nullptr;
    table.AddRow({Cell(ConfigurationLabel(row)), slowest ? Cell(slowest->rank) : Cell(),
                  total ? Cell(total->step_ms) : Cell(), Cell(Percent(row.compute_share)),
                  Cell(Percent(row.comm_share)), Cell(Percent(row.idle_share)),
                  total ? Cell(total->overlap_ms) : Cell(), Cell("").WithHtml({.markup = kernels}),
                  Cell("").WithHtml({.markup = links})});
  }
  if (table.empty()) return "";
  return "<div class=\"scroll\">" + HtmlTable(table, {.table_class = "profiles", .none = "-"}) +
         "</div>\n";
}

}  // namespace ditbench

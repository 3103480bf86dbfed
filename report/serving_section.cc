#include "report/serving_section.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/configuration_group.h"
#include "analysis/row_metrics.h"
#include "base/table_printers.h"
#include "base/terminal_text.h"
#include "report/chart_style.h"
#include "report/html_text.h"

namespace ditbench {
namespace {

std::optional<double> Extra(const ResultRow& row, const char* name) {
  const auto it = row.extra_metrics.find(name);
  if (it == row.extra_metrics.end()) return std::nullopt;
  return it->second.value;
}

// The offered rate as the table shows it: "4.5", a share of capacity "1.92 (0.5 x 3.84)".
std::string OfferedText(const ServedTrial& t) {
  if (t.rate <= 0) return "closed loop / trace";
  if (t.of_capacity && t.capacity_per_s)
    return fmt::format("{:.3g} ({:g} x {:.3g})", t.rate, *t.of_capacity, *t.capacity_per_s);
  return fmt::format("{:g}", t.rate);
}

std::string Ms(std::optional<double> ms) { return ms ? fmt::format("{:.1f}", *ms) : "-"; }

// A note from the database is shown whole up to this many bytes (16 shapes' figures fit).
constexpr std::size_t kNoteBytes = 2000;

// A trial's note, escaped, each of its "serve: ..." clauses on a line of its own.
std::string NoteHtml(const std::string& note) {
  std::string html = HtmlEscape(ForTerminal(note, kNoteBytes));
  for (std::size_t at = 0; (at = html.find("; serve: ", at)) != std::string::npos;)
    html.replace(at, 2, "<br>");
  return html;
}

}  // namespace

std::string ServedTrial::BusyRequestsText() const {
  if (!busy_requests || *busy_requests <= 0) return "";
  return fmt::format("{:.0f} of {} requests busy", *busy_requests, requests);
}

std::vector<ServedTrial> ServedTrials(const std::vector<ResultRow>& rows) {
  std::vector<ServedTrial> trials;
  for (const ResultRow& row : rows) {
    if (!row.measured()) continue;
    const nlohmann::json computation = nlohmann::json::parse(row.computation, nullptr, false);
    if (!computation.is_object() || !computation.contains("serve") ||
        !computation["serve"].is_object())
      continue;
    nlohmann::json serve = computation["serve"];
    ServedTrial t;
    t.rate = OfferedRate(row).value_or(0);  // a share of capacity: the rate it came to
    if (const nlohmann::json& rate = serve["rate"]; rate.is_object()) {
      if (const auto share = rate.find("of_capacity"); share != rate.end() && share->is_number())
        t.of_capacity = share->get<double>();
      t.capacity_per_s = Extra(row, "capacity_per_s");
    }
    serve.erase("rate");
    std::string settings;
    for (const auto& [key, value] : serve.items())
      settings += fmt::format("{}{}={}", settings.empty() ? "" : " ", key,
                              value.is_string() ? value.get<std::string>() : value.dump());
    t.load = fmt::format("{} {}px{} {} {} steps={}: {}", row.model, row.resolution,
                         row.frames > 0 ? fmt::format(" {} frames", row.frames) : "", row.precision,
                         row.scope, row.steps, settings);
    t.layout = ConfigurationLabel(row);  // the load is the table's, so not in the label
    t.color = StrategyColor(StrategyName(row));
    t.p50_ms = row.latency_ms.value_or(0);
    t.p95_ms = Extra(row, "p95_ms");
    t.requests_per_s = Extra(row, "requests_per_s");
    t.slo_attainment = Extra(row, "slo_attainment");
    t.queue_ms = Extra(row, "queue_ms");
    t.busy = row.busy;
    t.note = row.metrics_note;
    t.requests = row.iterations.value_or(0);
    t.busy_requests = Extra(row, "busy_requests");
    trials.push_back(std::move(t));
  }
  return trials;
}

std::string RenderServingSection(const std::vector<ResultRow>& rows, nlohmann::json& charts) {
  const std::vector<ServedTrial> trials = ServedTrials(rows);
  if (trials.empty()) return "";
  std::map<std::string, std::vector<const ServedTrial*>> loads;
  for (const ServedTrial& t : trials) loads[t.load].push_back(&t);
  std::string html =
      "<h2 id=\"serving\">Serving under load: latency against offered load per layout</h2>\n"
      "<p class=\"note\">Each serving trial served its load of requests on its replicas (dp "
      "groups) from one queue (docs/measurement.md, \"Serving under load\"). Per load, the "
      "latency of a request (arrival to end, queue wait included) against the offered rate: p50 "
      "solid, p95 dashed (a p95 its requests could not bound is left out); where a curve bends "
      "up, that layout's queue grows. Per rate, the best layout: the highest SLO attainment, then "
      "the lowest p95 (else p50). A trial measured while the machine was busy is marked ?, with "
      "how many of its requests were served while it was, where that is known.</p>\n";
  for (const auto& [load, served] : loads) {
    html += fmt::format("<h3>{}</h3>\n", HtmlEscape(load));
    // The chart: one p50 and one p95 series per layout, over the rates.
    std::map<std::string, std::vector<const ServedTrial*>> by_layout;
    for (const ServedTrial* t : served)
      if (t->rate > 0) by_layout[t->layout].push_back(t);
    if (!by_layout.empty()) {
      nlohmann::json datasets = nlohmann::json::array();
      for (auto& [layout, points] : by_layout) {
        std::sort(points.begin(), points.end(),
                  [](const ServedTrial* a, const ServedTrial* b) { return a->rate < b->rate; });
        nlohmann::json p50 = nlohmann::json::array(), p95 = nlohmann::json::array();
        for (const ServedTrial* t : points) {
          nlohmann::json point = {{"x", t->rate}, {"y", t->p50_ms}};
          if (const std::string busy = t->BusyRequestsText(); !busy.empty())
            point["doubt"] = busy;
          else if (t->busy)
            point["doubt"] = "busy";
          p50.push_back(point);
          if (t->p95_ms) {
            point["y"] = *t->p95_ms;
            p95.push_back(point);
          }
        }
        const std::string& color = points.front()->color;
        datasets.push_back(
            {{"label", layout + " p50"}, {"color", color}, {"points", p50}, {"dash", false}});
        if (!p95.empty())
          datasets.push_back(
              {{"label", layout + " p95"}, {"color", color}, {"points", p95}, {"dash", true}});
      }
      nlohmann::json chart = {{"id", fmt::format("chart-{}", charts.size())},
                              {"kind", "serving"},
                              {"title", "Latency against offered load: " + load},
                              {"datasets", datasets}};
      html += fmt::format("<div class=\"chart\"><canvas id=\"{}\"></canvas></div>\n",
                          chart["id"].get<std::string>());
      charts.push_back(std::move(chart));
    }
    // The table: per rate, every layout, the best marked.
    std::map<double, std::vector<const ServedTrial*>> by_rate;
    for (const ServedTrial* t : served) by_rate[t->rate].push_back(t);
    Table table({{.name = "offered (requests/s)", .align = Align::kRight},
                 {.name = "layout", .html_class = "layout"},
                 {.name = "p50 ms", .align = Align::kRight},
                 {.name = "p95 ms", .align = Align::kRight},
                 {.name = "requests/s", .align = Align::kRight},
                 {.name = "queue ms", .align = Align::kRight},
                 {.name = "SLO attainment", .align = Align::kRight},
                 {.name = "", .description = "the best layout at this rate; busy requests"},
                 {.name = "note", .html_class = "note"}});
    for (const auto& [rate, layouts] : by_rate) {
      const auto better = [](const ServedTrial* a, const ServedTrial* b) {
        const double sa = a->slo_attainment.value_or(0), sb = b->slo_attainment.value_or(0);
        if (sa != sb) return sa > sb;
        return a->p95_ms.value_or(a->p50_ms) < b->p95_ms.value_or(b->p50_ms);
      };
      const ServedTrial* best = *std::min_element(layouts.begin(), layouts.end(), better);
      for (const ServedTrial* t : layouts) {
        const std::string busy_requests = t->BusyRequestsText();
        const char* doubt = t->busy || !busy_requests.empty() ? "?" : "";
        std::string remark = t == best && layouts.size() > 1 ? "best at this rate" : "";
        if (!busy_requests.empty()) remark += (remark.empty() ? "" : "; ") + busy_requests;
        table.AddRow(
            {Cell(OfferedText(*t)), Cell(t->layout), Cell(Ms(t->p50_ms) + doubt),
             Cell(t->p95_ms ? Ms(t->p95_ms) + doubt : std::string("not bounded")),
             Cell(t->requests_per_s ? fmt::format("{:.3g}", *t->requests_per_s) : "-"),
             Cell(Ms(t->queue_ms)),
             Cell(t->slo_attainment ? fmt::format("{:.0f}%", 100 * *t->slo_attainment) : "-"),
             Cell(remark), Cell(t->note).WithHtml({.markup = NoteHtml(t->note)})},
            {.css_class = t == best ? "best" : ""});
      }
    }
    html += "<div class=\"scroll\">" + HtmlTable(table, {.table_class = "serving"}) + "</div>\n";
  }
  return html;
}

}  // namespace ditbench

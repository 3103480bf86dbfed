// The report's serving section (report/serving_section.h): per load, latency against offered
// rate per layout, and per rate the best layout.
#include "report/serving_section.h"

#include <gtest/gtest.h>

namespace ditbench::serving_section_test {
namespace {

// A served trial of `layout` (ulysses or dp 2) at `rate`, its p50 and p95 (0: not bounded) and
// SLO attainment.
ResultRow Served(const char* degree, double rate, double p50, double p95, double slo) {
  ResultRow row;
  row.campaign = 1;
  row.status = "ok";
  row.model = "pixart-alpha-tiny";
  row.resolution = 256;
  row.precision = "fp32";
  row.scope = "pipeline";
  row.steps = 4;
  row.ulysses = row.ring = row.pipefusion = row.cfg = row.dp = 1;
  (std::string(degree) == "dp" ? row.dp : row.ulysses) = 2;
  row.world_size = 2;
  row.latency_ms = p50;
  row.trial_key = std::string(degree) + std::to_string(rate);
  row.computation =
      nlohmann::json(
          {{"model", row.model},
           {"serve",
            {{"arrivals", "poisson"}, {"rate", rate}, {"requests", 100}, {"slo_scale", 5.0}}}})
          .dump();
  const auto metric = [](double value) {
    ExtraMetric m;
    m.value = value;
    return m;
  };
  if (p95 > 0) row.extra_metrics["p95_ms"] = metric(p95);
  row.extra_metrics["slo_attainment"] = metric(slo);
  row.extra_metrics["requests_per_s"] = metric(rate);
  row.extra_metrics["queue_ms"] = metric(p50 / 10);
  return row;
}

TEST(ServingSectionTest, EachLayoutIsACurveOverTheRatesAndTheBestPerRateIsMarked) {
  std::vector<ResultRow> rows = {
      Served("ulysses", 5, 40, 55, 1.0),    Served("dp", 5, 70, 90, 1.0),
      Served("ulysses", 20, 60, 120, 0.95), Served("dp", 20, 75, 110, 0.98),
      Served("ulysses", 40, 900, 0, 0.1),   Served("dp", 40, 300, 700, 0.4)};
  rows[5].busy = true;
  const std::vector<ServedTrial> trials = ServedTrials(rows);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[0].load, trials[5].load);  // one load, its rate apart
  EXPECT_EQ(trials[0].layout, "ulysses=2");
  EXPECT_EQ(trials[1].layout, "dp=2");

  nlohmann::json charts = nlohmann::json::array();
  const std::string html = RenderServingSection(rows, charts);
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_EQ(charts[0]["kind"], "serving");
  const nlohmann::json& datasets = charts[0]["datasets"];
  ASSERT_EQ(datasets.size(), 4u);  // dp and ulysses, p50 and p95 each
  EXPECT_EQ(datasets[0]["label"], "dp=2 p50");
  EXPECT_EQ(datasets[0]["points"].size(), 3u);
  EXPECT_EQ(datasets[0]["points"][2]["doubt"], "busy");
  EXPECT_EQ(datasets[3]["label"], "ulysses=2 p95");
  EXPECT_EQ(datasets[3]["points"].size(), 2u) << "an unbounded p95 is left out";
  // At 5/s both meet every SLO: the lower p95 (Ulysses) is best; at 20/s dp meets more.
  EXPECT_NE(
      html.find("<tr class=\"best\"><td class=\"num\">5</td><td class=\"layout\">ulysses=2</td>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr class=\"best\"><td class=\"num\">20</td><td class=\"layout\">dp=2</td>"),
            std::string::npos);
  EXPECT_NE(
      html.find(
          "<td class=\"layout\">ulysses=2</td><td class=\"num\">900.0</td><td class=\"num\">not "
          "bounded</td>"),
      std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">300.0?</td>"), std::string::npos) << "busy: in doubt";
  // What ingest noted of a trial's figures is in its row, escaped (the database is untrusted).
  rows[3].metrics_note = "serve: stopped early; serve: by shape: 256x256, 4 steps: 61 requests <b>";
  EXPECT_NE(RenderServingSection(rows, charts)
                .find("<td class=\"note\">serve: stopped early<br>serve: by shape: 256x256, 4 "
                      "steps: 61 requests &lt;b&gt;</td>"),
            std::string::npos);
  EXPECT_EQ(html.find("requests busy"), std::string::npos) << "not judged one by one: not said";
  // No serving trial, no section.
  rows = {Served("dp", 5, 70, 90, 1)};
  rows[0].computation = "{\"model\": \"pixart-alpha-tiny\"}";
  EXPECT_EQ(RenderServingSection(rows, charts), "");
}

// A share of capacity (a rate sweep's) is charted and listed at the rate it came to, with its
// share of the capacity it was measured against; the closed loop that measured it has a table.
TEST(ServingSectionTest, AShareOfCapacityIsShownAtTheRateItCameTo) {
  std::vector<ResultRow> rows = {Served("dp", 0, 300, 0, 1.0), Served("dp", 0, 60, 0, 1.0)};
  nlohmann::json capacity = nlohmann::json::parse(rows[0].computation);
  capacity["serve"].erase("rate");
  capacity["serve"]["concurrency"] = 4;
  rows[0].computation = capacity.dump();
  nlohmann::json share = nlohmann::json::parse(rows[1].computation);
  share["serve"]["rate"] = {{"capacity_concurrency", 4}, {"of_capacity", 0.5}};
  rows[1].computation = share.dump();
  ExtraMetric capacity_per_s, offered;
  capacity_per_s.value = 10.6667;
  offered.value = 5.33335;
  rows[1].extra_metrics["capacity_per_s"] = capacity_per_s;
  rows[1].extra_metrics["offered_per_s"] = offered;
  const std::vector<ServedTrial> trials = ServedTrials(rows);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].rate, 0);
  EXPECT_EQ(trials[1].rate, 5.33335);
  EXPECT_EQ(trials[1].of_capacity, 0.5);
  nlohmann::json charts = nlohmann::json::array();
  const std::string html = RenderServingSection(rows, charts);
  ASSERT_EQ(charts.size(), 1u);
  EXPECT_EQ(charts[0]["datasets"][0]["points"][0]["x"], 5.33335);
  EXPECT_NE(html.find("<td class=\"num\">5.33 (0.5 x 10.7)</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("closed loop / trace"), std::string::npos);
}

// A busy trial whose requests were judged one by one says how many a busy stretch touched,
// in the table and in its chart point's doubt; one whose requests all missed it says nothing
// more than a busy trial does.
TEST(ServingSectionTest, ATrialWhoseRequestsWerePartlyBusySaysHowMany) {
  std::vector<ResultRow> rows = {Served("ulysses", 5, 40, 55, 1.0), Served("dp", 5, 70, 90, 1.0),
                                 Served("dp", 20, 75, 110, 0.98)};
  for (ResultRow& row : rows) row.iterations = 80;
  ExtraMetric busy;
  busy.value = 12;
  rows[1].busy = true;
  rows[1].extra_metrics["busy_requests"] = busy;
  busy.value = 0;
  rows[2].busy = true;
  rows[2].extra_metrics["busy_requests"] = busy;
  const std::vector<ServedTrial> trials = ServedTrials(rows);
  EXPECT_EQ(trials[1].BusyRequestsText(), "12 of 80 requests busy");
  EXPECT_EQ(trials[0].BusyRequestsText(), "");
  EXPECT_EQ(trials[2].BusyRequestsText(), "");

  nlohmann::json charts = nlohmann::json::array();
  const std::string html = RenderServingSection(rows, charts);
  ASSERT_EQ(charts.size(), 1u);
  const nlohmann::json& dp = charts[0]["datasets"][0];
  ASSERT_EQ(dp["label"], "dp=2 p50");
  EXPECT_EQ(dp["points"][0]["doubt"], "12 of 80 requests busy");
  EXPECT_EQ(dp["points"][1]["doubt"], "busy");
  EXPECT_NE(
      html.find(
          "<td class=\"layout\">dp=2</td><td class=\"num\">70.0?</td><td class=\"num\">90.0?</td>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"num\">100%</td><td>12 of 80 requests busy</td><td "
                      "class=\"note\"></td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"num\">98%</td><td></td><td class=\"note\"></td></tr>"),
            std::string::npos)
      << html;
}

}  // namespace
}  // namespace ditbench::serving_section_test

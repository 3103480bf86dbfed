// The report's engines section (report/engines_section.h): per shape, each engine and layout in
// a row, ditbench's own model beside them, the newest campaign's trials of each.
#include "report/engines_section.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ditbench::engines_section_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ExtraMetric Metric(double value) {
  ExtraMetric m;
  m.value = value;
  return m;
}

// An ok trial of `sweep` in `campaign` at 64 px and 4 steps, `ms` its latency; `rate` > 0 makes
// it a serving trial with p95 `p95`.
ResultRow Trial(const char* sweep, std::int64_t campaign, Workload workload, double ms,
                double rate = 0, double p95 = 0) {
  ResultRow row;
  row.campaign = campaign;
  row.sweep = sweep;
  row.workload = workload;
  row.status = "ok";
  row.model = "pixart-alpha-tiny";
  row.resolution = 64;
  row.steps = 4;
  row.precision = "fp32";
  row.scope = "pipeline";
  row.ulysses = row.ring = row.pipefusion = row.cfg = row.dp = 1;
  row.world_size = 1;
  row.latency_ms = ms;
  row.ci_low_ms = ms - 1;
  row.ci_high_ms = ms + 1;
  row.trial_key = fmt::format("{}-{}-{}", sweep, campaign, rate);
  nlohmann::json computation = {{"model", row.model}};
  if (rate > 0) {
    computation["serve"] = {{"arrivals", "poisson"}, {"rate", rate}, {"requests", 80}};
    row.extra_metrics["p95_ms"] = Metric(p95);
  }
  row.computation = computation.dump();
  if (workload == Workload::kEngine) {
    row.extra_metrics["ready_s"] = Metric(3.25);
    row.extra_metrics["first_request_ms"] = Metric(410);
  }
  return row;
}

TEST(EnginesSectionTest, NothingWithoutAnEngineTrial) {
  EXPECT_EQ(RenderEnginesSection({Trial("own", 1, Workload::kDit, 20)}, {}), "");
}

TEST(EnginesSectionTest, EachEngineAndLayoutIsARowBesideDitbenchsOwnModel) {
  std::vector<ResultRow> rows = {Trial("engine-serve-cpu", 2, Workload::kEngine, 24.4),
                                 Trial("engine-serve-cpu", 2, Workload::kEngine, 0, 30, 397.5),
                                 Trial("engine-serve-cpu", 2, Workload::kEngine, 0, 10, 120.0),
                                 Trial("own-model", 3, Workload::kDit, 17.0)};
  rows[1].latency_ms = 181.9;  // a load's p50
  rows[2].latency_ms = 60.0;
  rows[0].psnr = 41.5;
  rows[0].ssim = 0.9991;
  rows[0].extra_metrics["restart_psnr"] = Metric(38.2);
  rows[0].extra_metrics["restart_ssim"] = Metric(0.998);
  rows[0].quality = "unresolved: min_psnr 40 > restart band 38.2 dB";
  rows[3].busy = true;
  const std::string html = RenderEnginesSection(rows, {{2, "1"}});
  EXPECT_THAT(html, HasSubstr("<h2 id=\"engines\">"));
  EXPECT_THAT(html, HasSubstr("<h3>64px, 4 steps</h3>"));
  EXPECT_THAT(html, HasSubstr("engine-serve-cpu (version 1)"));
  EXPECT_THAT(html, HasSubstr("24.4 [23.4, 25.4]"));
  // Each load's p95 at its rate, the lower rate first.
  EXPECT_THAT(html, HasSubstr("120.0 at 10/s; 397.5 at 30/s"));
  EXPECT_THAT(html, HasSubstr(">3.25<"));
  EXPECT_THAT(html, HasSubstr(">410.0<"));
  EXPECT_THAT(html, HasSubstr("41.5 dB, SSIM 0.9991; unresolved: min_psnr 40 &gt; restart band"));
  EXPECT_THAT(html, HasSubstr(">38.2 dB<"));
  // ditbench's own model at the same shape, its busy latency in doubt, no band of its own.
  EXPECT_THAT(html, HasSubstr("ditbench: pixart-alpha-tiny"));
  EXPECT_THAT(html, HasSubstr("17.0? [16.0, 18.0]"));
  EXPECT_THAT(html, Not(HasSubstr(">the reference<")));
  rows[3].output_error = 0.0;  // its own reference
  EXPECT_THAT(RenderEnginesSection(rows, {}), HasSubstr(">the reference<"));
}

TEST(EnginesSectionTest, TheNewestCampaignOfAnEngineAndLayoutIsShown) {
  std::vector<ResultRow> rows = {Trial("engine-cpu", 4, Workload::kEngine, 30.0),
                                 Trial("engine-cpu", 7, Workload::kEngine, 21.0),
                                 Trial("engine-cpu", 5, Workload::kEngine, 40.0)};
  rows[1].extra_metrics["restart_ssim"] = Metric(1);  // restarted, every image the same
  const std::string html = RenderEnginesSection(rows, {});
  EXPECT_THAT(html, HasSubstr("21.0 [20.0, 22.0]"));
  EXPECT_THAT(html, Not(HasSubstr("30.0 [")));
  EXPECT_THAT(html, Not(HasSubstr("40.0 [")));
  EXPECT_THAT(html, HasSubstr(">exact<"));
  // Without a version from its server, the engine is its sweep's name.
  EXPECT_THAT(html, HasSubstr(">engine-cpu<"));
}

}  // namespace
}  // namespace ditbench::engines_section_test

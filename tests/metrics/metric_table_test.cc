#include "metrics/metric_table.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ditbench::metric_table_test {
namespace {

TEST(MetricTableTest, NamesAreUniqueAndValid) {
  std::set<std::string_view> names;
  for (const MetricInfo& m : MetricTable()) {
    EXPECT_TRUE(IsValidMetricName(m.name)) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << "twice: " << m.name;
    EXPECT_FALSE(m.description.empty()) << m.name;
  }
}

TEST(MetricTableTest, BuiltInMetricsOfResultRowAreRows) {
  for (const char* name :
       {"latency_ms", "peak_mem_mb", "tflops", "mfu", "joules_per_image", "energy_j",
        "comm_mb_per_step", "output_error", "psnr", "ssim", "images_per_s"})
    EXPECT_NE(FindMetric(name), nullptr) << name;
  EXPECT_EQ(FindMetric("items"), nullptr);  // a program's own
}

// `history --metric` follows the rows shown in history: millisecond metrics, lower better.
TEST(MetricTableTest, EveryRowShownInHistoryIsALowerBetterMillisecondMetric) {
  for (const MetricInfo* m : MetricsShownIn(kShownInHistory)) {
    EXPECT_EQ(m->hint, MetricHint::kMilliseconds) << m->name;
    EXPECT_EQ(m->better, Better::kLower) << m->name;
  }
  EXPECT_FALSE(FindMetric("requests_per_s")->shown_in & kShownInHistory);
}

TEST(MetricTableTest, LatencyIsLowerBetterSlowestRankPooledOverLaunchesShownEverywhere) {
  const MetricInfo* latency = FindMetric("latency_ms");
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(latency->better, Better::kLower);
  EXPECT_EQ(latency->over_ranks, RankReduction::kMax);
  EXPECT_EQ(latency->over_launches, LaunchReduction::kPooled);  // median of launch medians
  for (MetricShownIn where :
       {kShownInReportTable, kShownInCompare, kShownInQueryDefault, kShownInHistory})
    EXPECT_TRUE(latency->shown_in & where);
}

TEST(MetricTableTest, CompareShowsLatencyEnergyGraphCaptureEngineDecodeAndServingInTableOrder) {
  std::vector<std::string_view> names;
  for (const MetricInfo* m : MetricsShownIn(kShownInCompare)) names.push_back(m->name);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{
                "latency_ms", "joules_per_image", "graph_capture_ms", "ready_s", "first_request_ms",
                "decode_ms", "p95_ms", "queue_ms", "requests_per_s", "slo_attainment", "error_rate",
                "goodput_per_s", "server_gpu_mem_rest_mb", "server_gpu_mem_peak_mb"}));
}

// The query's default columns as they were before the table: the table must reproduce them.
// The last three only where some row has them (kShownOnlyWhenSet): energy on GPUs with NVML,
// output error and PSNR where the sweep computes them (issue 34), a serving trial's p95,
// throughput and SLO attainment (issue 39).
TEST(MetricTableTest, QueryDefaultMetricsAreLatencyIntervalCovMemoryEnergyServingAndQuality) {
  std::vector<std::string_view> names;
  for (const MetricInfo* m : MetricsShownIn(kShownInQueryDefault)) names.push_back(m->name);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{
                "latency_ms", "ci_low_ms", "ci_high_ms", "cov", "peak_mem_mb", "joules_per_image",
                "p95_ms", "requests_per_s", "slo_attainment", "output_error", "psnr"}));
}

// A serving trial's busy requests (metrics/busy_requests.h): a count, summed over the replicas'
// leaders and over launches (as the timed requests, `iterations`, are), so that the report can
// say "12 of 80 requests busy"; a column only where some trial has it.
TEST(MetricTableTest, BusyRequestsIsACountSummedOverLaunchesShownInTheReportTable) {
  const MetricInfo* busy = FindMetric("busy_requests");
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->hint, MetricHint::kCount);
  EXPECT_EQ(busy->better, Better::kLower);
  EXPECT_EQ(busy->over_ranks, RankReduction::kSum);
  EXPECT_EQ(busy->over_launches, LaunchReduction::kSum);
  EXPECT_EQ(busy->shown_in, kShownInReportTable | kShownOnlyWhenSet);
}

TEST(MetricTableTest, HintDecidesTheDigits) {
  EXPECT_EQ(FormatMetric(12.345, MetricHint::kMilliseconds), "12.35");
  EXPECT_EQ(FormatMetric(0.4567, MetricHint::kFraction), "45.7%");
  EXPECT_EQ(FormatMetric(1234.6, MetricHint::kMegabytes), "1235");
  EXPECT_EQ(FormatMetric(0.99934, MetricHint::kRatio), "0.9993");
  EXPECT_EQ(FormatMetric(1.0, MetricHint::kRatio), "1");
  EXPECT_EQ(FormatMetric(123456.0, MetricHint::kUnknown), "1.235e+05");
  EXPECT_EQ(FormatMetric(std::numeric_limits<double>::infinity(), MetricHint::kDecibels), "inf");
  EXPECT_EQ(FormatMetric(7.0, MetricHint::kCount), "7");
  EXPECT_EQ(FormatMetric(1234.567, MetricHint::kRate), "1235");
  EXPECT_EQ(FormatMetric(12.345, MetricHint::kRate), "12.3");
}

// SSIM printed as `1`, `1.00` and `0.9993` in one column (issue 34): one format, 4 decimals.
TEST(MetricTableTest, SsimPrintsWithFourFixedDecimalsAndPsnrWithOne) {
  const MetricHint ssim = FindMetric("ssim")->hint;
  EXPECT_EQ(FormatMetric(1.0, ssim), "1.0000");
  EXPECT_EQ(FormatMetric(0.99934, ssim), "0.9993");
  EXPECT_EQ(FormatMetric(0.5, ssim), "0.5000");
  const MetricHint psnr = FindMetric("psnr")->hint;
  EXPECT_EQ(FormatMetric(35.0, psnr), "35.0");
  EXPECT_EQ(FormatMetric(35.26, psnr), "35.3");
  EXPECT_EQ(FormatMetric(std::numeric_limits<double>::infinity(), psnr), "inf");
}

// A table printer given FixedDecimals shows what FormatMetric shows.
TEST(MetricTableTest, FixedDecimalsAreWhatFormatMetricPrints) {
  for (const MetricInfo& m : MetricTable()) {
    const std::optional<int> decimals = FixedDecimals(m.hint);
    if (!decimals) continue;
    for (double v : {0.0, 0.99934, 1.0, 12.345, 1234.5678})
      EXPECT_EQ(FormatMetric(v, m.hint), fmt::format("{:.{}f}", v, *decimals)) << m.name << v;
  }
  EXPECT_FALSE(FixedDecimals(MetricHint::kFraction));
  EXPECT_FALSE(FixedDecimals(MetricHint::kRatio));
}

TEST(MetricTableTest, DeclaredUnitsGiveHints) {
  EXPECT_EQ(HintOfUnit("ms"), MetricHint::kMilliseconds);
  EXPECT_EQ(HintOfUnit("images/s"), MetricHint::kRate);
  EXPECT_EQ(HintOfUnit("MiB"), MetricHint::kMegabytes);
  EXPECT_EQ(HintOfUnit("furlongs"), MetricHint::kUnknown);
  EXPECT_EQ(HintOfUnit("/s"), MetricHint::kUnknown);
  EXPECT_EQ(HintOfUnit(""), MetricHint::kUnknown);
}

TEST(MetricTableTest, BetterNamesRoundTripAndOtherTextIsRefused) {
  for (Better b : {Better::kNone, Better::kLower, Better::kHigher})
    EXPECT_EQ(ParseBetter(BetterName(b)), b);
  EXPECT_FALSE(ParseBetter("Lower"));
  EXPECT_FALSE(ParseBetter("smaller"));
}

TEST(MetricTableTest, ValidNamesAreIdentifiersOfAtMost64Characters) {
  EXPECT_TRUE(IsValidMetricName("images_per_s"));
  EXPECT_TRUE(IsValidMetricName("_x9"));
  EXPECT_TRUE(IsValidMetricName(std::string(64, 'a')));
  EXPECT_FALSE(IsValidMetricName(std::string(65, 'a')));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9lives"));
  EXPECT_FALSE(IsValidMetricName("a b"));
  EXPECT_FALSE(IsValidMetricName("x\"; DROP TABLE trials; --"));
  EXPECT_FALSE(IsValidMetricName("caf\xc3\xa9"));
}

TEST(MetricTableTest, BadNamesAndNonFiniteValuesAreDroppedWithANote) {
  const AcceptedMetrics accepted =
      AcceptExtraMetrics({{"ok_one", 1.5}, {"bad name", 2}, {"nan_one", std::nan("")}}, {});
  EXPECT_EQ(accepted.values, (std::map<std::string, double>{{"ok_one", 1.5}}));
  ASSERT_EQ(accepted.notes.size(), 2u);
  EXPECT_NE(accepted.notes[0].find("'bad name' dropped: not a valid name"), std::string::npos);
  EXPECT_NE(accepted.notes[1].find("'nan_one' dropped: not a finite number"), std::string::npos);
}

TEST(MetricTableTest, AtMost64ExtraMetricsAreKeptInNameOrder) {
  std::map<std::string, double> many;
  for (int i = 0; i < 70; ++i) many[(i < 10 ? "m0" : "m") + std::to_string(i)] = i;
  const AcceptedMetrics accepted = AcceptExtraMetrics(many, {});
  EXPECT_EQ(accepted.values.size(), kMaxExtraMetrics);
  EXPECT_TRUE(accepted.values.contains("m00"));
  EXPECT_FALSE(accepted.values.contains("m69"));
  ASSERT_EQ(accepted.notes.size(), 1u);
  EXPECT_EQ(accepted.notes[0], "6 metric(s) dropped: at most 64 per trial");
}

TEST(MetricTableTest, DeclarationsAreCheckedAndIgnoredForTableNames) {
  const AcceptedMetrics accepted =
      AcceptExtraMetrics({{"throughput", 10}, {"weird", 1}, {"latency_ms", 3}},
                         {{"throughput", {"images/s", "higher"}},
                          {"weird", {std::string(40, 'u'), "sideways"}},
                          {"latency_ms", {"s", "higher"}}});
  ASSERT_TRUE(accepted.declared.contains("throughput"));
  EXPECT_EQ(accepted.declared.at("throughput").better, "higher");
  EXPECT_FALSE(accepted.declared.contains("weird"));  // neither part survived
  EXPECT_FALSE(accepted.declared.contains("latency_ms"));
  EXPECT_EQ(accepted.notes.size(), 2u);
  EXPECT_EQ(accepted.values.size(), 3u);
}

TEST(MetricTableTest, ExtraMetricTakesTheTableRowOverADeclaration) {
  const ExtraMetric latency = ExtraMetricOf("latency_ms", 2, {"s", "higher"});
  EXPECT_EQ(latency.hint, MetricHint::kMilliseconds);
  EXPECT_EQ(latency.better, Better::kLower);
  const ExtraMetric own = ExtraMetricOf("throughput", 2, {"images/s", "higher"});
  EXPECT_EQ(own.hint, MetricHint::kRate);
  EXPECT_EQ(own.better, Better::kHigher);
  EXPECT_EQ(ExtraMetricOf("plain", 2, {}).better, Better::kNone);
}

TEST(MetricTableTest, ReductionsOverRanksAndLaunches) {
  EXPECT_EQ(ReduceOverRanks(RankReduction::kMax, {1, 3, 2}), 3);
  EXPECT_EQ(ReduceOverRanks(RankReduction::kSum, {1, 3, 2}), 6);
  EXPECT_EQ(ReduceOverRanks(RankReduction::kRank0, {1, 3, 2}), 1);
  EXPECT_EQ(ReduceOverRanks(RankReduction::kMean, {1, 3, 2}), 2);
  EXPECT_EQ(ReduceOverLaunches(LaunchReduction::kMedian, {4, 1, 3, 2}), 2.5);
  EXPECT_EQ(ReduceOverLaunches(LaunchReduction::kNewest, {4, 1, 3}), 3);
  EXPECT_EQ(ReduceOverLaunches(LaunchReduction::kSum, {4, 1, 3}), 8);
}

}  // namespace
}  // namespace ditbench::metric_table_test

#include "analysis/row_metrics.h"

#include <gtest/gtest.h>

namespace ditbench::row_metrics_test {
namespace {

// Every row of the metric table is read from its ResultRow column, or (a metric stored only in
// metric_values) from the row's extra metrics: none is silently unreadable.
TEST(RowMetricsTest, EveryTableMetricIsReadFromItsColumnOrItsExtraMetric) {
  for (const MetricInfo& m : MetricTable()) {
    ResultRow row;
    row.extra_metrics[std::string(m.name)] = ExtraMetricOf(m.name, -1, {});
    const std::optional<double> value = MetricValue(row, m.name);
    if (value) {
      EXPECT_EQ(*value, -1) << m.name << ": an extra metric of a name with no column";
    } else {
      // Unset: the name has a ResultRow column (left unset here), which wins over the extra.
      EXPECT_TRUE(ExtraMetricNames({&row}, kShownInReportTable).empty()) << m.name;
    }
  }
  ResultRow row;
  row.latency_ms = 12.5;
  row.joules_per_image = 3;
  EXPECT_EQ(MetricValue(row, "latency_ms"), 12.5);
  EXPECT_EQ(MetricValue(row, "joules_per_image"), 3);
  EXPECT_FALSE(MetricValue(row, "no_such_metric"));
}

// ResultRow has a member for every column metric of the table and for no metric held by name.
TEST(RowMetricsTest, EveryColumnMetricHasAResultRowMemberAndNoOtherMetricHasOne) {
  for (const MetricInfo& metric : MetricTable())
    EXPECT_EQ(RowMemberOf(metric.name) != nullptr, metric.member.is_column()) << metric.name;
  EXPECT_EQ(RowMemberOf("items"), nullptr);
}

TEST(RowMetricsTest, ExtraNamesListTableNamesFirstThenTheProgramsOwnByName) {
  ResultRow a, b;
  a.extra_metrics["zeta"] = ExtraMetricOf("zeta", 1, {});
  a.extra_metrics["latency_ms"] = ExtraMetricOf("latency_ms", 1, {});  // has a column
  b.extra_metrics["alpha"] = ExtraMetricOf("alpha", 1, {"ms", "lower"});
  b.extra_metrics["decode_ms"] = ExtraMetricOf("decode_ms", 1, {});        // held by name
  b.extra_metrics["images_per_s"] = ExtraMetricOf("images_per_s", 1, {});  // has a column
  EXPECT_EQ(ExtraMetricNames({&a, &b}, kShownInReportTable),
            (std::vector<std::string>{"decode_ms", "alpha", "zeta"}));
  // A table row not shown where asked is left out; a program's own number never is.
  b.extra_metrics["isolated_ms"] = ExtraMetricOf("isolated_ms", 1, {});
  ASSERT_FALSE(FindMetric("isolated_ms")->shown_in & kShownInCompare);
  EXPECT_EQ(ExtraMetricNames({&a, &b}, kShownInCompare),
            (std::vector<std::string>{"decode_ms", "alpha", "zeta"}));
  const ExtraMetric alpha = MetricDisplay({&a, &b}, "alpha");
  EXPECT_EQ(alpha.hint, MetricHint::kMilliseconds);
  EXPECT_EQ(alpha.better, Better::kLower);
  EXPECT_EQ(MetricHeader("alpha", alpha), "alpha (ms)");
  EXPECT_EQ(MetricHeader("zeta", MetricDisplay({&a, &b}, "zeta")), "zeta");
}

}  // namespace
}  // namespace ditbench::row_metrics_test

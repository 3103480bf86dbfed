#include "worker/clock_monitor.h"

#include <dlfcn.h>

#include <gtest/gtest.h>

namespace ditbench::clock_monitor_test {
namespace {

TEST(ClockMonitorTest, SlowdownsCountButIdleAndApplicationClocksDoNot) {
  EXPECT_FALSE(IsSlowdown(0x1 | 0x2));  // idle, application clocks setting
  EXPECT_TRUE(IsSlowdown(0x4));         // software power cap
  EXPECT_TRUE(IsSlowdown(0x40));        // hardware thermal slowdown
  EXPECT_EQ(ThrottleReasonNames(0x1 | 0x40),
            (std::vector<std::string>{"gpu_idle", "hw_thermal_slowdown"}));
}

TEST(ClockMonitorTest, WithoutNvmlTheReportSaysUnavailable) {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
    dlclose(nvml);
    GTEST_SKIP() << "NVML present: this test covers machines without a driver";
  }
  ClockMonitor monitor("0000:00:00.0", 5);
  monitor.Start();
  ClockReport report = monitor.Stop();
  EXPECT_FALSE(report.available);
  EXPECT_NE(report.unavailable.find("libnvidia-ml"), std::string::npos);
  EXPECT_FALSE(report.ToJson()["available"].get<bool>());
}

}  // namespace
}  // namespace ditbench::clock_monitor_test

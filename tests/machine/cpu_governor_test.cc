// The CPU frequency governors read from a fake /sys (machine/cpu_governor.h).
#include "machine/cpu_governor.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::cpu_governor_test {
namespace {

void Governor(const std::filesystem::path& sys, const std::string& cpu, const std::string& name) {
  std::filesystem::create_directories(sys / cpu / "cpufreq");
  std::ofstream(sys / cpu / "cpufreq" / "scaling_governor") << name << "\n";
}

TEST(CpuGovernorTest, CountsEachGovernorOverTheCpuFoldersOnly) {
  test::TempDir sys;
  Governor(sys.path(), "cpu0", "performance");
  Governor(sys.path(), "cpu1", "powersave");
  Governor(sys.path(), "cpu12", "performance");
  Governor(sys.path(), "cpufreq", "ondemand");        // not a CPU
  std::filesystem::create_directories(sys / "cpu2");  // offline: no cpufreq
  EXPECT_EQ(CpuGovernors(sys.path()),
            (std::map<std::string, int>{{"performance", 2}, {"powersave", 1}}));
}

TEST(CpuGovernorTest, NoCpufreqIsEmpty) {
  test::TempDir sys;
  EXPECT_TRUE(CpuGovernors(sys.path()).empty());
  EXPECT_TRUE(CpuGovernors(sys / "missing").empty());
}

}  // namespace
}  // namespace ditbench::cpu_governor_test

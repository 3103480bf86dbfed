// The guard's step-down logic with scripted probes: no dependence on the host CPU.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "worker/cpu_isa_guard.h"

namespace ditbench::cpu_isa_guard_test {
namespace {

// Restores ONEDNN_MAX_CPU_ISA (which the guard sets) after each test.
class CpuIsaGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("ONEDNN_MAX_CPU_ISA")) saved_ = v;
    unsetenv("ONEDNN_MAX_CPU_ISA");
    unsetenv("DNNL_MAX_CPU_ISA");
  }
  void TearDown() override {
    if (saved_.empty()) unsetenv("ONEDNN_MAX_CPU_ISA");
    else setenv("ONEDNN_MAX_CPU_ISA", saved_.c_str(), 1);
  }
  static std::string Cap() {
    const char* v = std::getenv("ONEDNN_MAX_CPU_ISA");
    return v ? v : "";
  }
  std::string saved_;
};

CpuidLeaves AmxWithoutPalette() {
  CpuidLeaves leaves;
  leaves.x86 = true;
  leaves.max_leaf = 0x20;
  leaves.leaf1_ecx = 1u << 27;
  leaves.leaf7_edx = (1u << 22) | (1u << 24);
  leaves.xcr0 = 0xE7 | (1ull << 17) | (1ull << 18);
  return leaves;
}

TEST_F(CpuIsaGuardTest, AmxWithoutPaletteIsCappedBeforeTheProbe) {
  std::string cap_seen_by_probe;
  auto report = GuardCpuIsaWith(AmxWithoutPalette(), [&] {
    cap_seen_by_probe = Cap();
    return std::string("ok");
  });
  EXPECT_EQ(cap_seen_by_probe, "AVX512_CORE_BF16");
  EXPECT_EQ(report["source"], "cpuid");
  EXPECT_EQ(report["onednn_max_cpu_isa"], "AVX512_CORE_BF16");
  EXPECT_EQ(report["probe"], "ok");
}

TEST_F(CpuIsaGuardTest, AProbeThatCrashesStepsDownUntilItSurvives) {
  // A fault nobody listed: everything above AVX2 dies with SIGILL.
  int probes = 0;
  auto report = GuardCpuIsaWith(CpuidLeaves{}, [&] {
    ++probes;
    return Cap() == "AVX2" ? std::string("ok") : std::string("crashed: signal 4");
  });
  EXPECT_EQ(probes, 3);  // default, AVX512_CORE_BF16, AVX2
  EXPECT_EQ(Cap(), "AVX2");
  EXPECT_EQ(report["source"], "probe");
  EXPECT_EQ(report["probe"], "ok");
  ASSERT_EQ(report["probe_history"].size(), 2u);
  EXPECT_EQ(report["probe_history"][0]["probe"], "crashed: signal 4");
}

TEST_F(CpuIsaGuardTest, AUserSettingIsRespected) {
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  auto report = GuardCpuIsaWith(AmxWithoutPalette(), [] { return std::string("ok"); });
  EXPECT_EQ(report["source"], "user");
  EXPECT_EQ(Cap(), "AVX2");
}

TEST_F(CpuIsaGuardTest, AHealthyMachineIsLeftAlone) {
  auto report = GuardCpuIsaWith(CpuidLeaves{}, [] { return std::string("ok"); });
  EXPECT_EQ(report["source"], "default");
  EXPECT_TRUE(report["onednn_max_cpu_isa"].is_null());
  EXPECT_EQ(Cap(), "");
}

}  // namespace
}  // namespace ditbench::cpu_isa_guard_test

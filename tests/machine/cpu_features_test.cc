// The ISA decision from CPUID words given by the test, never from the host CPU: the AMX VM that
// kills bf16 kernels is reproduced here on any machine.
#include <gtest/gtest.h>

#include "machine/cpu_features.h"

namespace ditbench::cpu_features_test {
namespace {

constexpr std::uint32_t kOsxsave = 1u << 27;
constexpr std::uint32_t kAmxBf16 = 1u << 22, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
constexpr std::uint64_t kTileState = (1ull << 17) | (1ull << 18);

// A Sapphire Rapids-like CPU: AMX advertised; the palette and XCR0 as the test says.
CpuidLeaves Amx(std::uint32_t max_palette, std::uint64_t xcr0 = 0xE7 | kTileState,
                std::uint32_t max_leaf = 0x20) {
  CpuidLeaves leaves;
  leaves.x86 = true;
  leaves.max_leaf = max_leaf;
  leaves.leaf1_ecx = kOsxsave;
  leaves.leaf7_edx = kAmxBf16 | kAmxTile | kAmxInt8;
  leaves.leaf1d_eax = max_palette;
  leaves.xcr0 = xcr0;
  return leaves;
}

TEST(CpuFeaturesTest, AmxWithoutTilePaletteIsCappedBelowAmx) {
  const IsaCap cap = DecideIsaCap(Amx(/*max_palette=*/0));
  ASSERT_TRUE(cap.onednn_max_cpu_isa.has_value());
  EXPECT_EQ(*cap.onednn_max_cpu_isa, "AVX512_CORE_BF16");
  EXPECT_NE(cap.reason.find("no tile palette"), std::string::npos) << cap.reason;
  EXPECT_FALSE(DescribeAmx(Amx(0)).usable());
}

TEST(CpuFeaturesTest, AmxWithoutOsTileStateIsCappedBelowAmx) {
  const IsaCap cap = DecideIsaCap(Amx(1, /*xcr0=*/0xE7));
  ASSERT_TRUE(cap.onednn_max_cpu_isa.has_value());
  EXPECT_NE(cap.reason.find("XCR0"), std::string::npos) << cap.reason;
}

TEST(CpuFeaturesTest, AmxLeafMissingCountsAsNoPalette) {
  // A CPU that advertises AMX but whose maximum leaf stops before 0x1D.
  CpuidLeaves leaves = Amx(1, 0xE7 | kTileState, /*max_leaf=*/0x1C);
  EXPECT_EQ(DescribeAmx(leaves).max_palette, 0);
  EXPECT_TRUE(DecideIsaCap(leaves).onednn_max_cpu_isa.has_value());
}

TEST(CpuFeaturesTest, UsableAmxAndNoAmxAreLeftAlone) {
  EXPECT_FALSE(DecideIsaCap(Amx(1)).onednn_max_cpu_isa.has_value());
  EXPECT_TRUE(DescribeAmx(Amx(1)).usable());
  CpuidLeaves amd;  // e.g. an AMD EPYC: AVX-512 but no AMX bits
  amd.x86 = true;
  amd.max_leaf = 0x10;
  amd.leaf1_ecx = kOsxsave;
  amd.xcr0 = 0xE7;
  const IsaCap cap = DecideIsaCap(amd);
  EXPECT_FALSE(cap.onednn_max_cpu_isa.has_value());
  EXPECT_EQ(cap.reason, "no AMX advertised");
  EXPECT_FALSE(DecideIsaCap(CpuidLeaves{}).onednn_max_cpu_isa.has_value());  // not x86
}

TEST(CpuFeaturesTest, ReadingThisCpuGivesAConsistentAnswer) {
  // Whatever this machine is, the decision and the description agree with each other.
  const CpuidLeaves leaves = ReadCpuid();
  const AmxSupport amx = DescribeAmx(leaves);
  EXPECT_EQ(DecideIsaCap(leaves).onednn_max_cpu_isa.has_value(), amx.advertised && !amx.usable());
}

}  // namespace
}  // namespace ditbench::cpu_features_test

#include "machine/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define DITBENCH_X86 1
#endif

#include <fmt/format.h>

namespace ditbench {
namespace {

constexpr std::uint32_t kOsxsave = 1u << 27;
constexpr std::uint32_t kAmxTile = 1u << 24;
constexpr std::uint64_t kXcr0TileState = (1ull << 17) | (1ull << 18);

}  // namespace

CpuidLeaves ReadCpuid() {
  CpuidLeaves leaves;
#ifdef DITBENCH_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  leaves.x86 = true;
  leaves.max_leaf = __get_cpuid_max(0, nullptr);
  if (leaves.max_leaf >= 1 && __get_cpuid(1, &a, &b, &c, &d)) leaves.leaf1_ecx = c;
  if (leaves.max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    leaves.leaf7_edx = d;
  }
  if (leaves.max_leaf >= 0x1D) {
    __cpuid_count(0x1D, 0, a, b, c, d);
    leaves.leaf1d_eax = a;
  }
  if (leaves.leaf1_ecx & kOsxsave) {
    std::uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    leaves.xcr0 = (static_cast<std::uint64_t>(hi) << 32) | lo;
  }
#endif
  return leaves;
}

AmxSupport DescribeAmx(const CpuidLeaves& leaves) {
  AmxSupport amx;
  if (!leaves.x86) return amx;
  amx.advertised = (leaves.leaf7_edx & kAmxTile) != 0;
  amx.max_palette = leaves.max_leaf >= 0x1D ? static_cast<int>(leaves.leaf1d_eax) : 0;
  amx.os_tile_state = (leaves.leaf1_ecx & kOsxsave) && (leaves.xcr0 & kXcr0TileState) == kXcr0TileState;
  return amx;
}

IsaCap DecideIsaCap(const CpuidLeaves& leaves) {
  IsaCap cap;
  const AmxSupport amx = DescribeAmx(leaves);
  if (!amx.advertised) {
    cap.reason = leaves.x86 ? "no AMX advertised" : "not an x86 CPU";
    return cap;
  }
  if (amx.usable()) {
    cap.reason = fmt::format("AMX advertised and usable (max palette {})", amx.max_palette);
    return cap;
  }
  // Below AMX, still with the AVX-512 bf16 kernels every AMX CPU has.
  cap.onednn_max_cpu_isa = kIsaFallbacks[0];
  cap.reason = amx.max_palette == 0
                   ? "AMX advertised but CPUID leaf 0x1D reports no tile palette"
                   : "AMX advertised but the OS does not enable tile state in XCR0";
  return cap;
}

}  // namespace ditbench

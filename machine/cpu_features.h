// What the CPU advertises versus what it can actually run, for the one case known to kill
// LibTorch workers: AMX.
//
// Some hypervisors pass the AMX feature bits (CPUID leaf 7: amx_tile, amx_bf16) through to a
// guest but report an empty tile palette (CPUID leaf 0x1D: max_palette 0) or leave the tile
// state out of XCR0. oneDNN then picks its AMX kernels, configures no tiles, and the first
// `tilezero` raises #UD: every bf16 matmul dies with SIGILL. The decision below is pure (it
// reads only the leaves it is given), so it is tested without the machine it describes.
// Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ditbench {

// The CPUID/XCR0 words the decision needs. `x86` false: not an x86 CPU (nothing to decide).
struct CpuidLeaves {
  bool x86 = false;
  std::uint32_t max_leaf = 0;    // CPUID.0:EAX
  std::uint32_t leaf1_ecx = 0;   // CPUID.1:ECX (bit 27: OSXSAVE)
  std::uint32_t leaf7_edx = 0;   // CPUID.(7,0):EDX (bit 22 amx_bf16, 24 amx_tile, 25 amx_int8)
  std::uint32_t leaf1d_eax = 0;  // CPUID.(0x1D,0):EAX: max_palette (0 when leaf 0x1D is absent)
  std::uint64_t xcr0 = 0;        // XGETBV(0) when OSXSAVE (bits 17, 18: tile config and data)
};

// Reads this CPU's leaves (all zero and x86 = false on other architectures).
CpuidLeaves ReadCpuid();

struct AmxSupport {
  bool advertised = false;       // amx_tile in CPUID leaf 7
  int max_palette = 0;           // from leaf 0x1D
  bool os_tile_state = false;    // XCR0 enables tile config and tile data
  bool usable() const { return advertised && max_palette > 0 && os_tile_state; }
};
AmxSupport DescribeAmx(const CpuidLeaves& leaves);

// The oneDNN ISA cap the worker must set before LibTorch first runs a oneDNN kernel, or
// nullopt when the advertised ISA is usable as is. `reason` says why, in one line.
struct IsaCap {
  std::optional<std::string> onednn_max_cpu_isa;
  std::string reason;
};
IsaCap DecideIsaCap(const CpuidLeaves& leaves);

// The caps to try, best first, when a probe of the current setting crashed.
inline constexpr const char* kIsaFallbacks[] = {"AVX512_CORE_BF16", "AVX2"};

}  // namespace ditbench

#include "machine/device_peaks.h"

#include <array>

namespace ditbench {
namespace {

struct DevicePeak {
  std::string_view name_part;  // matched as a substring of the reported name, first match wins
  double fp32, tf32, bf16;     // fp16 dense peak equals bf16 on all of these
};

// Order matters: more specific names first ("H100 PCIe" before "H100").
constexpr std::array<DevicePeak, 6> kPeaks{{
    {"H100 PCIe", 51.0, 378.0, 756.0},
    {"H100", 67.0, 494.5, 989.0},  // SXM ("NVIDIA H100 80GB HBM3")
    {"H200", 67.0, 494.5, 989.0},
    {"A100", 19.5, 156.0, 312.0},
    {"L40S", 91.6, 183.0, 362.0},
    {"L4", 30.3, 60.0, 121.0},
}};

}  // namespace

std::optional<double> DensePeakTflops(std::string_view device_name, Precision precision) {
  for (const auto& p : kPeaks) {
    if (device_name.find(p.name_part) == std::string_view::npos) continue;
    switch (precision) {
      case Precision::kFp32: return p.fp32;
      case Precision::kTf32: return p.tf32;
      case Precision::kBf16:
      case Precision::kFp16: return p.bf16;
    }
  }
  return std::nullopt;
}

}  // namespace ditbench

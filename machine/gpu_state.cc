#include "machine/gpu_state.h"

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "machine/gpu_sources.h"

namespace ditbench {
namespace {

// NVML's stable C ABI (nvml.h; the header is not needed to build).
using NvmlDevice = void*;
constexpr int kNvmlOk = 0;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;  // nvmlClockType_t

using ClockFn = int (*)(NvmlDevice, int, unsigned*);
using ReasonsFn = int (*)(NvmlDevice, unsigned long long*);
using ModeFn = int (*)(NvmlDevice, int*);
using PairModeFn = int (*)(NvmlDevice, unsigned*, unsigned*);
using MilliwattsFn = int (*)(NvmlDevice, unsigned*);

struct NvmlStateFunctions {
  int (*shutdown)() = nullptr;
  ClockFn clock = nullptr, max_clock = nullptr;
  ReasonsFn reasons = nullptr;
  ModeFn persistence = nullptr;
  PairModeFn ecc = nullptr, mig = nullptr;
  MilliwattsFn power = nullptr, power_limit = nullptr;
};

std::optional<unsigned> Clock(ClockFn read, NvmlDevice device, int type) {
  unsigned mhz = 0;
  if (read == nullptr || read(device, type, &mhz) != kNvmlOk) return std::nullopt;
  return mhz;
}

std::optional<double> Watts(MilliwattsFn read, NvmlDevice device) {
  unsigned milliwatts = 0;
  if (read == nullptr || read(device, &milliwatts) != kNvmlOk) return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<bool> PairMode(PairModeFn read, NvmlDevice device) {
  unsigned current = 0, pending = 0;
  if (read == nullptr || read(device, &current, &pending) != kNvmlOk) return std::nullopt;
  return current != 0;
}

class NvmlGpuStateProbe final : public GpuStateProbe {
 public:
  NvmlGpuStateProbe(DynamicLibrary library, NvmlStateFunctions nvml, NvmlDevice device)
      : library_(std::move(library)), nvml_(nvml), device_(device) {}
  ~NvmlGpuStateProbe() override { nvml_.shutdown(); }
  NvmlGpuStateProbe(const NvmlGpuStateProbe&) = delete;
  NvmlGpuStateProbe& operator=(const NvmlGpuStateProbe&) = delete;

  std::optional<GpuState> Read(std::string* /*why_not*/) override {
    GpuState state;
    state.sm_mhz = Clock(nvml_.clock, device_, kNvmlClockSm);
    state.sm_max_mhz = Clock(nvml_.max_clock, device_, kNvmlClockSm);
    state.memory_mhz = Clock(nvml_.clock, device_, kNvmlClockMem);
    state.memory_max_mhz = Clock(nvml_.max_clock, device_, kNvmlClockMem);
    if (unsigned long long reasons = 0;
        nvml_.reasons != nullptr && nvml_.reasons(device_, &reasons) == kNvmlOk)
      state.throttle_reasons = reasons;
    if (int mode = 0; nvml_.persistence != nullptr && nvml_.persistence(device_, &mode) == kNvmlOk)
      state.persistence = mode != 0;
    state.ecc = PairMode(nvml_.ecc, device_);
    state.mig = PairMode(nvml_.mig, device_);
    state.power_w = Watts(nvml_.power, device_);
    state.power_limit_w = Watts(nvml_.power_limit, device_);
    return state;
  }

 private:
  DynamicLibrary library_;  // declared first: closed after shutdown has run
  NvmlStateFunctions nvml_;
  NvmlDevice device_;
};

}  // namespace

std::string DescribeThrottleReasons(std::uint64_t reasons) {
  static const std::vector<std::pair<std::uint64_t, const char*>> kNames = {
      {kThrottleGpuIdle, "gpu idle"},
      {kThrottleApplicationClocks, "application clocks"},
      {kThrottleSwPowerCap, "sw power cap"},
      {kThrottleHwSlowdown, "hw slowdown"},
      {kThrottleSwThermal, "sw thermal"},
      {kThrottleHwThermal, "hw thermal"},
      {kThrottleHwPowerBrake, "hw power brake"},
  };
  std::string text;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

std::unique_ptr<GpuStateProbe> OpenNvmlGpuStateProbe(const std::string& pci_bus_id,
                                                     std::string* why_not,
                                                     const std::string& library) {
  std::string error;
  auto nvml = DynamicLibrary::Open(library, &error);
  if (!nvml) {
    *why_not = fmt::format("{} cannot be loaded (no NVIDIA driver here?): {}", library, error);
    return nullptr;
  }
  const auto init = reinterpret_cast<int (*)()>(nvml->Find("nvmlInit_v2"));
  const auto error_string = reinterpret_cast<const char* (*)(int)>(nvml->Find("nvmlErrorString"));
  const auto by_bus_id = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(
      nvml->Find("nvmlDeviceGetHandleByPciBusId_v2"));
  NvmlStateFunctions f;
  f.shutdown = reinterpret_cast<int (*)()>(nvml->Find("nvmlShutdown"));
  // Every reading function is optional: one an old driver lacks leaves its field unset.
  f.clock = reinterpret_cast<ClockFn>(nvml->Find("nvmlDeviceGetClockInfo"));
  f.max_clock = reinterpret_cast<ClockFn>(nvml->Find("nvmlDeviceGetMaxClockInfo"));
  f.reasons = reinterpret_cast<ReasonsFn>(nvml->Find("nvmlDeviceGetCurrentClocksThrottleReasons"));
  f.persistence = reinterpret_cast<ModeFn>(nvml->Find("nvmlDeviceGetPersistenceMode"));
  f.ecc = reinterpret_cast<PairModeFn>(nvml->Find("nvmlDeviceGetEccMode"));
  f.mig = reinterpret_cast<PairModeFn>(nvml->Find("nvmlDeviceGetMigMode"));
  f.power = reinterpret_cast<MilliwattsFn>(nvml->Find("nvmlDeviceGetPowerUsage"));
  f.power_limit = reinterpret_cast<MilliwattsFn>(nvml->Find("nvmlDeviceGetEnforcedPowerLimit"));
  if (!init || !f.shutdown || !error_string || !by_bus_id) {
    *why_not = fmt::format("{} lacks nvmlInit_v2 or another function ditbench needs", library);
    return nullptr;
  }
  if (const int status = init(); status != kNvmlOk) {
    *why_not = fmt::format("nvmlInit failed: {} (NVML error {})", error_string(status), status);
    return nullptr;
  }
  NvmlDevice device = nullptr;
  if (const int status = by_bus_id(pci_bus_id.c_str(), &device); status != kNvmlOk) {
    *why_not = fmt::format("NVML does not find the GPU at PCI bus id '{}': {}", pci_bus_id,
                           error_string(status));
    f.shutdown();
    return nullptr;
  }
  return std::make_unique<NvmlGpuStateProbe>(std::move(*nvml), f, device);
}

}  // namespace ditbench

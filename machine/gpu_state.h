// What the driver says about one GPU's state at an instant, for `ditbench selfcheck`
// (runner/selfcheck_rules.h): its SM and memory clocks against their maxima, why the clocks
// are held down (NVML's throttle reasons), persistence mode, ECC, MIG, and its power draw
// against the board limit.
//
// The real probe is NVML through dlopen (DynamicLibrary, machine/gpu_sources.h), never
// linked: a missing library, a GPU that is not found or a failing read is a reason (one line),
// never an error. A field NVML does not answer on a GPU is left unset. Tests inject a fake
// GpuStateProbe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ditbench {

// NVML's clock throttle reason bits (nvmlClocksThrottleReason*), the ones selfcheck names.
enum ThrottleReason : std::uint64_t {
  kThrottleGpuIdle = 0x1,
  kThrottleApplicationClocks = 0x2,  // application clocks set below the maximum
  kThrottleSwPowerCap = 0x4,
  kThrottleHwSlowdown = 0x8,
  kThrottleSwThermal = 0x20,
  kThrottleHwThermal = 0x40,
  kThrottleHwPowerBrake = 0x80,
};

struct GpuState {
  std::optional<unsigned> sm_mhz, sm_max_mhz, memory_mhz, memory_max_mhz;
  std::optional<std::uint64_t> throttle_reasons;  // ThrottleReason bits
  std::optional<bool> persistence, ecc, mig;
  std::optional<double> power_w, power_limit_w;  // draw now, enforced board limit
};

// "sw power cap, hw thermal" for the bits of `reasons` selfcheck names ("" for none).
std::string DescribeThrottleReasons(std::uint64_t reasons);

// Reads one GPU's state. Thread-safety: one reader at a time.
class GpuStateProbe {
 public:
  virtual ~GpuStateProbe() = default;
  // The state now, or nullopt with why (one line) in *why_not.
  virtual std::optional<GpuState> Read(std::string* why_not) = 0;
};

// NVML's view of the GPU with PCI bus id `pci_bus_id`, or nullptr with why in *why_not (the
// library cannot be loaded or lacks the functions, NVML does not start, the GPU is not found).
// The probe keeps NVML initialised until it is destroyed.
std::unique_ptr<GpuStateProbe> OpenNvmlGpuStateProbe(
    const std::string& pci_bus_id, std::string* why_not,
    const std::string& library = "libnvidia-ml.so.1");

}  // namespace ditbench

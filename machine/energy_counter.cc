#include "machine/energy_counter.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "machine/gpu_sources.h"

namespace ditbench {
namespace {

// NVML's stable C ABI (nvml.h; the header is not needed to build): opaque device handles and
// int return codes.
using NvmlDevice = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlErrorNotSupported = 3;

double SteadyMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// nvmlDeviceGetTotalEnergyConsumption of one GPU; NVML is shut down on destruction.
class NvmlEnergyCounter final : public EnergyCounter {
 public:
  using ShutdownFn = int (*)();
  using EnergyFn = int (*)(NvmlDevice, unsigned long long*);
  using ErrorStringFn = const char* (*)(int);

  NvmlEnergyCounter(DynamicLibrary library, ShutdownFn shutdown, EnergyFn energy,
                    ErrorStringFn error_string, NvmlDevice device)
      : library_(std::move(library)),
        shutdown_(shutdown),
        energy_(energy),
        error_string_(error_string),
        device_(device) {}
  ~NvmlEnergyCounter() override { shutdown_(); }
  NvmlEnergyCounter(const NvmlEnergyCounter&) = delete;
  NvmlEnergyCounter& operator=(const NvmlEnergyCounter&) = delete;

  std::optional<EnergyReading> Read(std::string* why_not) override {
    unsigned long long millijoules = 0;
    const int status = energy_(device_, &millijoules);
    const double now = SteadyMs();
    if (status == kNvmlSuccess) return EnergyReading{millijoules, now};
    *why_not = status == kNvmlErrorNotSupported
                   ? "this GPU has no total energy counter (nvmlDeviceGetTotalEnergyConsumption "
                     "is not supported: Volta or newer needed)"
                   : fmt::format("nvmlDeviceGetTotalEnergyConsumption failed: {} (NVML error {})",
                                 error_string_(status), status);
    return std::nullopt;
  }

 private:
  DynamicLibrary library_;  // declared first: closed after shutdown_ has run
  ShutdownFn shutdown_;
  EnergyFn energy_;
  ErrorStringFn error_string_;
  NvmlDevice device_;
};

}  // namespace

std::optional<EnergyWindow> EnergyBetween(const EnergyReading& start, const EnergyReading& end,
                                          std::string* why_not) {
  if (end.millijoules < start.millijoules) {
    *why_not = fmt::format(
        "the energy counter went back from {} to {} mJ during the timed iterations (the driver "
        "was reloaded, or the counter wrapped)",
        start.millijoules, end.millijoules);
    return std::nullopt;
  }
  if (!(end.host_ms > start.host_ms)) {
    *why_not = "the energy window has no length (the counter was read twice at once)";
    return std::nullopt;
  }
  return EnergyWindow{double(end.millijoules - start.millijoules) / 1000.0,
                      end.host_ms - start.host_ms};
}

std::unique_ptr<EnergyCounter> RankEnergyCounter(bool gpu, const std::string& pci_bus_id,
                                                 std::string* why_not,
                                                 const EnergyCounterOpener& open) {
  if (!gpu) return nullptr;
  if (pci_bus_id.empty()) {
    *why_not = "the GPU's PCI bus id is unknown, so NVML cannot find its energy counter";
    return nullptr;
  }
  return open(pci_bus_id, why_not);
}

std::unique_ptr<EnergyCounter> OpenNvmlEnergyCounter(const std::string& pci_bus_id,
                                                     std::string* why_not,
                                                     const std::string& library) {
  std::string error;
  auto nvml = DynamicLibrary::Open(library, &error);
  if (!nvml) {
    *why_not = fmt::format("{} cannot be loaded (no NVIDIA driver here?): {}", library, error);
    return nullptr;
  }
  const auto init = reinterpret_cast<int (*)()>(nvml->Find("nvmlInit_v2"));
  const auto shutdown = reinterpret_cast<int (*)()>(nvml->Find("nvmlShutdown"));
  const auto error_string =
      reinterpret_cast<const char* (*)(int)>(nvml->Find("nvmlErrorString"));
  const auto by_bus_id = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(
      nvml->Find("nvmlDeviceGetHandleByPciBusId_v2"));
  const auto energy = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(
      nvml->Find("nvmlDeviceGetTotalEnergyConsumption"));
  if (!init || !shutdown || !error_string || !by_bus_id || !energy) {
    *why_not = fmt::format(
        "{} lacks nvmlDeviceGetTotalEnergyConsumption or another function ditbench needs "
        "(an old driver?)",
        library);
    return nullptr;
  }
  if (const int status = init(); status != kNvmlSuccess) {
    *why_not = fmt::format("nvmlInit failed: {} (NVML error {})", error_string(status), status);
    return nullptr;
  }
  NvmlDevice device = nullptr;
  if (const int status = by_bus_id(pci_bus_id.c_str(), &device); status != kNvmlSuccess) {
    *why_not = fmt::format("NVML does not find the GPU at PCI bus id '{}': {}", pci_bus_id,
                           error_string(status));
    shutdown();
    return nullptr;
  }
  auto counter = std::make_unique<NvmlEnergyCounter>(std::move(*nvml), shutdown, energy,
                                                     error_string, device);
  if (!counter->Read(why_not)) return nullptr;  // its destructor shuts NVML down
  return counter;
}

}  // namespace ditbench

#include "worker/clock_monitor.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>

namespace ditbench {
namespace {

// The few NVML entry points used, by their stable C ABI (nvml.h): opaque device handles,
// int return codes (0 = success), NVML_CLOCK_SM = 1.
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, NvmlDevice*);
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned int*);
using ThrottleReasonsFn = int (*)(NvmlDevice, unsigned long long*);
constexpr int kNvmlClockSm = 1;

struct Nvml {
  void* library = nullptr;
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  HandleByBusIdFn handle_by_bus_id = nullptr;
  ClockInfoFn clock_info = nullptr;
  ThrottleReasonsFn throttle_reasons = nullptr;

  bool Load(std::string* why) {
    library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      *why = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return false;
    }
    init = reinterpret_cast<InitFn>(dlsym(library, "nvmlInit_v2"));
    shutdown = reinterpret_cast<ShutdownFn>(dlsym(library, "nvmlShutdown"));
    handle_by_bus_id =
        reinterpret_cast<HandleByBusIdFn>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info = reinterpret_cast<ClockInfoFn>(dlsym(library, "nvmlDeviceGetClockInfo"));
    throttle_reasons = reinterpret_cast<ThrottleReasonsFn>(
        dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !shutdown || !handle_by_bus_id || !clock_info || !throttle_reasons) {
      *why = "libnvidia-ml.so.1 lacks an expected function";
      return false;
    }
    return true;
  }
  ~Nvml() {
    if (library) dlclose(library);
  }
};

constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kReasons{{
    {0x1, "gpu_idle"},
    {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},
    {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},
    {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
}};
constexpr std::uint64_t kSlowdownMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

}  // namespace

std::vector<std::string> ThrottleReasonNames(std::uint64_t mask) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : kReasons)
    if (mask & bit) names.push_back(name);
  return names;
}

bool IsSlowdown(std::uint64_t mask) { return (mask & kSlowdownMask) != 0; }

nlohmann::json ClockReport::ToJson() const {
  if (!available) return {{"available", false}, {"reason", unavailable}};
  return {{"available", true},   {"samples", samples},     {"sm_mhz_min", sm_mhz_min},
          {"sm_mhz_max", sm_mhz_max}, {"reasons", reasons}, {"throttled", throttled}};
}

ClockMonitor::ClockMonitor(std::string pci_bus_id, int period_ms)
    : bus_id_(std::move(pci_bus_id)), period_ms_(period_ms) {}

ClockMonitor::~ClockMonitor() {
  if (running_) Stop();
}

void ClockMonitor::Start() {
  running_ = true;
  thread_ = std::thread([this] { Run(); });
}

ClockReport ClockMonitor::Stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  report_.reasons = ThrottleReasonNames(mask_seen_);
  report_.throttled = IsSlowdown(mask_seen_);
  return report_;
}

void ClockMonitor::Run() {
  Nvml nvml;
  std::string why;
  NvmlDevice device = nullptr;
  if (!nvml.Load(&why) || nvml.init() != 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    report_.unavailable = why.empty() ? "nvmlInit failed" : why;
    return;
  }
  if (nvml.handle_by_bus_id(bus_id_.c_str(), &device) != 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    report_.unavailable = "NVML does not know PCI bus id " + bus_id_;
    nvml.shutdown();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    report_.available = true;
  }
  while (running_) {
    unsigned int mhz = 0;
    unsigned long long reasons = 0;
    const bool clock_ok = nvml.clock_info(device, kNvmlClockSm, &mhz) == 0;
    const bool reasons_ok = nvml.throttle_reasons(device, &reasons) == 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (clock_ok) {
        report_.sm_mhz_min = report_.samples == 0 ? mhz : std::min<double>(report_.sm_mhz_min, mhz);
        report_.sm_mhz_max = std::max<double>(report_.sm_mhz_max, mhz);
        ++report_.samples;
      }
      if (reasons_ok) mask_seen_ |= reasons;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(period_ms_));
  }
  nvml.shutdown();
}

}  // namespace ditbench

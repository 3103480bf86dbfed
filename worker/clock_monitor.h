// Samples a GPU's SM clock and throttle reasons through NVML while a trial runs, so a result
// measured on a throttling GPU is flagged instead of trusted. NVML is loaded with dlopen
// (libnvidia-ml.so.1 comes with the driver): no link dependency, and on a machine without it
// the monitor reports that it is unavailable rather than failing the trial.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

struct ClockReport {
  bool available = false;     // NVML was loaded and the device found
  std::string unavailable;    // why not, when !available
  int samples = 0;
  double sm_mhz_min = 0, sm_mhz_max = 0;
  std::vector<std::string> reasons;  // throttle reasons seen, e.g. "hw_thermal_slowdown"
  bool throttled = false;     // a power, thermal or hardware slowdown was seen

  nlohmann::json ToJson() const;
};

// Names of the throttle reasons in NVML's bit mask, and whether the mask means the clocks were
// held down by power, heat or hardware (idle and application-clock settings do not count).
std::vector<std::string> ThrottleReasonNames(std::uint64_t mask);
bool IsSlowdown(std::uint64_t mask);

class ClockMonitor {
 public:
  // Watches the GPU with this PCI bus id ("0000:3B:00.0") every `period_ms`.
  ClockMonitor(std::string pci_bus_id, int period_ms = 50);
  ~ClockMonitor();  // stops the thread
  ClockMonitor(const ClockMonitor&) = delete;
  ClockMonitor& operator=(const ClockMonitor&) = delete;

  void Start();
  ClockReport Stop();

 private:
  void Run();
  std::string bus_id_;
  int period_ms_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mutex_;
  ClockReport report_;
  std::uint64_t mask_seen_ = 0;
};

}  // namespace ditbench

// A GPU's cumulative energy counter, read at the edges of a trial's timed window
// (metrics/measurement.h) so that a trial reports the energy its timed iterations used.
//
// The real counter is NVML's nvmlDeviceGetTotalEnergyConsumption: millijoules the whole board
// used since the driver was loaded (every process on the GPU counts, not only this one), on
// Volta and newer GPUs. NVML is opened with dlopen through DynamicLibrary
// (machine/gpu_sources.h), never linked, so nothing here needs a driver to build or to run:
// a missing library, a GPU that does not support the counter or a failing read is a reason
// (one line), never an error. Tests inject a fake EnergyCounter.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ditbench {

// One read of a counter: its value and when it was read (milliseconds of a monotonic clock
// whose origin does not matter; only differences are used).
struct EnergyReading {
  std::uint64_t millijoules = 0;
  double host_ms = 0;
};

// A monotonically increasing energy counter of one device.
// Thread-safety: one reader at a time.
class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  // The counter now, or nullopt with why (one line) in *why_not.
  virtual std::optional<EnergyReading> Read(std::string* why_not) = 0;
};

// The energy between two reads of one counter: joules and the window's length in ms.
struct EnergyWindow {
  double joules = 0;
  double window_ms = 0;
};

// `end` - `start`, or nullopt with why in *why_not when the counter went backwards (the driver
// was reloaded between the reads, or the counter wrapped) or the window has no length.
std::optional<EnergyWindow> EnergyBetween(const EnergyReading& start, const EnergyReading& end,
                                          std::string* why_not);

// NVML's counter of the GPU with PCI bus id `pci_bus_id` ("0000:3B:00.0"), or nullptr with why
// in *why_not: `library` cannot be loaded or lacks the functions, NVML does not start, the GPU
// is not found, or its first read fails (NVML_ERROR_NOT_SUPPORTED on a GPU older than Volta).
// The counter keeps NVML initialised until it is destroyed.
std::unique_ptr<EnergyCounter> OpenNvmlEnergyCounter(const std::string& pci_bus_id,
                                                     std::string* why_not,
                                                     const std::string& library =
                                                         "libnvidia-ml.so.1");

// How a GPU's counter is opened: OpenNvmlEnergyCounter, or a fake in tests.
using EnergyCounterOpener =
    std::function<std::unique_ptr<EnergyCounter>(const std::string& pci_bus_id,
                                                 std::string* why_not)>;

// The energy counter of one rank's device, as ditbench-worker opens it: none on a CPU (nullptr
// with *why_not left empty: a CPU has no counter and nothing needs saying); on a GPU, `open`'s
// counter for its PCI bus id, or nullptr with why (an unknown bus id included).
std::unique_ptr<EnergyCounter> RankEnergyCounter(bool gpu, const std::string& pci_bus_id,
                                                 std::string* why_not,
                                                 const EnergyCounterOpener& open);

}  // namespace ditbench

// Device memory in use on given GPUs, read from NVML as a program outside another process's
// allocator can see it: nvmlDeviceGetMemoryInfo's `used`, the whole GPU's (every process's,
// the driver's own reservation included). What an engine trial reports of its server
// (runner/engine_gpu_memory.h): ditbench cannot ask a server's allocator, so the figure is the
// GPU's, and a GPU that another program holds memory on is refused before the server starts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ditbench {

// Used memory of a fixed list of GPUs. Not thread-safe: one reader per thread, or a lock.
class GpuMemoryReader {
 public:
  virtual ~GpuMemoryReader() = default;
  // Used MiB of each GPU, in the order they were named; nullopt with one line in `*why_not`
  // when a GPU cannot be read.
  virtual std::optional<std::vector<double>> UsedMb(std::string* why_not) = 0;
  // How each GPU was named ("0", "GPU-8e3c..."), in that order.
  virtual const std::vector<std::string>& Gpus() const = 0;
};

// NVML (`library`, opened with dlopen and initialised once, shut down with the reader) for the
// GPUs `devices` names as CUDA_VISIBLE_DEVICES does: a driver index (NVML's, the PCI order
// nvidia-smi numbers by) or a UUID or a prefix of one. nullptr with one line in `*why_not`
// when the library is missing, lacks a function, fails to initialise, or a device names no
// GPU or more than one.
std::unique_ptr<GpuMemoryReader> OpenNvmlMemoryReader(
    const std::vector<std::string>& devices, std::string* why_not,
    const std::string& library = "libnvidia-ml.so.1");

}  // namespace ditbench

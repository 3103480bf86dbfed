// The real GpuSources (machine/gpu_discovery.h): NVML, the CUDA driver API and nvidia-smi.
//
// The two libraries are opened with dlopen when List() runs, never linked, so `ditbench` has
// no link-time dependency on a driver and runs on machines without one: a library that is
// missing, lacks a function or fails to initialise makes List() return nullopt with one line
// saying which and why, and discovery moves on to the next source. Each List() loads, uses
// and closes its library (NVML is shut down again); nothing is kept between calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "machine/gpu_discovery.h"

namespace ditbench {

// A dlopen()ed library, closed on destruction. Move-only.
class DynamicLibrary {
 public:
  // nullopt, with dlerror()'s text in *error, when `name` cannot be loaded.
  static std::optional<DynamicLibrary> Open(const std::string& name, std::string* error);
  ~DynamicLibrary();
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&&) = delete;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The address of `symbol`, or nullptr.
  void* Find(const char* symbol) const;

 private:
  explicit DynamicLibrary(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;
};

// NVML (libnvidia-ml.so.1): index, UUID, name, total memory and PCI bus id of every GPU, in
// NVML's order (PCI order, nvidia-smi's indices).
class NvmlGpuSource final : public GpuSource {
 public:
  explicit NvmlGpuSource(std::string library = "libnvidia-ml.so.1")
      : library_(std::move(library)) {}
  std::string Name() const override { return "nvml"; }
  std::optional<std::vector<GpuInfo>> List(std::string* why_not) const override;

 private:
  std::string library_;
};

// The CUDA driver API (libcuda.so.1): the same fields, ordered by PCI bus id so that positions
// match NVML's and nvidia-smi's indices whatever CUDA_DEVICE_ORDER says. CUDA lists only the
// GPUs the coordinator's own CUDA_VISIBLE_DEVICES leaves; when that is set, the driver's
// indices are not known and each GpuInfo::index is -1 (UUIDs still match).
class CudaDriverGpuSource final : public GpuSource {
 public:
  explicit CudaDriverGpuSource(std::string library = "libcuda.so.1")
      : library_(std::move(library)) {}
  std::string Name() const override { return "cuda"; }
  std::optional<std::vector<GpuInfo>> List(std::string* why_not) const override;

 private:
  std::string library_;
};

// `nvidia-smi --query-gpu=...` (ParseNvidiaSmiQueryLine), the last resort.
class NvidiaSmiGpuSource final : public GpuSource {
 public:
  explicit NvidiaSmiGpuSource(std::string program = "nvidia-smi")
      : program_(std::move(program)) {}
  std::string Name() const override { return "nvidia-smi"; }
  std::optional<std::vector<GpuInfo>> List(std::string* why_not) const override;

 private:
  std::string program_;
};

}  // namespace ditbench

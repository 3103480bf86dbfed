// CUDA-only queries, in their own translation unit so that the rest of the worker needs no CUDA
// headers. In a build whose LibTorch has no CUDA these report that instead of failing to link.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace ditbench {

std::string CudaDeviceName(int device_index);
// The device's memory, in bytes (0 when unknown).
std::uint64_t CudaTotalMemoryBytes(int device_index);
// Compute capability as major x 10 + minor (90 for an H100); 0 when unknown.
int CudaComputeCapability(int device_index);
// "0000:3B:00.0", for NVML; empty when unknown.
std::string CudaPciBusId(int device_index);
// {"cuda_runtime", "cudnn", "nccl", "driver"} as strings; missing ones are absent.
nlohmann::json CudaVersions();
// REQUIRES: a CUDA build of LibTorch; throws std::runtime_error otherwise.
c10::intrusive_ptr<c10d::Backend> CreateNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size);

}  // namespace ditbench

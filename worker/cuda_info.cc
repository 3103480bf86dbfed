#include "worker/cuda_info.h"

#include <stdexcept>

#include <fmt/format.h>

#ifdef DITBENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ditbench {

#ifdef DITBENCH_HAVE_CUDA

std::string CudaDeviceName(int device_index) {
  return at::cuda::getDeviceProperties(device_index)->name;
}

std::uint64_t CudaTotalMemoryBytes(int device_index) {
  return at::cuda::getDeviceProperties(device_index)->totalGlobalMem;
}

int CudaComputeCapability(int device_index) {
  const auto* properties = at::cuda::getDeviceProperties(device_index);
  return properties->major * 10 + properties->minor;
}

std::string CudaPciBusId(int device_index) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), device_index) != cudaSuccess) return "";
  return id;
}

nlohmann::json CudaVersions() {
  nlohmann::json v;
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    v["cuda_runtime"] = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);
  if (cudaDriverGetVersion(&driver) == cudaSuccess)
    v["cuda_driver_api"] = fmt::format("{}.{}", driver / 1000, (driver % 1000) / 10);
  const auto& hooks = at::detail::getCUDAHooks();
  if (hooks.hasCuDNN()) v["cudnn"] = std::to_string(hooks.versionCuDNN());
  auto [major, minor, patch] = c10d::getNcclVersionTuple();
  v["nccl"] = fmt::format("{}.{}.{}", major, minor, patch);
  return v;
}

c10::intrusive_ptr<c10d::Backend> CreateNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
}

#else

std::string CudaDeviceName(int) { return "cuda (LibTorch built without CUDA)"; }
std::uint64_t CudaTotalMemoryBytes(int) { return 0; }
int CudaComputeCapability(int) { return 0; }
std::string CudaPciBusId(int) { return ""; }
nlohmann::json CudaVersions() { return nlohmann::json::object(); }
c10::intrusive_ptr<c10d::Backend> CreateNcclBackend(const c10::intrusive_ptr<c10d::Store>&, int,
                                                    int) {
  throw std::runtime_error("this ditbench-worker was built against a LibTorch without CUDA");
}

#endif

}  // namespace ditbench

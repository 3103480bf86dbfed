#include "worker/reference_timer.h"

#include <chrono>
#include <stdexcept>
#include <string>

#ifdef DITBENCH_HAVE_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace ditbench {
namespace {

#ifdef DITBENCH_HAVE_CUDA

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// One cudaEvent_t with timing on, owned.
class CudaEvent {
 public:
  CudaEvent() { Check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~CudaEvent() {
    if (event_) cudaEventDestroy(event_);  // never throws: a failed destroy leaks one event
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  CudaEvent& operator=(CudaEvent&&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

std::vector<double> CudaEventTimesMs(torch::Device device, int warmup, int iterations,
                                     const std::function<void()>& work) {
  c10::cuda::CUDAGuard on_device(device.index());
  for (int i = 0; i < warmup; ++i) work();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  std::vector<CudaEvent> starts(iterations), ends(iterations);
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<double> ms(iterations);
  for (int i = 0; i < iterations; ++i) {  // the textbook pattern: record, work, record, wait
    Check(cudaEventRecord(starts[i].get(), stream), "cudaEventRecord");
    work();
    Check(cudaEventRecord(ends[i].get(), stream), "cudaEventRecord");
    Check(cudaEventSynchronize(ends[i].get()), "cudaEventSynchronize");
    float elapsed = 0;
    Check(cudaEventElapsedTime(&elapsed, starts[i].get(), ends[i].get()), "cudaEventElapsedTime");
    ms[i] = elapsed;
  }
  return ms;
}

#else

std::vector<double> CudaEventTimesMs(torch::Device, int, int, const std::function<void()>&) {
  throw std::runtime_error(
      "CUDA events need a ditbench-worker built against a LibTorch with "
      "CUDA");
}

#endif

}  // namespace

std::vector<double> ReferenceTimesMs(torch::Device device, int warmup, int iterations,
                                     const std::function<void()>& work) {
  if (iterations < 1) return {};
  if (device.is_cuda()) return CudaEventTimesMs(device, warmup, iterations, work);
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> ms;
  ms.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    const auto end = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  return ms;
}

}  // namespace ditbench

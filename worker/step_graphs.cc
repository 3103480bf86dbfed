#include "worker/step_graphs.h"

#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#ifdef DITBENCH_HAVE_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ditbench {

#ifdef DITBENCH_HAVE_CUDA

struct StepGraphs::Graphs {
  std::vector<std::unique_ptr<at::cuda::CUDAGraph>> steps;
};

double StepGraphs::Capture(const torch::Tensor& input, int steps, const StepFn& step) {
  if (!input.is_cuda()) throw std::runtime_error("graph: cuda_graph needs a CUDA device");
  const auto start = std::chrono::steady_clock::now();
  const c10::DeviceIndex device = input.device().index();
  const c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(device);
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device);
  graphs_ = std::make_unique<Graphs>();
  outputs_.clear();
  input_ = input.clone();
  at::cuda::CUDAEvent ready;
  ready.record(compute);
  ready.block(side);  // the side stream starts after the eager work (and the copy above)
  {
    c10::cuda::CUDAStreamGuard on_side(side);
    const at::cuda::MempoolId_t pool = at::cuda::graph_pool_handle();
    torch::Tensor x = input_;
    for (int i = 0; i < steps; ++i) {
      auto graph = std::make_unique<at::cuda::CUDAGraph>();
      // Thread-local capture: the communicators' watchdog threads may query events meanwhile.
      graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
      torch::Tensor next = step(i, x);
      graph->capture_end();
      graphs_->steps.push_back(std::move(graph));
      outputs_.push_back(next);
      x = next;
    }
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(compute);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

torch::Tensor StepGraphs::Replay(const torch::Tensor& input, Stages* stages) {
  if (!captured()) throw std::logic_error("StepGraphs::Replay before Capture");
  input_.copy_(input);
  for (std::size_t i = 0; i < graphs_->steps.size(); ++i) {
    if (stages) stages->Begin(fmt::format("step:{}", i));
    graphs_->steps[i]->replay();  // on the current stream, where the clock marks
    if (stages) stages->End();
  }
  return outputs_.back();
}

#else

struct StepGraphs::Graphs {};

double StepGraphs::Capture(const torch::Tensor&, int, const StepFn&) {
  throw std::runtime_error("graph: cuda_graph needs a ditbench-worker built against a LibTorch "
                           "with CUDA");
}

torch::Tensor StepGraphs::Replay(const torch::Tensor&, Stages*) {
  throw std::logic_error("StepGraphs::Replay before Capture");
}

#endif

StepGraphs::StepGraphs() = default;
StepGraphs::~StepGraphs() = default;

}  // namespace ditbench

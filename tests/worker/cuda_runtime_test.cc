// The worker's CUDA paths on a real GPU: device-event timing, the allocator's peak memory, NVML
// clock sampling, and the precisions against a float64 reference. Compiled everywhere; every
// test skips itself where LibTorch sees no CUDA device (the CPU development machine, CI).
#include <chrono>
#include <string>

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "worker/clock_monitor.h"
#include "worker/cuda_info.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench::cuda_runtime_test {
namespace {

class CudaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  }
  const torch::Device cuda_{torch::kCUDA, 0};
};

double RelativeL2(const torch::Tensor& a, const torch::Tensor& b) {
  auto a64 = a.to(torch::kCPU, torch::kFloat64), b64 = b.to(torch::kCPU, torch::kFloat64);
  return (a64 - b64).norm().item<double>() / b64.norm().item<double>();
}

TEST_F(CudaRuntimeTest, DeviceEventsTimeTheQueuedWorkNotTheLaunch) {
  c10::InferenceMode inference;
  auto a = torch::randn({4096, 4096}, torch::TensorOptions().device(cuda_));
  torch::Tensor c;
  for (int i = 0; i < 3; ++i) c = torch::mm(a, a);  // warm-up: cuBLAS handle, heuristics
  at::accelerator::synchronizeDevice(0);
  auto clock = MakeDeviceClock(cuda_);
  const auto host_start = std::chrono::steady_clock::now();
  clock->Mark(0);
  for (int i = 0; i < 20; ++i) c = torch::mm(a, a);
  clock->Mark(1);
  // Launching returns long before the GPU is done: the host saw only the launches.
  const double launch_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
  clock->Synchronize();
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
  const double event_ms = clock->ElapsedMs(0, 1);
  EXPECT_GT(event_ms, 0.0);
  EXPECT_LE(event_ms, host_ms * 1.01 + 0.05);  // the events sit inside the host interval
  EXPECT_GT(event_ms, 0.5 * host_ms);          // and cover the work, most of that interval
  EXPECT_LT(launch_ms, event_ms);              // the launch-only time misses the work
}

TEST_F(CudaRuntimeTest, AllocatorPeakSeesAFreedAllocation) {
  c10::InferenceMode inference;
  ResetMemoryPeak(cuda_);
  const double before = ReadMemoryPeak(cuda_).allocated_mb;
  {
    auto big = torch::empty({256 * 1024 * 1024 / 4}, torch::TensorOptions().device(cuda_));
    big.fill_(1.0f);
  }
  MemoryPeak peak = ReadMemoryPeak(cuda_);
  EXPECT_GE(peak.allocated_mb - before, 255.0);
  ASSERT_TRUE(peak.reserved_mb.has_value());
  EXPECT_GE(*peak.reserved_mb, peak.allocated_mb);
  ResetMemoryPeak(cuda_);
  EXPECT_LT(ReadMemoryPeak(cuda_).allocated_mb, peak.allocated_mb - 255.0);
}

TEST_F(CudaRuntimeTest, NvmlSamplesTheSmClockOfThisDevice) {
  const std::string bus_id = CudaPciBusId(0);
  ASSERT_FALSE(bus_id.empty());
  ClockMonitor monitor(bus_id, 10);
  monitor.Start();
  {
    c10::InferenceMode inference;
    auto a = torch::randn({4096, 4096}, torch::TensorOptions().device(cuda_));
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < until) {
      auto c = torch::mm(a, a);
      at::accelerator::synchronizeDevice(0);
    }
  }
  ClockReport report = monitor.Stop();
  ASSERT_TRUE(report.available) << report.unavailable;
  EXPECT_GE(report.samples, 5);
  EXPECT_GT(report.sm_mhz_min, 0.0);
  EXPECT_GE(report.sm_mhz_max, report.sm_mhz_min);
  EXPECT_GT(report.sm_mhz_max, 500.0);  // busy: well above an idle clock
}

TEST_F(CudaRuntimeTest, PrecisionsLandInTheirErrorBands) {
  c10::InferenceMode inference;
  auto a = torch::randn({1024, 1024}, torch::kFloat64), b = torch::randn({1024, 1024}, torch::kFloat64);
  auto reference = torch::mm(a, b);
  auto error = [&](Precision precision) {
    const auto dtype = ApplyPrecision(precision);
    auto opts = torch::TensorOptions().device(cuda_).dtype(dtype);
    return RelativeL2(torch::mm(a.to(opts), b.to(opts)), reference);
  };
  const double fp32 = error(Precision::kFp32);
  const double tf32 = error(Precision::kTf32);
  const double bf16 = error(Precision::kBf16);
  const double fp16 = error(Precision::kFp16);
  ApplyPrecision(Precision::kFp32);  // leave TF32 off for the other tests
  EXPECT_LT(fp32, 1e-5);
  EXPECT_GT(tf32, 1e-5);   // TF32 really was on: 10 mantissa bits, not 23
  EXPECT_LT(tf32, 3e-3);
  EXPECT_GT(bf16, 1e-3);
  EXPECT_LT(bf16, 1e-2);
  EXPECT_LT(fp16, 3e-3);
  EXPECT_LT(fp16, bf16);   // fp16 has 3 more mantissa bits than bf16
}

TEST_F(CudaRuntimeTest, DenoisingOnTheGpuMatchesTheCpu) {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.precision = Precision::kFp32;
  config.steps = 3;
  config.seed = 7;
  ParallelContext single;
  auto cpu = DenoiseOnce(config, single, torch::kCPU);
  auto gpu = DenoiseOnce(config, single, cuda_);
  EXPECT_EQ(gpu.sizes(), cpu.sizes());
  EXPECT_TRUE(torch::isfinite(gpu).all().item<bool>());
  EXPECT_LT(RelativeL2(gpu, cpu), 1e-4);
  EXPECT_GT(cpu.norm().item<double>(), 1.0);
}

// graph: cuda_graph replays the captured steps: the same latent as the eager steps (the same
// kernels on the same inputs), for a sampler with multistep history (PixArt's DPM-Solver++).
TEST_F(CudaRuntimeTest, CudaGraphStepsMatchTheEagerSteps) {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.precision = Precision::kFp32;
  config.steps = 3;
  config.seed = 7;
  ParallelContext single;
  auto eager = DenoiseOnce(config, single, cuda_);
  config.graph = GraphMode::kCudaGraph;
  auto graphed = DenoiseOnce(config, single, cuda_);
  EXPECT_EQ(graphed.sizes(), eager.sizes());
  EXPECT_LT(RelativeL2(graphed, eager), 1e-6);
  EXPECT_GT(eager.norm().item<double>(), 1.0);
}

TEST_F(CudaRuntimeTest, EnvironmentNamesTheGpuAndItsLibraries) {
  auto env = DescribeEnvironment(cuda_);
  EXPECT_NE(env["device"].get<std::string>().find("NVIDIA"), std::string::npos) << env.dump();
  EXPECT_TRUE(env.contains("cuda_runtime")) << env.dump();
  EXPECT_TRUE(env.contains("nccl")) << env.dump();
}

}  // namespace
}  // namespace ditbench::cuda_runtime_test

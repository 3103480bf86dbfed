// Does ditbench report what a careful engineer would measure by hand? The same operation is
// timed two ways in one process, interleaved round by round so that machine noise hits both:
//   ditbench  : Measure() with the worker's clock (device events on GPU; synchronize + steady
//               clock on CPU), barrier, stage marks, median of the timed iterations;
//   textbook  : warm up, then per iteration synchronize, read the clock, run, synchronize,
//               read the clock (on GPU: a raw event pair on the current stream); median.
//   host, no sync (with --host-clock-no-sync): the mistake of lessons.md section 1, a host
//               clock read before and after each run without synchronizing, as a naive
//               script does; reported beside the two, never used by ditbench.
// Operations: a square matrix product, and one PixArt transformer forward (batch 2: the CFG
// batch).
//
//   build/bench/fidelity_bench [--device cpu|cuda] [--size N] [--model NAME]
//                              [--resolution PX] [--precision P] [--rounds R]
//                              [--iterations K] [--host-clock-no-sync] [--profile]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <map>
#include <set>

#include <ATen/DeviceAccelerator.h>
#include <CLI/CLI.hpp>
#include <c10/core/Event.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include "metrics/measurement.h"
#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"
#include "stats/stats.h"
#include "worker/cpu_isa_guard.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {


void Sync(torch::Device device) {
  if (device.is_cuda()) at::accelerator::synchronizeDevice(device.index());
}

// The hand-written loop: warm-up, then `iterations` individually timed runs.
std::vector<double> Textbook(const std::function<void()>& op, torch::Device device, int warmup,
                             int iterations) {
  for (int i = 0; i < warmup; ++i) op();
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    if (device.is_cuda()) {
      c10::Event start(device.type(), c10::EventFlag::BACKEND_DEFAULT);
      c10::Event end(device.type(), c10::EventFlag::BACKEND_DEFAULT);
      start.record(at::accelerator::getCurrentStream(device.index()));
      op();
      end.record(at::accelerator::getCurrentStream(device.index()));
      end.synchronize();
      ms.push_back(start.elapsedTime(end));
    } else {
      Sync(device);
      auto t0 = std::chrono::steady_clock::now();
      op();
      Sync(device);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  return ms;
}

// The naive loop: host clock around each run with no synchronize, so on a GPU it times the
// launches (until the launch queue fills and the host waits for the device).
std::vector<double> HostNoSync(const std::function<void()>& op, torch::Device device, int warmup,
                               int iterations) {
  for (int i = 0; i < warmup; ++i) op();
  Sync(device);
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    op();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  Sync(device);  // outside the timed region, so the next method starts on an idle device
  return ms;
}

// ditbench's loop: the measurement harness every trial goes through.
std::vector<double> Ditbench(const std::function<void()>& op, torch::Device device, int warmup,
                             int iterations) {
  SingleRankGroup group;
  auto clock = device.is_cpu() ? MakeHostClock(device) : MakeDeviceClock(device);
  MeasureOptions options;
  options.warmup = warmup;
  options.repeats = {iterations, iterations, 0, 0};
  Measurement m = Measure(options, group, *clock, [&](Stages&) { op(); });
  return m.slowest_ms;
}

// One run of `op` under LibTorch's profiler: the device kernels by total time, to compare with
// torch.profiler's table of another implementation (bench/profile_pixart.py).
void PrintKernelTable(const std::string& name, const std::function<void()>& op, torch::Device device) {
  using namespace torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  const bool on_cpu = device.is_cpu();
  // On the CPU there are no kernels: the ATen operators (with their input shapes) instead.
  ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/on_cpu, false, false, false);
  const std::set<ActivityType> activities = {ActivityType::CPU, ActivityType::CUDA};
  prepareProfiler(config, activities);
  enableProfiler(config, activities);
  op();
  Sync(device);
  auto result = disableProfiler();
  std::map<std::string, std::pair<int, double>> kernels;  // name -> (calls, total us)
  double total_us = 0;
  for (const auto& event : result->events()) {
    if (event.deviceType() != (on_cpu ? c10::DeviceType::CPU : c10::DeviceType::CUDA)) continue;
    std::string key = event.name().substr(0, 60);
    if (on_cpu) {  // operators by name and shapes; times include the operators they call
      key += " ";
      for (const auto& shape : event.shapes()) {
        key += "[";
        for (auto d : shape) key += std::to_string(d) + ",";
        key += "]";
      }
      key = key.substr(0, 140);
    }
    auto& k = kernels[key];
    k.first += 1;
    k.second += event.durationNs() / 1000.0;
    total_us += event.durationNs() / 1000.0;
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [kname, k] : kernels) order.emplace_back(k.second, kname);
  std::sort(order.rbegin(), order.rend());
  std::printf("\nkernels of one %s (device time total %.3f ms):\n", name.c_str(), total_us / 1000);
  for (std::size_t i = 0; i < order.size() && i < (on_cpu ? 40u : 15u); ++i)
    std::printf("%9.1f us %5d calls  %s\n", order[i].first, kernels[order[i].second].first,
                order[i].second.c_str());
}

struct Row {
  std::string name;
  std::vector<double> ours, theirs, naive;
};

void Compare(Row& row, const std::function<void()>& op, torch::Device device, int rounds,
             int iterations, bool host_no_sync) {
  for (int r = 0; r < rounds; ++r) {
    // Alternate which method goes first, so neither always runs on a warmer machine.
    auto a = [&] { auto v = Ditbench(op, device, 3, iterations); row.ours.insert(row.ours.end(), v.begin(), v.end()); };
    auto b = [&] { auto v = Textbook(op, device, 3, iterations); row.theirs.insert(row.theirs.end(), v.begin(), v.end()); };
    if (r % 2 == 0) { a(); b(); } else { b(); a(); }
    if (host_no_sync) {
      auto v = HostNoSync(op, device, 3, iterations);
      row.naive.insert(row.naive.end(), v.begin(), v.end());
    }
  }
}

}  // namespace
}  // namespace ditbench

int main(int argc, char** argv) {
  ditbench::GuardCpuIsa();
  using namespace ditbench;
  std::string device_name = "cpu", model_name = "pixart-alpha-tiny", precision = "fp32";
  int size = 1024, resolution = 512, rounds = 6, iterations = 15;
  bool host_no_sync = false, profile = false;
  CLI::App app{"fidelity_bench: ditbench's timing against a textbook loop"};
  app.add_option("--device", device_name)->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--size", size, "matrix product size N (N x N by N x N)");
  app.add_option("--model", model_name);
  app.add_option("--resolution", resolution);
  app.add_option("--precision", precision)->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--rounds", rounds);
  app.add_option("--iterations", iterations, "timed iterations per method per round");
  app.add_flag("--host-clock-no-sync", host_no_sync,
               "also time each run with a host clock and no synchronize (the naive mistake)");
  app.add_flag("--profile", profile, "also print the device kernels of one run of each operation");
  CLI11_PARSE(app, argc, argv);

  torch::Device device = device_name == "cuda" ? torch::Device(torch::kCUDA, 0) : torch::kCPU;
  c10::InferenceMode inference;
  const auto dtype = ApplyPrecision(*ParsePrecision(precision));
  auto opts = torch::TensorOptions().dtype(dtype).device(device);

  std::vector<Row> rows;
  {
    auto a = torch::randn({size, size}, opts), b = torch::randn({size, size}, opts);
    torch::Tensor c;
    Row row{"matmul " + std::to_string(size) + "^3 " + precision, {}, {}, {}};
    Compare(row, [&] { c = torch::mm(a, b); }, device, rounds, iterations, host_no_sync);
    rows.push_back(row);
  }
  {
    std::string error;
    auto config = ResolveModel(model_name, {}, &error);
    if (!config) {
      std::fprintf(stderr, "fidelity_bench: %s\n", error.c_str());
      return 2;
    }
    torch::manual_seed(0);
    auto model = MakeDitModel(*config);
    model->module().to(device, dtype);
    model->module().eval();
    const int latent = LatentSize(*config, resolution);
    auto x = torch::randn({2, config->in_channels, latent, latent}, opts);
    auto t = torch::full({2}, 999.0, torch::TensorOptions().device(device));
    Conditioning text = model->MakeConditioning(2, ImageShape{resolution, resolution, 0}).To(opts);
    ParallelContext single;
    torch::Tensor out;
    Row row{model_name + " forward " + std::to_string(resolution) + "px " + precision, {}, {}, {}};
    Compare(row, [&] { out = model->Forward(x, t, text, single); }, device, rounds, iterations, host_no_sync);
    rows.push_back(row);
    if (profile) PrintKernelTable(row.name, [&] { out = model->Forward(x, t, text, single); }, device);
  }

  std::printf("device: %s; %d rounds x %d timed iterations per method, interleaved\n",
              DeviceName(device).c_str(), rounds, iterations);
  std::printf("| operation | ditbench median (ms) | textbook median (ms) | ratio | ditbench CoV | textbook CoV |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (const auto& row : rows) {
    Summary ours = Summarize(row.ours), theirs = Summarize(row.theirs);
    std::printf("| %s | %.3f | %.3f | %.4f | %.3f | %.3f |\n", row.name.c_str(), ours.median,
                theirs.median, ours.median / theirs.median, ours.cov, theirs.cov);
  }
  if (host_no_sync) {
    std::printf("\nhost clock, no synchronize (what a naive script would report):\n");
    std::printf("| operation | host no-sync median (ms) | min (ms) | max (ms) | / textbook median |\n");
    std::printf("| --- | --- | --- | --- | --- |\n");
    for (const auto& row : rows) {
      Summary naive = Summarize(row.naive), theirs = Summarize(row.theirs);
      std::printf("| %s | %.3f | %.3f | %.3f | %.4f |\n", row.name.c_str(), naive.median,
                  naive.min, naive.max, naive.median / theirs.median);
    }
  }
  return 0;
}

// The GPU memory of an engine trial's server (issue 52), read from NVML on the trial's GPUs
// (machine/gpu_memory.h): before the server starts, once it is ready and idle (at rest), and
// the most seen while it served its requests (peak), sampled every kEngineGpuMemoryPeriodMs.
// The figures are whole-GPU: every process's memory counts. So a GPU that holds more than
// engine.dirty_gpu_mb before the server starts (an orphaned server of an earlier run, another
// user's job) is refused, the trial failing with the GPU and its memory named, rather than
// measured with someone else's memory in the server's peak.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "contract/worker_contract.h"
#include "machine/gpu_memory.h"

namespace ditbench {

inline constexpr int kEngineGpuMemoryPeriodMs = 100;

class EngineGpuMemory {
 public:
  // `reader` null: not measured, for the reason `why_not`, which Record writes down.
  // `dirty_mb`: the most a GPU may hold before the server starts (EngineSpec::dirty_gpu_mb).
  EngineGpuMemory(std::unique_ptr<GpuMemoryReader> reader, std::string why_not, double dirty_mb);
  ~EngineGpuMemory();  // stops sampling
  EngineGpuMemory(const EngineGpuMemory&) = delete;
  EngineGpuMemory& operator=(const EngineGpuMemory&) = delete;

  // Before the server starts: throws std::runtime_error naming the first GPU that holds more
  // than dirty_mb, its MiB and the threshold, or that cannot be read.
  void CheckClean();
  // Once the server is ready, before any request: its memory at rest. Then samples every
  // kEngineGpuMemoryPeriodMs on a thread of its own until StopSampling.
  void StartSampling();
  void StopSampling();
  // Into `result`: the metrics server_gpu_mem_rest_mb and server_gpu_mem_peak_mb (the largest
  // of the trial's GPUs, MiB), and the environment's engine_gpu_memory (each GPU's figures,
  // the samples taken, what the figures are; or why they were not measured).
  void Record(RankResult& result) const;

 private:
  void Sample();  // one reading folded into peak_ (under mutex_)
  void Loop();

  std::unique_ptr<GpuMemoryReader> reader_;
  std::string why_not_;
  double dirty_mb_;
  std::vector<double> before_, rest_, peak_;
  int samples_ = 0;
  std::string read_error_;  // the first failed reading while sampling
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread sampler_;
};

// The trial's memory watch: NVML on the GPUs CUDA_VISIBLE_DEVICES gives the client, when the
// trial runs on GPUs and ditbench starts its server; otherwise one that measures nothing and
// says why (a CPU trial, an attached server, no NVML).
std::unique_ptr<EngineGpuMemory> WatchEngineGpuMemory(const TrialFile& trial);

}  // namespace ditbench

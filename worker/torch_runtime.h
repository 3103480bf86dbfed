// The worker's side effects behind the measurement interfaces: c10d process groups, device
// clocks, memory peaks and the environment. Torch-dependent; only ditbench-worker links it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "metrics/measurement.h"
#include "model_zoo/parallel/parallel_attention.h"

namespace ditbench {

// The torchrun environment of one rank (docs/architecture.md, "Worker contract"), with Slurm's
// as a fallback.
struct RankEnvironment {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // Rank 0 of a local launch: a socket already listening on MASTER_PORT, which the store is
  // served on (DITBENCH_RENDEZVOUS_FD, contract/worker_environment.h); -1: bind the port.
  int listen_fd = -1;
  // Reads RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
  // DITBENCH_RENDEZVOUS_FD (refused unless it is a socket listening on MASTER_PORT); where one
  // is unset, Slurm's: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_NTASKS_PER_NODE, the
  // first host of SLURM_JOB_NODELIST and 20000 + SLURM_JOB_ID % 20000 (the port ditbench's
  // Slurm job script uses). Throws std::invalid_argument on a malformed value.
  static RankEnvironment FromEnv();
};

// The store the trial's ranks meet through: a TCP store served by rank 0 at MASTER_ADDR:
// MASTER_PORT (5 minutes for every rank to arrive), or an in-process one for a single rank.
c10::intrusive_ptr<c10d::Store> RendezvousStore(const RankEnvironment& env);

// Creates a c10d backend over `store` for `size` ranks: NCCL for CUDA, Gloo for CPU.
c10::intrusive_ptr<c10d::Backend> CreateBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                int rank, int size, bool cuda);

// The whole trial's ranks as a RankGroup (barrier + all-reduce of the max).
class ProcessRankGroup final : public RankGroup {
 public:
  ProcessRankGroup(RankSubgroup group, torch::Device device);
  int rank() const override { return group_.rank; }
  int size() const override { return group_.size; }
  void Barrier() override;
  double AllReduceMax(double value) override;

 private:
  RankSubgroup group_;
  torch::Device device_;
};

// Events on the device's current stream (CUDA and any accelerator with timing events).
std::unique_ptr<IterationClock> MakeDeviceClock(torch::Device device);
// A monotonic host clock; Mark() first waits for the device (no-op on CPU).
std::unique_ptr<IterationClock> MakeHostClock(torch::Device device);

// Peak memory since the process started: allocator peak allocated / reserved on a GPU, peak
// resident set on CPU (reserved is then empty).
struct MemoryPeak {
  double allocated_mb = 0;
  std::optional<double> reserved_mb;
};
void ResetMemoryPeak(torch::Device device);
MemoryPeak ReadMemoryPeak(torch::Device device);

// Device name, library versions, threads and NCCL_*/CUDA_* variables.
nlohmann::json DescribeEnvironment(torch::Device device);
std::string DeviceName(torch::Device device);

}  // namespace ditbench

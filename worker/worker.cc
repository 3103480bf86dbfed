#include "worker/worker.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <thread>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "base/atomic_file.h"
#include "contract/worker_environment.h"
#include "experiments/trial_kind.h"
#include "experiments/validity.h"
#include "machine/cpu_list.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

int Finish(const std::filesystem::path& dir, RankResult& result, const char* status,
           const std::string& error, int code) {
  result.status = status;
  result.error = error;
  if (!error.empty()) std::cerr << "ditbench-worker: rank " << result.rank << ": " << error << "\n";
  try {
    WriteFileAtomically(RankResultPath(dir, result.rank), ToJson(result).dump(1));
  } catch (const std::exception& e) {
    std::cerr << "ditbench-worker: " << e.what() << "\n";
    return kWorkerFailed;
  }
  return code;
}

// A CPU rank pinned to cores (--policy pack) gets one thread per core of its own; otherwise
// the ranks of this node share the cores instead of oversubscribing them.
void UseThisRanksCores(const RankEnvironment& env) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(
      CpuThreadsPerRank(std::getenv(kRankCpusVariable), cores, env.local_world_size));
}

// What a rank of each trial kind runs (experiments/trial_kind.h), one row per kind in TrialKind's
// order: a timed trial's iterations, or a served trial's requests, the list its trial file holds.
struct KindRunner {
  TrialKind kind;
  void (*run)(const TrialFile& trial, ParallelContext& parallel,
              const c10::intrusive_ptr<c10d::Store>& store, torch::Device device,
              RankResult& result, const WorkerOptions& options, const std::filesystem::path& output,
              const std::filesystem::path& dir);
};
constexpr KindRunner kKindRunners[] = {
    {TrialKind::kTimed,
     [](const TrialFile& trial, ParallelContext& parallel, const c10::intrusive_ptr<c10d::Store>&,
        torch::Device device, RankResult& result, const WorkerOptions& options,
        const std::filesystem::path& output, const std::filesystem::path& dir) {
       RunDitTrial(trial.config, parallel, device, result, options.hooks, output, dir);
     }},
    {TrialKind::kServed,
     [](const TrialFile& trial, ParallelContext& parallel,
        const c10::intrusive_ptr<c10d::Store>& store, torch::Device device, RankResult& result,
        const WorkerOptions&, const std::filesystem::path& output, const std::filesystem::path&) {
       ServeDitTrial(trial.config, trial.requests, parallel, store, device, result, output);
     }},
};
static_assert(std::size(kKindRunners) == kTrialKinds, "a trial kind without a runner");
constexpr bool RunnersInKindOrder() {
  for (std::size_t i = 0; i < std::size(kKindRunners); ++i)
    if (static_cast<std::size_t>(kKindRunners[i].kind) != i) return false;
  return true;
}
static_assert(RunnersInKindOrder(), "kKindRunners in TrialKind's order");

}  // namespace

int DescribeWorker() {
  const bool cuda = torch::cuda::is_available();
  nlohmann::json out = DescribeEnvironment(cuda ? torch::Device(torch::kCUDA, 0) : torch::kCPU);
  out["cuda_available"] = cuda;
  std::cout << out.dump(2) << "\n";
  return 0;
}

int RunWorker(const WorkerOptions& options) {
  RankResult result;
  std::filesystem::path dir = options.result_dir.empty()
                                  ? options.trial.parent_path()
                                  : options.result_dir;
  if (dir.empty()) dir = ".";
  RankEnvironment env;
  try {
    env = RankEnvironment::FromEnv();
  } catch (const std::exception& e) {
    return Finish(dir, result, "invalid", e.what(), kWorkerInvalidConfig);
  }
  result.rank = env.rank;
  result.world_size = env.world_size;

  TrialFile trial;
  try {
    trial = ReadTrialFile(options.trial);
  } catch (const std::exception& e) {
    return Finish(dir, result, "invalid", e.what(), kWorkerInvalidConfig);
  }
  const TrialConfig& config = trial.config;
  const bool cuda = trial.device == "cuda";
  Capacity capacity{env.world_size, cuda};
  if (auto reason = InvalidReason(config, capacity, &trial.requests))
    return Finish(dir, result, "invalid", *reason, kWorkerInvalidConfig);
  if (config.world_size() != env.world_size)
    return Finish(dir, result, "invalid",
                  fmt::format("trial needs world size {} but WORLD_SIZE={}", config.world_size(),
                              env.world_size),
                  kWorkerInvalidConfig);

  try {
    if (cuda && !torch::cuda::is_available())
      return Finish(dir, result, "invalid", "trial asks for cuda but no CUDA device is visible",
                    kWorkerInvalidConfig);
    torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank) : torch::kCPU;
    if (!cuda) UseThisRanksCores(env);
    result.device = DeviceName(device);
    result.backend = env.world_size == 1 ? "none" : (cuda ? "nccl" : "gloo");

    const c10::intrusive_ptr<c10d::Store> store = RendezvousStore(env);
    ParallelContext parallel = BuildParallelContext(
        config, env.rank, store,
        [cuda](const auto& s, int rank, int size) { return CreateBackend(s, rank, size, cuda); });
    if (env.rank == 0) result.environment = DescribeEnvironment(device);
    // World rank 0 keeps the final output for the output-error check (runner/output_error.h).
    const auto output = env.rank == 0 ? dir / kOutputFileName : std::filesystem::path();
    kKindRunners[static_cast<int>(KindOf(config))].run(trial, parallel, store, device, result,
                                                       options, output, dir);
  } catch (const c10::OutOfMemoryError& e) {
    return Finish(dir, result, "oom", std::string("out of memory: ") + e.what_without_backtrace(),
                  kWorkerOutOfMemory);
  } catch (const c10::Error& e) {
    return Finish(dir, result, "failed", e.what_without_backtrace(), kWorkerFailed);
  } catch (const std::exception& e) {
    return Finish(dir, result, "failed", e.what(), kWorkerFailed);
  }
  return Finish(dir, result, "ok", "", kWorkerOk);
}

int RunSelfcheck(const std::filesystem::path& file, const SelfcheckOptions& options) {
  RankEnvironment env;
  try {
    env = RankEnvironment::FromEnv();
  } catch (const std::exception& e) {
    std::cerr << "ditbench-worker: --selfcheck: " << e.what() << "\n";
    return kWorkerInvalidConfig;
  }
  const auto entered = std::chrono::steady_clock::now();
  try {
    const bool cuda = torch::cuda::is_available();
    const torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank) : torch::kCPU;
    if (!cuda) UseThisRanksCores(env);
    RankSubgroup world;
    world.rank = env.rank;
    world.size = env.world_size;
    c10::intrusive_ptr<c10d::Store> store;
    if (env.world_size > 1) {
      store = RendezvousStore(env);
      world.backend = CreateBackend(store, env.rank, env.world_size, cuda);
    }
    const double setup_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - entered).count();
    SelfcheckMeasurements m = MeasureSelfcheck(device, world, options, store);
    if (m.calibration) m.calibration->setup_s = setup_s;
    for (const std::string& error : m.errors)
      std::cerr << "ditbench-worker: rank " << env.rank << ": selfcheck: " << error << "\n";
    if (env.rank == 0) WriteFileAtomically(file, SelfcheckJson(m).dump(1));
  } catch (const c10::Error& e) {
    std::cerr << "ditbench-worker: rank " << env.rank
              << ": selfcheck: " << e.what_without_backtrace() << "\n";
    return kWorkerFailed;
  } catch (const std::exception& e) {
    std::cerr << "ditbench-worker: rank " << env.rank << ": selfcheck: " << e.what() << "\n";
    return kWorkerFailed;
  }
  return kWorkerOk;
}

}  // namespace ditbench

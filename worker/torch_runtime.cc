#include "worker/torch_runtime.h"

#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/Event.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>

#include "contract/slurm_hostlist.h"
#include "contract/worker_environment.h"
#include "machine/host_info.h"
#include "worker/cpu_isa_guard.h"
#include "worker/cuda_info.h"

namespace ditbench {
namespace {

int EnvInt(const char* name, const char* fallback_name, int fallback) {
  const char* value = std::getenv(name);
  if (!value && fallback_name) value = std::getenv(fallback_name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 20)
    throw std::invalid_argument(fmt::format("environment variable {}='{}' is not a valid integer",
                                            name, value));
  return static_cast<int>(parsed);
}

// The descriptor `text` names, once checked to be a socket listening on 127.0.0.1:`port` (a
// launcher's DITBENCH_RENDEZVOUS_FD); throws std::invalid_argument naming the variable.
int ListeningSocketOn(const char* text, int port) {
  char* end = nullptr;
  const long fd = std::strtol(text, &end, 10);
  int listening = 0;
  socklen_t size = sizeof(listening);
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  const bool ok =
      *end == '\0' && fd >= 3 && fd < (1 << 20) &&
      ::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 &&
      listening != 0 &&
      ::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
      addr.sin_family == AF_INET && ntohs(addr.sin_port) == port;
  if (!ok)
    throw std::invalid_argument(
        fmt::format("environment variable {}='{}' is not a socket listening on MASTER_PORT {}",
                    kRendezvousFdVariable, text, port));
  return static_cast<int>(fd);
}

class DeviceEventClock final : public IterationClock {
 public:
  explicit DeviceEventClock(torch::Device device) : device_(device) {}
  void Mark(int slot) override {
    while (static_cast<int>(events_.size()) <= slot)
      events_.emplace_back(device_.type(), c10::EventFlag::BACKEND_DEFAULT);  // timing on
    events_[slot].record(at::accelerator::getCurrentStream(device_.index()));
    last_ = slot;
  }
  void Synchronize() override { events_[last_].synchronize(); }
  double ElapsedMs(int from, int to) override { return events_[from].elapsedTime(events_[to]); }

 private:
  torch::Device device_;
  std::vector<c10::Event> events_;
  int last_ = 0;
};

class SynchronizingHostClock final : public IterationClock {
 public:
  explicit SynchronizingHostClock(torch::Device device) : device_(device) {}
  void Mark(int slot) override {
    if (device_.is_cuda()) at::accelerator::synchronizeDevice(device_.index());
    if (static_cast<int>(times_.size()) <= slot) times_.resize(slot + 1);
    times_[slot] = std::chrono::steady_clock::now();
  }
  void Synchronize() override {}
  double ElapsedMs(int from, int to) override {
    return std::chrono::duration<double, std::milli>(times_[to] - times_[from]).count();
  }

 private:
  torch::Device device_;
  std::vector<std::chrono::steady_clock::time_point> times_;
};

}  // namespace

RankEnvironment RankEnvironment::FromEnv() {
  RankEnvironment env;
  env.rank = EnvInt("RANK", "SLURM_PROCID", 0);
  env.local_rank = EnvInt("LOCAL_RANK", "SLURM_LOCALID", 0);
  env.world_size = EnvInt("WORLD_SIZE", "SLURM_NTASKS", 1);
  env.local_world_size = EnvInt("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE", env.world_size);
  // Under srun without the torchrun variables: the port from the job id (as ditbench's Slurm
  // job script derives it) and the first host of the job's node list.
  int port = 29500;
  if (const char* job = std::getenv("SLURM_JOB_ID"); job && *job) {
    char* end = nullptr;
    const long long id = std::strtoll(job, &end, 10);  // job ids outgrow EnvInt's range
    if (*end == '\0' && id >= 0) port = 20000 + static_cast<int>(id % 20000);
  }
  env.master_port = EnvInt("MASTER_PORT", nullptr, port);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) {
    env.master_addr = addr;
  } else if (const char* nodes = std::getenv("SLURM_JOB_NODELIST"); nodes && *nodes) {
    env.master_addr = FirstSlurmHost(nodes);
  }
  if (const char* fd = std::getenv(kRendezvousFdVariable); fd && *fd && env.rank == 0)
    env.listen_fd = ListeningSocketOn(fd, env.master_port);
  if (env.rank >= env.world_size)
    throw std::invalid_argument(
        fmt::format("RANK={} is not below WORLD_SIZE={}", env.rank, env.world_size));
  return env;
}

c10::intrusive_ptr<c10d::Store> RendezvousStore(const RankEnvironment& env) {
  if (env.world_size == 1) return c10::make_intrusive<c10d::HashStore>();
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  if (env.rank == 0 && env.listen_fd >= 0) options.masterListenFd = env.listen_fd;
  options.numWorkers = env.world_size;
  options.waitWorkers = true;
  options.timeout = std::chrono::seconds(300);
  return c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
}

c10::intrusive_ptr<c10d::Backend> CreateBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                int rank, int size, bool cuda) {
  if (cuda) return CreateNcclBackend(store, rank, size);
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

ProcessRankGroup::ProcessRankGroup(RankSubgroup group, torch::Device device)
    : group_(std::move(group)), device_(device) {}

void ProcessRankGroup::Barrier() {
  if (group_.size == 1) return;
  // An all-reduce on the compute device rather than c10d's barrier: NCCL's barrier picks its
  // own device guess, and this orders the barrier on the stream the timed work uses.
  AllReduceMax(0.0);
}

double ProcessRankGroup::AllReduceMax(double value) {
  if (group_.size == 1) return value;
  std::vector<torch::Tensor> t = {
      torch::full({1}, value, torch::TensorOptions().dtype(torch::kFloat64).device(device_))};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  group_.backend->allreduce(t, options)->wait();
  return t[0].item<double>();  // synchronizes the device
}

std::unique_ptr<IterationClock> MakeDeviceClock(torch::Device device) {
  return std::make_unique<DeviceEventClock>(device);
}

std::unique_ptr<IterationClock> MakeHostClock(torch::Device device) {
  return std::make_unique<SynchronizingHostClock>(device);
}

void ResetMemoryPeak(torch::Device device) {
  if (device.is_cuda()) {
    // The allocator's statistics exist only once the device is initialized; before the first
    // allocation they throw "Invalid device argument" (seen as every trial failing on an H100).
    at::globalContext().lazyInitDevice(device.type());
    at::accelerator::resetPeakStats(device.index());
  }
}

MemoryPeak ReadMemoryPeak(torch::Device device) {
  MemoryPeak peak;
  if (device.is_cuda()) {
    at::globalContext().lazyInitDevice(device.type());
    auto stats = at::accelerator::getDeviceStats(device.index());
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    peak.allocated_mb = stats.allocated_bytes[kAll].peak / 1048576.0;
    peak.reserved_mb = stats.reserved_bytes[kAll].peak / 1048576.0;
  } else {
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    peak.allocated_mb = usage.ru_maxrss / 1024.0;  // Linux reports KiB
  }
  return peak;
}

std::string DeviceName(torch::Device device) {
  if (device.is_cuda()) return CudaDeviceName(device.index());
  return "cpu";
}

nlohmann::json DescribeEnvironment(torch::Device device) {
  nlohmann::json env;
  env["host"] = Hostname();
  env["cpu_model"] = CpuModel();
  env["cpu_count"] = std::thread::hardware_concurrency();
  env["torch_threads"] = at::get_num_threads();
  env["libtorch"] = TORCH_VERSION;
  env["device"] = DeviceName(device);
  if (device.is_cuda()) {
    env["device_count"] = static_cast<int>(at::accelerator::deviceCount());
    env.update(CudaVersions());
  }
  env["variables"] = RecordedVariables();
  if (!CpuIsaReport().is_null()) env["cpu_isa"] = CpuIsaReport();
  return env;
}

}  // namespace ditbench

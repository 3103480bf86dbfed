// Fakes for the coordinator's side effects: a launcher that "runs" trials by writing rank
// files, an interrupt the test sets, and GPUs the test lists. The sweep loop is tested with
// these, without processes or GPUs.
#pragma once

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "contract/worker_contract.h"
#include "launch/interrupt.h"
#include "launch/launcher.h"
#include "machine/gpu_discovery.h"
#include "machine/machine_health.h"
#include "metrics/serve_loop.h"
#include "metrics/serving.h"

namespace ditbench::test {

class FakeInterrupt final : public InterruptSource {
 public:
  bool Requested() const override { return requested; }
  bool requested = false;
};

// Machine health the test decides: busy for the first `busy_samples` samples, idle after, and
// busy whenever `disturbed` is set; every sample judges the stretch `judged` (none by default).
class FakeHealthProbe final : public HealthProbe {
 public:
  MachineHealth Sample() const override {
    MachineHealth h;
    h.cores = 2;
    h.judged = judged;
    h.busy = samples++ < busy_samples || disturbed;
    h.load1 = h.busy ? 3.0 : 0.1;
    h.other_cores = h.busy ? 1.0 : 0.0;
    if (h.busy) h.busiest.push_back({4242, "burn", 1.0});
    return h;
  }
  MachineHealth SampleWithGpus() const override {
    MachineHealth h = Sample();
    h.gpu_others = gpu_others;
    return h;
  }
  int busy_samples = 0;
  bool disturbed = false;
  HostWindow judged;
  std::vector<GpuProcess> gpu_others;  // on GPU runs: other programs on the GPUs
  mutable int samples = 0;
};

class FakeGpuDiscovery final : public GpuDiscovery {
 public:
  std::vector<GpuInfo> ListGpus() const override { return gpus; }
  std::optional<std::string> InheritedVisibleDevices() const override { return inherited; }
  std::vector<GpuInfo> gpus;
  std::optional<std::string> inherited;
};

// Trials end in the order they started, one per Wait(), cancelled ones first. A trial ends
// well (every rank writes a result with `repeats.min` timed samples; a serving trial's ranks
// serve its load as SimulateQueue does on its replicas, 100 ms a request, the load starting at
// `serve_start_s` of the host's clock) unless its ulysses degree is `fail_ulysses`, or
// `fail_all` is set (rank 0 exits 1 after logging "boom"), or `launch_error_ulysses` (it could
// not be started), or `throw_ulysses` (Start() throws, as a launcher should not). Setting
// `interrupt` and `interrupt_at_start` raises the interrupt when that many trials have been
// started (Ctrl-C while the last one runs).
class FakeLauncher final : public Launcher {
 public:
  LaunchHandle Start(const LaunchRequest& request) override {
    if (ReadTrialFile(request.run_dir / "trial.json").config.ulysses == throw_ulysses)
      throw std::runtime_error("no free port (injected)");
    const LaunchHandle handle = next_handle_++;
    started.push_back(request);
    in_flight_.emplace(handle, Trial{request, false});
    max_in_flight = std::max(max_in_flight, InFlight());
    // Devices of every pair of trials in flight together must be disjoint.
    for (const auto& [other, trial] : in_flight_)
      if (other != handle)
        for (const auto& d : request.devices)
          if (std::count(trial.request.devices.begin(), trial.request.devices.end(), d))
            overlapping_devices = true;
    if (interrupt != nullptr && static_cast<int>(started.size()) == interrupt_at_start)
      interrupt->requested = true;
    if (on_start) on_start(request);
    return handle;
  }

  std::optional<FinishedTrial> Wait(std::chrono::milliseconds) override {
    if (in_flight_.empty()) return std::nullopt;
    if (on_wait) on_wait(waits_);
    if (waits_++ < waits_before_finish) return std::nullopt;  // still running
    waits_ = 0;
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [](const auto& entry) { return entry.second.cancelled; });
    if (it == in_flight_.end()) it = in_flight_.begin();
    FinishedTrial finished{it->first, Finish(it->second)};
    in_flight_.erase(it);
    return finished;
  }

  void Cancel(LaunchHandle handle) override {
    if (auto it = in_flight_.find(handle); it != in_flight_.end()) it->second.cancelled = true;
    ++cancels;
  }

  int InFlight() const override { return static_cast<int>(in_flight_.size()); }
  bool RanksShareHost() const override { return shares_host; }

  // A restarted coordinator's adoption: jobs in `attachable` are watched again (and end like a
  // started trial); others are unknown to the "scheduler".
  std::optional<LaunchHandle> Attach(const std::string& job,
                                     const LaunchRequest& request) override {
    if (!attachable.count(job)) return std::nullopt;
    attached.push_back(request);
    const LaunchHandle handle = next_handle_++;
    in_flight_.emplace(handle, Trial{request, false});
    return handle;
  }

  std::set<std::string> attachable;
  std::vector<LaunchRequest> attached;
  std::vector<LaunchRequest> started;
  int max_in_flight = 0;
  bool overlapping_devices = false;
  int cancels = 0;
  int fail_ulysses = -1;
  bool fail_all = false;  // every trial fails as a fail_ulysses one does
  int oom_resolution = -1;  // trials of this resolution run out of memory
  double ms_per_seed = 0;   // every sample is this much slower per unit of the trial's seed
  // A speed law: when set, every timed sample of every rank takes law(config) ms exactly.
  std::function<double(const TrialConfig&)> law;
  int launch_error_ulysses = -1;
  int throw_ulysses = -1;
  bool shares_host = true;      // RanksShareHost(): ranks as local processes
  double serve_start_s = 1000;  // a serving trial's RankResult::serve_start_monotonic_s
  FakeInterrupt* interrupt = nullptr;
  int interrupt_at_start = -1;
  // Each trial ends only after this many Wait()s returned nothing; `on_wait(i)` is called on
  // the i-th Wait() (from 0) of each, before it returns.
  int waits_before_finish = 0;
  std::function<void(int)> on_wait;
  std::function<void(const LaunchRequest&)> on_start;  // called after each Start()

 private:
  struct Trial {
    LaunchRequest request;
    bool cancelled;
  };

  LaunchOutcome Finish(const Trial& trial) const {
    const LaunchRequest& request = trial.request;
    TrialFile file = ReadTrialFile(request.run_dir / "trial.json");
    LaunchOutcome outcome;
    outcome.ranks.resize(request.world_size, RankExit{true});
    if (trial.cancelled) {
      outcome.cancelled = true;
      for (auto& rank : outcome.ranks) rank = RankExit{true, 0, SIGKILL, true};
      return outcome;
    }
    if (file.config.ulysses == launch_error_ulysses) {
      outcome.ranks.assign(request.world_size, RankExit{});
      outcome.launch_error = "cannot start worker: injected launch error";
      return outcome;
    }
    if (file.config.resolution == oom_resolution) {
      outcome.ranks[0].exit_code = kWorkerOutOfMemory;
      outcome.first_failed_rank = 0;
      std::ofstream(RankLogPath(request.run_dir, 0)) << "CUDA out of memory (injected)\n";
      return outcome;
    }
    if (file.config.ulysses == fail_ulysses || fail_all) {
      outcome.ranks[0].exit_code = 1;
      outcome.first_failed_rank = 0;
      std::ofstream(RankLogPath(request.run_dir, 0)) << "boom: injected failure\n";
      return outcome;
    }
    if (file.config.serve) {
      WriteServed(file, request);
      return outcome;
    }
    for (int r = 0; r < request.world_size; ++r) {
      RankResult result;
      result.rank = r;
      result.world_size = request.world_size;
      result.device = "cpu";
      result.samples = {{r, 0, "iteration", 50.0, true}};
      for (int i = 1; i <= file.config.repeats.min; ++i)
        result.samples.push_back(
            {r, i, "iteration",
             law ? law(file.config) : 10.0 + r + i + ms_per_seed * double(file.config.seed),
             false});
      result.peak_mem_mb = 10;
      WriteFileAtomically(RankResultPath(request.run_dir, r), ToJson(result).dump());
    }
    return outcome;
  }

  // Every rank's samples of the requests its replica served; each replica's leader records them.
  // The requests are the trial file's, as the worker's are.
  void WriteServed(const TrialFile& file, const LaunchRequest& request) const {
    const TrialConfig& config = file.config;
    const std::vector<Request>& load = file.requests.requests;
    const std::vector<RequestRecord> served =
        SimulateQueue(load, std::vector<double>(load.size(), 100.0), config.dp);
    for (int r = 0; r < request.world_size; ++r) {
      const RankCoordinates at = CoordinatesOf(config.degrees(), r);
      RankResult result;
      result.rank = r;
      result.world_size = request.world_size;
      result.device = "cpu";
      result.stop_reason = "served";
      for (const RequestRecord& q : served) {
        if (q.replica != at.dp) continue;
        result.samples.push_back({r, q.index, kIterationStage, q.end_ms - q.arrival_ms,
                                  q.index < config.serve->warmup_requests});
        if (LeadsReplica(at)) result.requests.push_back(q);
      }
      result.serve_start_monotonic_s = serve_start_s;
      WriteFileAtomically(RankResultPath(request.run_dir, r), ToJson(result).dump());
    }
  }

  std::map<LaunchHandle, Trial> in_flight_;
  LaunchHandle next_handle_ = 1;
  int waits_ = 0;
};

}  // namespace ditbench::test

// Machine health around a trial on CPU: the load average and the busiest processes that are
// not this run's own (not the coordinator, not any of its descendants, ranks included), from
// /proc. A trial measured while other work took CPU time is flagged `busy`: its numbers are
// suspect (a 1-rank baseline slowed 20x by someone else's job makes a 47x "speedup").
//
// Deciding is pure (JudgeHealth over two snapshots of /proc, TrialHealth over the samples of
// one trial); sampling is the ProcHealthProbe, behind the HealthProbe interface so that the
// sweep loop runs without it in tests.
//
// A trial's window is sampled throughout, not only at its ends: the coordinator samples every
// HealthSamplePeriodS while trials run, each sample judging the stretch since the one before,
// and a trial is busy when any of its samples is. Judged over the whole trial at once, a
// disturbance of half a second in a ten-second trial averages out to nothing.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

// CPU time of one process so far, from /proc/<pid>/stat.
struct ProcessTimes {
  long ppid = 0;
  std::string name;    // comm, without the parentheses
  double cpu_s = 0;    // utime + stime, seconds
};

// One /proc/<pid>/stat into `out` (`ticks_per_s`: sysconf(_SC_CLK_TCK)); false when it is not
// one. The name is made safe to store and print (base/terminal_text.h: ForTerminal).
bool ParseProcStat(std::string_view text, double ticks_per_s, ProcessTimes* out);

// Every process at one instant.
struct ProcSnapshot {
  std::map<long, ProcessTimes> processes;
  double at_s = 0;  // the host's monotonic clock (HostWindow), seconds
};

// A stretch [begin_s, end_s) of the host's monotonic clock, in seconds:
// std::chrono::steady_clock, which on Linux is CLOCK_MONOTONIC, one clock for every process
// of the host (a worker's SteadyHostClock reads the same one). Empty when begin_s >= end_s.
struct HostWindow {
  double begin_s = 0;
  double end_s = 0;
  bool operator==(const HostWindow&) const = default;
};

struct BusyProcess {
  long pid = 0;
  std::string name;
  double cores = 0;  // CPU used over the window, in cores (1.0 = one core all the time)
};

// A compute process on a GPU, as the driver lists it (`nvidia-smi --query-compute-apps`).
struct GpuProcess {
  std::string gpu_uuid;  // "GPU-8e3c..."
  long pid = 0;
  std::string name;
  double used_mb = 0;  // device memory it holds
};

// One line of `nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory
// --format=csv,noheader,nounits`; nullopt for anything else.
std::optional<GpuProcess> ParseComputeAppLine(const std::string& line);

struct MachineHealth {
  double load1 = 0;            // /proc/loadavg, 1-minute
  int cores = 0;               // online CPUs
  double other_cores = 0;      // cores used by processes that are not this run's
  std::vector<BusyProcess> busiest;  // the heaviest of them, heaviest first
  bool busy = false;           // other_cores >= the probe's threshold
  // GPU runs: compute processes that are not this run's, on any GPU (see BusyOn).
  std::vector<GpuProcess> gpu_others;
  // The stretch this judgment is about (JudgeHealth: from the earlier snapshot to the later);
  // empty when unknown.
  HostWindow judged;

  // Busy for a trial on the GPUs `gpu_uuids`: the CPU was busy, or another program computes
  // on one of those GPUs (it takes SMs, memory bandwidth and memory from the trial).
  bool BusyOn(const std::vector<std::string>& gpu_uuids) const;

  nlohmann::json ToJson() const;
  // "load 3.10 on 2 cores; others used 1.00 cores: burn (pid 42) 0.98", then the other
  // programs on the GPUs `gpu_uuids`: "; on GPU-8e3c: python3 (pid 77) 20480 MiB".
  std::string Describe(const std::vector<std::string>& gpu_uuids = {}) const;
};

// Processes that belong to `root` (itself and every descendant in `snapshot`).
std::vector<long> ProcessTree(const ProcSnapshot& snapshot, long root);

// Health over the window between two snapshots. Processes of `ours` are left out; processes
// that appear only in `after` count from zero. `busy_cores`: the threshold; `top`: how many
// busiest processes to keep (those using at least 1% of a core).
MachineHealth JudgeHealth(const ProcSnapshot& before, const ProcSnapshot& after,
                          const std::vector<long>& ours, double load1, int cores,
                          double busy_cores, std::size_t top);

// How often the coordinator samples the machine while trials run: on CPU every quarter second
// (a read of /proc); on GPU every second (each sample also asks nvidia-smi).
double HealthSamplePeriodS(bool on_gpu);

// One trial's machine health over its whole window: the sample at its start (judging the
// stretch just before it), the samples taken while it ran, and the one at its end. Folds them
// as they come, keeping the worst of those in between and the stretches judged busy; pure.
// Busy when any of them is busy on the trial's GPUs (MachineHealth::BusyOn).
class TrialHealth {
 public:
  // The most busy windows ToJson writes; the rest are counted ("busy_windows_left_out").
  static constexpr std::size_t kMaxStoredBusyWindows = 100;

  TrialHealth(std::vector<std::string> gpu_uuids, MachineHealth at_start);
  void Add(const MachineHealth& during);  // a sample taken while the trial ran
  void Finish(MachineHealth at_end);

  bool Busy() const;
  // What made it busy, for a note: the first busy sample of start, during, end (or "").
  std::string Note() const;
  // The stretches judged busy on the trial's GPUs (MachineHealth::judged of each busy sample),
  // in the order seen, overlapping or touching ones merged; samples without a judged stretch
  // are left out. What a serving trial's requests are marked busy by (metrics/busy_requests.h).
  const std::vector<HostWindow>& BusyWindows() const { return busy_windows_; }
  // {"start", "end", "busy", "samples_during", "during" (the worst sample taken while it ran,
  // when any), "gpus" (GPU runs), "note" (busy ones), "busy_windows" ([[begin_s, end_s], ...],
  // at most kMaxStoredBusyWindows, when any; "busy_windows_left_out": how many more)}: stored
  // with the trial.
  nlohmann::json ToJson() const;

 private:
  void Judge(const MachineHealth& sample);  // keeps its stretch when it is busy

  std::vector<std::string> gpus_;
  MachineHealth start_;
  std::optional<MachineHealth> worst_during_, end_;
  int samples_during_ = 0;
  std::vector<HostWindow> busy_windows_;
};

class HealthProbe {
 public:
  virtual ~HealthProbe() = default;
  // Samples the machine now (may block for a short window).
  virtual MachineHealth Sample() const = 0;
  // Sample() plus the compute processes on the GPUs that are not this run's (GPU runs).
  virtual MachineHealth SampleWithGpus() const { return Sample(); }
};

// Reads /proc; this process and its descendants are "ours". Each Sample() judges the most
// recent stretch of at least `window`: from the newest earlier snapshot that is at least
// `window` old to now. It blocks (up to `window`) only when it keeps no snapshot that old, so
// back-to-back samples, e.g. at the end of one short trial and the start of the next, cost a
// read of /proc each instead of a `window` of sleep, and a sample within kReuse of the previous
// one returns that one's judgment (bench/command-overhead). Not thread-safe.
class ProcHealthProbe final : public HealthProbe {
 public:
  // Half a core of someone else's work over the window makes the machine busy.
  static constexpr double kBusyCores = 0.5;
  // A judgment made less than this long ago is returned again instead of reading /proc (which
  // takes milliseconds with a few hundred processes): what it detects, other programs using
  // the CPU, changes more slowly, and the stretch judged is at least `window` long anyway.
  static constexpr double kReuseS = 0.050;
  explicit ProcHealthProbe(std::chrono::milliseconds window = std::chrono::milliseconds(100),
                           double busy_cores = kBusyCores, std::size_t top = 5)
      : window_(window), busy_cores_(busy_cores), top_(top) {}
  MachineHealth Sample() const override;
  MachineHealth SampleWithGpus() const override;
  // Takes the first snapshot now, so that the first Sample() (before the first trial) judges
  // the stretch since then and sleeps only for what is left of `window`: called when `run`
  // starts, the coordinator's own start-up (database, sweep, GPU discovery) fills the window.
  void Prime() const;

 private:
  std::chrono::milliseconds window_;
  double busy_cores_;
  std::size_t top_;
  mutable std::vector<ProcSnapshot> history_;  // earlier snapshots, oldest first
  mutable MachineHealth last_;                 // the judgment of the newest snapshot
  mutable double last_done_s_ = -1;            // when last_ was made (monotonic seconds)
};

// Every process in /proc now (processes that vanish while it reads are skipped).
ProcSnapshot ReadProcSnapshot();

}  // namespace ditbench

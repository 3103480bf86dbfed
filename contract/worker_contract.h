// The files exchanged between the coordinator and each rank (docs/architecture.md, "Worker
// contract").
//
//   <run_dir>/trial.json    written by the coordinator: TrialFile
//   <run_dir>/rank<r>.json  written by rank r, atomically (temp file + rename): RankResult
//   <run_dir>/rank<r>.log   the rank's stdout and stderr
//
// Both are versioned JSON ("format" and "version" fields). A reader refuses a file of another
// format or of a version newer than kContractVersion with a one-line message; the `command`
// workload uses the same files, so external programs can be swept too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/measurement_records.h"
#include "experiments/trial.h"

namespace ditbench {

inline constexpr int kContractVersion = 1;

// What a reader accepts, so that a broken or hostile program cannot stop, hang or exhaust the
// coordinator: both files must be regular files (never a FIFO: base/untrusted_input.h) of
// at most these sizes, with JSON nested at most kMaxJsonDepth deep; a rank file's numbers must
// lie in these ranges (ReadRankResult). Anything else is one line naming the file and field.
// A trial file holds a served trial's requests (TrialFile::requests): up to kMaxServeRequests of
// them, two values each, written with indentation.
inline constexpr std::uint64_t kMaxTrialFileBytes = 128ull << 20;
inline constexpr std::uint64_t kMaxRankFileBytes = 128ull << 20;
inline constexpr int kMaxJsonDepth = 32;
// JSON values in a rank file: kMaxRankFileValues (experiments/serve_load.h, where a serving
// load is held to it before launch; a timed sample is five: about 800,000 samples), kept or
// not: with the depth, the size and base/untrusted_input.h's memory cap, what reading a file
// can cost.
inline constexpr std::uint64_t kMaxTrialFileValues = 2ull * kMaxServeRequests + 100'000;
inline constexpr int kMaxWorldSize = 65536;           // rank 0..this-1, world_size 1..this
inline constexpr int kMaxIteration = 10'000'000;      // a sample's iteration: 0..this
inline constexpr double kMaxSampleMs = 86'400'000;    // a sample's ms: below one day
// An "iteration" sample's ms: at least 1 ns. No real iteration of a model is faster; a time
// below it (4.9e-324, a denormal) is a broken or hostile clock, and the trial fails with why.
inline constexpr double kMinIterationMs = 1e-6;
inline constexpr double kMaxMemoryMb = 1e9;           // peak_mem_mb, peak_reserved_mb: 0..this
inline constexpr double kMaxCommBytes = 1e18;         // comm_bytes_per_step: 0..this
// energy: joules >= 0 over a window of 0 (excluded) to kMaxEnergyWindowMs, at most
// kMaxBoardWatts on average (the largest GPU boards draw about 1.4 kW), and a window at least
// as long as the rank's timed iterations it covers (kEnergyWindowSlack for two clocks).
inline constexpr double kMaxEnergyWindowMs = 30.0 * 86'400'000;  // 30 days
inline constexpr double kMaxBoardWatts = 5000;
inline constexpr double kEnergyWindowSlack = 0.99;

// Worker exit codes: how the coordinator tells the failure kinds apart.
inline constexpr int kWorkerOk = 0;
inline constexpr int kWorkerFailed = 1;
inline constexpr int kWorkerInvalidConfig = 2;
inline constexpr int kWorkerOutOfMemory = 3;

inline constexpr int kMaxSteps = 100'000;  // a rank file's `steps`: at most this many

// The trial file's name in a trial's run folder.
inline constexpr const char* kTrialFileName = "trial.json";

struct TrialFile {
  std::string trial_key;
  std::string sweep;
  TrialConfig config;
  std::string device = "cpu";  // "cpu" or "cuda"
  // A served trial (experiments/trial_kind.h): its requests, materialized once by the
  // coordinator (experiments/trial_requests.h, MaterializeRequests), the one list its worker
  // ranks serve and ingest checks them against (ReadTrialRequests). Empty for a timed trial. In
  // the file: "requests": {"shapes": [{"width", "height", "frames", "steps"}], "arrival_s":
  // [seconds], "shape": [index into shapes]}, request i the i-th of both arrays; at most
  // kMaxServeRequests requests and kMaxRequestShapes shapes, each field in the range a sweep's
  // load takes, arrivals in order.
  RequestList requests;
};

// The file world rank 0 writes its final output to, in the run folder (contract/npy.h).
inline constexpr const char* kOutputFileName = "output.npy";

struct RankResult {
  int rank = 0;
  int world_size = 1;
  std::string status = "ok";  // ok | failed | oom | invalid
  std::string error;
  std::string device;         // device name, e.g. "cpu" or "NVIDIA H100 80GB HBM3"
  std::string backend;        // "gloo", "nccl", or "none" for world size 1
  std::string stop_reason;    // why timing stopped: "max", "target_rel_ci", "max_seconds"
  std::vector<Sample> samples;
  std::optional<double> peak_mem_mb;
  std::optional<double> peak_reserved_mb;
  nlohmann::json environment = nlohmann::json::object();  // rank 0: versions, threads, ...
  // GPU clocks over the timed part: {"available", "sm_mhz_min", "sm_mhz_max", "reasons",
  // "throttled"}; null on CPU.
  nlohmann::json clocks;
  // Bytes this rank sent through collectives and transfers per denoising step (per forward for
  // scope forward), averaged over all its iterations; unset when not counted.
  std::optional<double> comm_bytes_per_step;
  // The trial's final output (the denoised latent, or the forward's output) as float32 .npy,
  // a file name in the run folder; written by world rank 0 only, empty otherwise.
  std::string output_file;
  // `profile: trace`: the rank's Chrome trace of its untimed profiler pass, a file name in the
  // run folder (".json", or ".json.gz" compressed; metrics/trace_profile.h); empty when none.
  std::string trace_file;
  // The energy this rank's device used over its timed window (GPU with NVML's counter); unset
  // on CPU, or with why in energy_unavailable when the counter could not be read. In the file:
  // "energy": {"joules", "window_ms"}, {"unavailable": "why"}, or null.
  std::optional<RankEnergy> energy;
  std::string energy_unavailable;
  // Extra numbers by name (optional; the `command` workload's ditbench_result.metric). In the
  // file each is a number, or {"value": number, "unit": text, "better": text} when the program
  // declared how to show it (metric_declarations; checked later, metrics/metric_table.h).
  std::map<std::string, double> metrics;
  std::map<std::string, MetricDeclaration> metric_declarations;
  // The built-in worker: what each denoising step ran (optional; a program's rank file has none).
  std::vector<StepKernels> steps;
  // The built-in worker: the shape of the latent its denoising loop returned, [batch, channels,
  // (latent frames,) latent rows, latent columns] (optional; empty in a program's rank file).
  // Ingest checks it against the trial's key (metrics/trial_metrics.h, LatentShapeProblem):
  // a layout never times a padded clip as the one its key names.
  std::vector<std::int64_t> latent_shape;
  // A serving trial (`serve`): the requests this rank served as its replica's leader, in the
  // order it served them (empty on every other rank, and for a trial that does not serve). In
  // the file: [{"index", "shape", "replica", "arrival_ms", "start_ms", "end_ms",
  // "isolated_ms"}], at most kMaxServeRequests, times in ms from 0 to kMaxServeMs.
  std::vector<RequestRecord> requests;
  // A serving trial: when this rank's load started (the 0 of its requests' times), in seconds
  // of the host's monotonic clock (std::chrono::steady_clock: CLOCK_MONOTONIC, one clock for
  // every process of a host, the coordinator's included). Optional: unset in older files and
  // a program's; then its requests cannot be placed on the coordinator's machine-health
  // windows and are not marked busy (metrics/busy_requests.h). At most kMaxHostMonotonicS.
  std::optional<double> serve_start_monotonic_s;
};

// The latest time a served request may carry, ms from its load's start: about 11.6 days.
inline constexpr double kMaxServeMs = 1e9;
// The latest host monotonic time a rank file may give (seconds since the host booted): about
// 31 years.
inline constexpr double kMaxHostMonotonicS = 1e9;

nlohmann::json ToJson(const TrialFile& trial);
nlohmann::json ToJson(const RankResult& result);
// Throw std::runtime_error with a one-line message naming the path and the problem (and the
// field, for a field that is missing, of the wrong type or out of range).
// A served trial's file without its "requests" (a trial file written before they were
// materialized) is refused, naming the key.
TrialFile ReadTrialFile(const std::filesystem::path& path);
// The requests of a served trial's file (TrialFile::requests): what ingest checks and summarizes
// the ranks' requests against. Throws as ReadTrialFile.
RequestList ReadTrialRequests(const std::filesystem::path& path);
// Besides the limits above: every timed "iteration" sample's ms is above 0, and no iteration
// has two "iteration" samples. Whether the ranks agree is the trial's business
// (metrics/trial_metrics.h, TimedIterationsProblem).
// Fields the contract does not know are read (counted, depth-checked) and dropped unbuilt.
// `cancelled`, when given, is asked as the file is read: true ends the read with
// JsonReadCancelled (base/untrusted_input.h), so an interrupt is never deaf to a large file.
RankResult ReadRankResult(const std::filesystem::path& path,
                          const std::function<bool()>& cancelled = {});

std::filesystem::path RankResultPath(const std::filesystem::path& run_dir, int rank);
std::filesystem::path RankLogPath(const std::filesystem::path& run_dir, int rank);

}  // namespace ditbench

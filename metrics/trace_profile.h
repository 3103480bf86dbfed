// Where a rank's time goes inside each denoising step, read from a profiler trace: the Chrome
// trace JSON that LibTorch's Kineto profiler (and torch.profiler for `command` workloads) writes.
// Torch-free and pure apart from reading the file; the coordinator runs it on every rank's trace
// (`profile: trace`), so the trace is untrusted input: its size, nesting and event count are
// capped and every event it uses is checked, a violation being one line naming the file.
//
// What is read: complete events ("ph": "X"; every other phase is ignored) with `name`, `cat`,
// `ts` and `dur` in microseconds, `pid` and `tid`.
//  * Steps: ranges named "ditbench.step N" (N the denoising step). Their device copies (cat
//    "gpu_user_annotation") are the windows when any exist, else the host ranges. A step that
//    occurs in several profiled iterations is averaged over its occurrences.
//  * The timeline: the device's when the trace holds any CUDA kernel (cat "kernel"): compute is
//    every kernel, memcpy and memset that is not NCCL's; communication is NCCL's kernels.
//    Else the host's (a CPU trial): compute is every "cpu_op"; communication is every range
//    named as a collective ("ditbench.collective <kind>", "gloo:...", "nccl:...", "c10d::...",
//    "record_param_comms"), and an op nested inside a collective on the same thread is the
//    collective's own work.
//  * Attention: ranges named "ditbench.attention" (device copies preferred, as for steps).
// Per step window, with K the union of compute intervals and C that of communication:
//   compute = |K|, comm = |C|, overlap = |K ∩ C|, exposed comm = |C \ K|,
//   idle = window - |K ∪ C|;  so compute + exposed comm + idle = the step's time exactly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

// Milliseconds of one denoising step, averaged over the profiled iterations it occurred in.
struct StepProfile {
  int step = 0;
  int occurrences = 0;
  double step_ms = 0;
  double compute_ms = 0;
  double comm_ms = 0;          // all communication, hidden or not
  double exposed_comm_ms = 0;  // communication with no compute beside it
  double overlap_ms = 0;       // communication hidden behind compute
  double idle_ms = 0;
  double attention_ms = 0;
  bool operator==(const StepProfile&) const = default;
};

// A kernel (device timeline) or op (host timeline) by name: its time inside the step windows.
struct KernelTime {
  std::string name;
  double ms = 0;
  std::int64_t count = 0;
  bool communication = false;
  bool operator==(const KernelTime&) const = default;
};

struct TraceProfile {
  std::string timeline;            // "device" or "host"
  std::vector<StepProfile> steps;  // by step index
  StepProfile total;               // the sum of `steps` (step -1, occurrences the fewest)
  std::vector<KernelTime> top_kernels;  // longest first, at most kTopKernels
  // Shares of the total step time; they sum to 1.
  double compute_share() const { return Share(total.compute_ms); }
  double comm_share() const { return Share(total.exposed_comm_ms); }
  double idle_share() const { return Share(total.idle_ms); }
  bool operator==(const TraceProfile&) const = default;

 private:
  double Share(double ms) const { return total.step_ms > 0 ? ms / total.step_ms : 0; }
};

// The JSON text, decompressed: a rank file's cap (contract/worker_contract.h). The text is held
// in memory; what is built from it is only the complete events (about 100 bytes each).
inline constexpr std::uint64_t kMaxTraceBytes = 128ull << 20;
inline constexpr std::size_t kMaxTraceEvents = 2'000'000;
// JSON values of every kind, the fields an event is not judged by included (about 16 an event).
inline constexpr std::uint64_t kMaxTraceValues = 40'000'000;
inline constexpr int kMaxTraceDepth = 16;
inline constexpr std::size_t kTopKernels = 10;
inline constexpr int kMaxProfiledStep = 1'000'000;

// The profile of a trace's JSON text. `where` (the file) starts every error message.
// Throws std::runtime_error: "<where>: traceEvents[12]: 'dur': expected a non-negative number
// of microseconds, got -3".
// `cancelled`, when given, is asked as the text is read: true ends the read with
// JsonReadCancelled (base/untrusted_input.h).
TraceProfile AnalyzeTrace(std::string_view json_text, const std::string& where,
                          const std::function<bool()>& cancelled = {});

// The text of a trace file: a regular file of at most kMaxTraceBytes, gzip-decompressed when
// its name ends in ".gz" (decompression stops at kMaxTraceBytes). Throws std::runtime_error.
std::string ReadTraceText(const std::filesystem::path& path);

// AnalyzeTrace(ReadTraceText(path), path).
TraceProfile ReadTraceProfile(const std::filesystem::path& path,
                              const std::function<bool()>& cancelled = {});

// The profile as stored (results.profile's per-rank entries) and back. FromJson throws
// std::invalid_argument naming the missing or mistyped key.
nlohmann::json TraceProfileJson(const TraceProfile& profile);
TraceProfile TraceProfileFromJson(const nlohmann::json& json);

}  // namespace ditbench

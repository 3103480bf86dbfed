// What `ditbench-worker --selfcheck FILE` measures on its device, for `ditbench selfcheck` to
// judge (docs/selfcheck.md): raw figures only, every verdict (pass / warn / fail and its
// reason) is the coordinator's (runner/selfcheck.h), so that the rules are torch-free and
// tested with fakes. The file is written atomically by the worker's rank 0 and read as
// untrusted input (a size cap, a depth cap, every number finite and in range).
//
// JSON: {"format": "ditbench-selfcheck", "version": 1, "device": "cpu" | "cuda:0",
//   "device_name", "torch", "threads",
//   "timing": {"gemm_ms", "gemm_reference_ms", "forward_ms", "forward_reference_ms",
//              "gemm_aa_pct", "forward_aa_pct" (optional, 0 when absent)},
//   "cuda_graph": {"max_abs_diff", "eager_ms", "graph_ms"} or absent (CPU),
//   "numerics": {"bf16_rel_error", "bound"},
//   "throughput": {"matmul_n", "matmul_tflops": {"fp32", "bf16"}, "memory_gbps",
//                  "attention_tflops": {backend: value}},
//   "comm": {"world_size", "all_to_all_gbps", "all_gather_gbps", "latency_us"} or absent
//           (one rank),
//   "calibration": {"model", "setup_s", "measure_s", "build_ms", "forward": [{"precision", "image",
//   "threads",
//                   "ranks", "ulysses", "rank_elements", "gflop", "ms"}, ...]} or absent (older
//                   workers),
//   "launch_wall_s": the wall time of a `ditbench-worker --describe` launch after it (process
//                   start, LibTorch's load, exit), added by `ditbench selfcheck` when it stores
//                   the file (absent in the worker's own file),
//   "skipped": {row: reason}, "errors": [text]}
// A figure a device cannot measure is absent, with its row's reason in "skipped".
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

inline constexpr int kSelfcheckFormatVersion = 1;
inline constexpr const char* kSelfcheckFormat = "ditbench-selfcheck";

struct SelfcheckTiming {
  double gemm_ms = 0;            // ditbench's clock (worker/torch_runtime.h) around the GEMM
  double gemm_reference_ms = 0;  // raw CUDA events (GPU) or a textbook steady_clock loop (CPU)
  double forward_ms = 0;         // the same two around a tiny model's forward
  double forward_reference_ms = 0;
  // The machine's own noise: each method times its work in two halves (A B B A); the larger
  // difference between one method's two halves' medians, in percent of their mean. A gap
  // between the two clocks no larger than this cannot be told from the machine's unsteadiness.
  double gemm_aa_pct = 0, forward_aa_pct = 0;
};

struct SelfcheckGraph {
  double max_abs_diff = 0;  // replayed steps against eager steps, tiny model
  double eager_ms = 0, graph_ms = 0;
};

struct SelfcheckNumerics {
  double bf16_rel_error = 0;  // tiny model, bf16 output against fp32, relative L2
  double bound = 0;           // the bound docs/measurement.md derives for it
};

struct SelfcheckThroughput {
  int matmul_n = 0;                                // square GEMM size measured
  std::map<std::string, double> matmul_tflops;     // by precision: "fp32", "bf16"
  std::optional<double> memory_gbps;               // device memory copy bandwidth
  std::map<std::string, double> attention_tflops;  // by SDPA backend: "math", "flash", ...
};

struct SelfcheckComm {
  int world_size = 0;
  double all_to_all_gbps = 0, all_gather_gbps = 0;  // bus bandwidth
  double latency_us = 0;                            // a small all-gather
};

// What `plan` calibrates its estimates with before any trial is measured (plan/calibration.h).
// setup_s: rank 0's time from its entry point to its first measurement (the device and the
// ranks' rendezvous: NCCL's set-up on GPUs); measure_s: from then to the end of its
// measurements. build_ms: the tiny model's build. forward: the tiny model's forward (its CFG batch)
// at a few sizes, precisions and thread counts, each with the work the planner counts for it
// (model_zoo/shapes: ForwardFlops) and the elements of its activation (rows x tokens x hidden), so
// that the planner fits a rate per precision that rises with the work's size, as its GPU prior
// does.
struct SelfcheckForwardRate {
  std::string precision;  // "fp32", "bf16"
  int image = 0;          // pixels per side
  int threads = 0;        // intra-op threads it ran with
  int ranks = 1;          // ranks that computed at once (each with `threads`), slowest timed
  int ulysses = 1;        // > 1: one forward split over the ranks by Ulysses sequence parallelism
  double rank_elements = 0;
  double gflop = 0;  // as the planner counts it
  double ms = 0;     // median of the timed forwards
};
inline constexpr std::size_t kMaxSelfcheckForwardRates = 64;

struct SelfcheckCalibration {
  std::string model;  // what the forwards ran (the tiny model, with its CFG batch of two rows)
  double setup_s = 0;
  double measure_s = 0;
  double build_ms = 0;
  std::vector<SelfcheckForwardRate> forward;
};

struct SelfcheckMeasurements {
  std::string device, device_name, torch;
  int threads = 0;
  std::optional<SelfcheckTiming> timing;
  std::optional<SelfcheckGraph> cuda_graph;
  std::optional<SelfcheckNumerics> numerics;
  std::optional<SelfcheckThroughput> throughput;
  std::optional<SelfcheckComm> comm;
  std::optional<SelfcheckCalibration> calibration;
  std::optional<double> launch_wall_s;         // set by the coordinator, never by the worker: a
                                               // `ditbench-worker --describe` launch's wall time
  std::map<std::string, std::string> skipped;  // row name -> why it was not measured
  std::vector<std::string> errors;
};

nlohmann::json SelfcheckJson(const SelfcheckMeasurements& m);

// Plausible physical bounds of what a selfcheck measures: a time from a microsecond to a day
// (a GEMM, a forward: faster is no measurement, slower is no selfcheck), at most 10 PFLOP/s
// per device (above any accelerator built; a forward's rate from its counted GFLOP and its
// time), at most 100 TB/s of memory or link bandwidth.
inline constexpr double kMinSelfcheckMs = 1e-3;
inline constexpr double kMaxSelfcheckMs = 86400e3;
inline constexpr double kMaxSelfcheckTflops = 1e4;
inline constexpr double kMaxSelfcheckGbps = 1e5;

// The first figure of `m` outside its bound, as its field, value and the bound:
// "calibration.forward[0].ms 1e-300 ms (expected 0.001 to 86400000 ms)"; nullopt when every
// figure is plausible.
std::optional<std::string> ImplausibleSelfcheckFigure(const SelfcheckMeasurements& m);

// Reads `path` as untrusted (regular file, at most 1 MiB, depth 8, every figure within its
// plausible bound): std::runtime_error with one line naming the file and the field on anything
// else.
SelfcheckMeasurements ReadSelfcheckMeasurements(const std::filesystem::path& path);

// The same from parsed JSON; `where` names its source in errors.
SelfcheckMeasurements SelfcheckFromJson(const nlohmann::json& json, const std::string& where);

}  // namespace ditbench

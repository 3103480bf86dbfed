// The `engine` workload's server and requests (docs/engines.md): a sweep's `engine:` mapping,
// held by every trial of such a sweep (TrialConfig::engine, part of its key) and carried to the
// engine trial's client in trial.json. Torch-free and pure: the sweep parser fills it, the
// engine trial (runner/engine_trial.h) reads it; experiments/engine_request.h expands its
// templates for one trial.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ditbench {

inline constexpr int kDefaultEnginePollMs = 20;
inline constexpr int kMaxEnginePollMs = 10'000;
inline constexpr const char* kDefaultEngineVersionPath = "/version";
// A GPU holding more than this before an engine's server starts is not clean (the "dirty
// card" rule of video benchmarks: a CUDA context alone is a few hundred MiB).
inline constexpr double kDefaultDirtyGpuMb = 4096;
inline constexpr double kMaxDirtyGpuMb = 1e7;

struct EngineSpec {
  // The server's program and arguments, each a template as `command`'s (experiments/
  // command_line.h) with {port}, {world_size}, {gpus} and {files} besides the trial's
  // fields; started once per trial. Empty when the trial attaches to `url`.
  std::vector<std::string> start;
  // Files written before the server starts into RUN_DIR/engine-files, the folder {files} names:
  // name -> a template of the trial's fields (an engine that takes its parallel degrees from a
  // config file: `--config {files}/engine.yml`). Names are plain file names.
  std::map<std::string, std::string> files;
  // A server the user runs ("http://127.0.0.1:8000"): attached to, never started or stopped.
  std::string url;
  // Paths polled until every one answers 2xx (engine/http_client.h, WaitReady).
  std::vector<std::string> ready{"/health"};
  // The OpenAI-style API driven: "images" (POST /v1/images/generations, JSON, the image in the
  // answer) or "videos" (POST /v1/videos as a form, the job polled, its content fetched:
  // engine/video_job.h).
  std::string api = "images";
  // Videos: how often a job's state is asked for, in ms; nullopt: kDefaultEnginePollMs. Part of
  // the key: the interval bounds how late a completion is seen.
  std::optional<int> poll_interval_ms;
  // The path asked once the server is ready for its version (engine_version in the trial's
  // environment, shown by compare where two trials differ); "" asks nothing.
  std::string version = kDefaultEngineVersionPath;
  // The request body: engine field -> a template string ("{steps}", "{size}", "a red fox") or a
  // scalar taken verbatim. A template that is one placeholder keeps the field's type (a number
  // stays a number); {size} is "WxH" of the trial's resolution.
  nlohmann::json request = nlohmann::json::object();
  // The parallel degrees (kDegreeTable's names) the start command passes on to the engine: a
  // trial with any other degree above 1 is refused before launch ([] takes none). nullopt: not
  // declared, every degree is passed on as the command's placeholders say.
  std::optional<std::vector<std::string>> degrees;
  double start_timeout_s = 300;  // start to ready, at most
  // One request, sent to last byte received, at most; nullopt: the trial's timeout. Recorded,
  // never a hidden constant: a client timeout too short for a loaded server reads as a collapse.
  std::optional<double> request_timeout_s;
  int warmup_requests = 1;  // untimed requests before the timed ones
  // Under a serving load: the share of its timed requests that may be answered with an error
  // (an HTTP status not 2xx, a malformed answer; each flagged and counted, error_rate) before
  // the trial fails naming the first error. 0: the first error fails it, as every error does
  // in latency mode (where each request is a sample).
  double max_error_rate = 0;
  // On GPUs: the most device memory (MiB) a GPU of the trial may hold before ditbench starts
  // the server. Memory is read whole-GPU (runner/engine_gpu_memory.h), so more means another
  // program's, which would be counted as the server's: the trial fails naming the GPU.
  double dirty_gpu_mb = kDefaultDirtyGpuMb;
  bool empty() const { return start.empty() && url.empty(); }
  bool operator==(const EngineSpec&) const = default;
};

inline constexpr int kMaxEngineWarmupRequests = 1000;
inline constexpr std::size_t kMaxEngineFiles = 16;
inline constexpr std::size_t kMaxEngineFileBytes = 64 * 1024;
inline constexpr double kMaxEngineStartTimeoutS = 86'400;

// The canonical form (trial.json, the key, config_json): every member, keys sorted.
nlohmann::json EngineSpecJson(const EngineSpec& spec);
// Reads the canonical form or a sweep's mapping converted to JSON (`start_timeout` in seconds
// there). False with what was expected in `*problem` on a value out of its range, an unknown
// key, or neither or both of start and url.
bool EngineSpecFromJson(const nlohmann::json& value, EngineSpec* spec, std::string* problem);

}  // namespace ditbench

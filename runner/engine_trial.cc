#include "runner/engine_trial.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/atomic_file.h"
#include "base/terminal_text.h"
#include "base/untrusted_input.h"
#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "engine/http_client.h"
#include "engine/image_response.h"
#include "experiments/engine_request.h"
#include "launch/local_launcher.h"
#include "metrics/image_quality.h"
#include "metrics/measurement.h"
#include "runner/engine_gpu_memory.h"
#include "runner/engine_server.h"
#include "runner/engine_session.h"
#include "runner/ingest.h"
#include "runner/output_error.h"

namespace ditbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kServerLog = "server.log";
constexpr const char* kRequestFile = "request.json";

// The host's monotonic clock, read at each mark: a request's latency is what its client waited.
class SteadyIterationClock final : public IterationClock {
 public:
  void Mark(int slot) override { marks_.at(static_cast<std::size_t>(slot)) = Clock::now(); }
  void Synchronize() override {}
  double ElapsedMs(int from, int to) override {
    return std::chrono::duration<double, std::milli>(marks_.at(static_cast<std::size_t>(to)) -
                                                     marks_.at(static_cast<std::size_t>(from)))
        .count();
  }

 private:
  std::array<Clock::time_point, kMaxMarks> marks_{};
};

std::string TrimmedUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

HttpLimits TrialLimits(const TrialConfig& config) {
  HttpLimits limits;
  const double seconds =
      std::clamp(config.engine.request_timeout_s.value_or(config.timeout_s), 0.001, 86'400.0);
  limits.total_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  return limits;
}

// Waits for every ready path (or the server's end); ready_s is stored in `result`. Throws
// naming start_timeout and the last failure.
void WaitForServer(EngineSession& s, EngineServer* server, RankResult& result) {
  const EngineSpec& engine = s.trial.config.engine;
  std::vector<std::string> urls;
  for (const std::string& path : engine.ready) urls.push_back(s.base_url + path);
  ReadyOptions options;
  options.timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(engine.start_timeout_s * 1000));
  if (server) options.stop = [server] { return server->ExitReason().value_or(""); };
  const ReadyResult ready = WaitReady(s.client, urls, options);
  if (!ready.ready) {
    const bool exited = server && server->ExitReason();
    throw std::runtime_error(fmt::format(
        "trial {}: the server at {} {} ({} polls): {}", s.trial.trial_key, s.base_url,
        exited ? "ended before it was ready"
               : fmt::format("was not ready within start_timeout {:g} s", engine.start_timeout_s),
        ready.polls, ready.last_failure));
  }
  result.metrics["ready_s"] = ready.seconds;
}

// The version is a label, not a measurement: asked once, briefly, and kept short.
constexpr std::chrono::milliseconds kVersionTimeout{5'000};
constexpr std::size_t kVersionBytes = 200;

// The engine's version as its server tells it (engine.version, a path): a JSON answer's string
// `version`, else the answer's text; "not answered (...)" when no 2xx came. Stored as
// engine_version in the rank's environment, so that the campaign's environment carries it and
// `compare` shows it where two campaigns differ.
void AskVersion(EngineSession& s, RankResult& result) {
  const std::string& path = s.trial.config.engine.version;
  if (path.empty()) return;
  const HttpResponse answer = s.client.Get(s.base_url + path, kVersionTimeout);
  std::string version;
  if (!answer.ok()) {
    version = answer.status > 0 ? fmt::format("not answered (HTTP {} at {})", answer.status, path)
                                : fmt::format("not answered (no answer at {})", path);
  } else {
    try {
      const nlohmann::json json = ParseBoundedJson(answer.body, 4, path);
      if (json.is_object() && json.contains("version") && json.at("version").is_string())
        version = json.at("version").get<std::string>();
    } catch (const std::exception&) {
      // Not JSON: the text itself.
    }
    if (version.empty()) version = answer.body.substr(0, kVersionBytes);
  }
  result.environment["engine_version"] = OneLine(version.substr(0, kVersionBytes));
}

// One request of the latency mode; the image kept.
void SendRequest(EngineSession& s) {
  const int number = ++s.requests_sent;
  const std::string which =
      number <= s.warmup_requests
          ? fmt::format("warm-up request {}", number)
          : fmt::format("request {} (timed {})", number, number - s.warmup_requests);
  s.last_image = Generate(s, s.client, s.body, which);
}

// Warm-up and timed requests (the trial's repeats); samples and first_request_ms in `result`.
void TimeRequests(EngineSession& s, RankResult& result) {
  const TrialConfig& config = s.trial.config;
  s.warmup_requests = config.engine.warmup_requests;
  MeasureOptions options;
  options.warmup = s.warmup_requests;
  options.repeats = config.repeats;
  SingleRankGroup group;
  SteadyIterationClock clock;
  const Measurement m = Measure(options, group, clock, [&s](Stages&) { SendRequest(s); });
  result.samples = m.samples;
  result.stop_reason = m.stop_reason;
  const auto first = std::find_if(m.samples.begin(), m.samples.end(),
                                  [](const Sample& x) { return x.stage == kIterationStage; });
  if (first != m.samples.end()) result.metrics["first_request_ms"] = first->ms;
  SaveOutput(s, result);
}

void AppendToLog(const std::filesystem::path& log, const std::string& line) {
  std::ofstream(log, std::ios::app) << line;
}

// How many ports a trial tries: a server that ends before it is ready while another process
// listens on its port lost a race for the port, and is started again on another.
constexpr int kPortAttempts = 3;

// Starts the sweep's server on a free port and waits until it is ready, trying another port
// when the server ended because another process took its port (said in server.log and in
// the rank's environment). Returns the server, ready; throws as WaitForServer.
std::unique_ptr<EngineServer> StartServer(EngineSession& s, RankResult& result) {
  const TrialConfig& config = s.trial.config;
  std::vector<int> taken;
  for (int attempt = 1;; ++attempt) {
    EngineStartValues values;
    const int port = FindFreePort();
    values.port = std::to_string(port);
    values.files = (s.run_dir / kEngineFilesFolder).string();
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) values.gpus = visible;
    const std::vector<std::string> argv = ExpandEngineStart(config, values);
    result.environment["engine_command"] = argv;
    s.base_url = fmt::format("http://127.0.0.1:{}", port);
    // A second start appends to the log: the first one's lines stay.
    auto server = std::make_unique<EngineServer>(argv, std::filesystem::current_path(),
                                                 s.run_dir / kServerLog);
    // Its process group's id too: what a check that no server outlived the trial looks for,
    // and a file that outlives the trial only if this client is killed outright.
    result.environment["engine_server_pid"] = server->pid();
    RecordServerProcess(s.run_dir, server->pid());
    try {
      WaitForServer(s, server.get(), result);
      return server;
    } catch (const std::exception&) {
      const bool lost_port = server->ExitReason() && !PortIsFree(port);
      server->Stop();
      if (!lost_port || attempt == kPortAttempts) throw;
      taken.push_back(port);
      result.environment["engine_ports_taken"] = taken;
      AppendToLog(s.run_dir / kServerLog,
                  fmt::format("ditbench: the server ended before it was ready and another "
                              "process listens on port {}; starting it again on another port\n",
                              port));
    }
  }
}

// The restart band (quality.restarts, experiments/quality_gate.h): the server stopped and
// started again that many times, the request whose image the trial kept sent once after each
// start, and each image compared with the kept one. The least PSNR is `restart_psnr` (left out
// when every restart gave the same image: then no PSNR is out of the band's reach), the least
// SSIM `restart_ssim`; each restart's figures in the rank's environment (`engine_restarts`).
// An attached server (url) is not ours to restart: said there, nothing measured.
void MeasureRestartBand(EngineSession& s, std::unique_ptr<EngineServer>& server,
                        RankResult& result) {
  if (!server) {
    result.environment["engine_restarts"] =
        "not measured: the server is attached (url), not "
        "started by ditbench";
    return;
  }
  if (s.last_image.format != ImageFormat::kPng) {
    result.environment["engine_restarts"] = "not measured: the server's output is not a PNG image";
    return;
  }
  const NpyArray kept = ImagePixels(s, s.last_image, "the last image");
  const double ready_s = result.metrics.at("ready_s");  // the trial's own cold start
  double least_psnr = std::numeric_limits<double>::infinity(), least_ssim = 1;
  nlohmann::json restarts = nlohmann::json::array();
  for (int i = 1; i <= *s.trial.config.quality.restarts; ++i) {
    server->Stop();
    server = StartServer(s, result);
    const std::string which = fmt::format("the request after restart {}", i);
    const NpyArray again = ImagePixels(s, Generate(s, s.client, s.image_body, which), which);
    if (again.shape != kept.shape)
      throw std::runtime_error(
          fmt::format("trial {}: {} answered an image of another size", s.trial.trial_key, which));
    const double psnr = Psnr(again, kept, kDecodedImageRange);
    const double ssim = Ssim(again, kept, kDecodedImageRange);
    least_psnr = std::min(least_psnr, psnr);
    least_ssim = std::min(least_ssim, ssim);
    restarts.push_back(
        {{"psnr", std::isinf(psnr) ? nlohmann::json("identical") : nlohmann::json(psnr)},
         {"ssim", ssim}});
  }
  result.metrics["ready_s"] = ready_s;
  result.metrics["restart_ssim"] = least_ssim;
  if (std::isfinite(least_psnr)) result.metrics["restart_psnr"] = least_psnr;
  result.environment["engine_restarts"] = restarts;
}

// The whole trial, the server stopped before it returns or throws.
void RunTrial(const TrialFile& trial, const std::filesystem::path& run_dir, RankResult& result) {
  const TrialConfig& config = trial.config;
  EngineSession s(trial, run_dir, TrialLimits(config));
  s.body = s.image_body = EngineRequestBody(config).dump();
  WriteFileAtomically(run_dir / kRequestFile, s.body);
  // engine.files, before the server that reads them starts.
  const std::map<std::string, std::string> files = ExpandEngineFiles(config);
  if (!files.empty()) std::filesystem::create_directories(run_dir / kEngineFilesFolder);
  for (const auto& [name, text] : files)
    WriteFileAtomically(run_dir / kEngineFilesFolder / name, text);
  std::filesystem::remove(run_dir / kServerLog);  // each start appends to it
  std::unique_ptr<EngineServer> server;
  const std::unique_ptr<EngineGpuMemory> memory = WatchEngineGpuMemory(trial);
  try {
    if (config.engine.url.empty()) {
      memory->CheckClean();  // before anything of ours holds memory there
      server = StartServer(s, result);
    } else {
      s.base_url = TrimmedUrl(config.engine.url);
      result.environment["engine_url"] = s.base_url;
      WaitForServer(s, nullptr, result);
    }
    AskVersion(s, result);
    memory->StartSampling();
    if (config.serve)
      ServeEngineLoad(s, server.get(), trial.requests, result);
    else
      TimeRequests(s, result);
    memory->StopSampling();
    memory->Record(result);
    if (config.quality.restarts) MeasureRestartBand(s, server, result);
  } catch (const std::exception& e) {
    if (!config.engine.url.empty()) throw;
    if (server) server->Stop();
    ForgetServerProcess(run_dir);
    throw std::runtime_error(
        fmt::format("{}; server log tail: {}", e.what(), LogTail(run_dir / kServerLog)));
  }
  if (server) server->Stop();
  ForgetServerProcess(run_dir);
}

}  // namespace

nlohmann::json EngineCampaignEnvironment(const nlohmann::json& rank_environment) {
  nlohmann::json out = nlohmann::json::object();
  if (rank_environment.is_object() && rank_environment.contains("engine_version"))
    out["engine_version"] = rank_environment.at("engine_version");
  return out;
}

int RunEngineTrial(const std::filesystem::path& trial_file, std::ostream& err) {
  const std::filesystem::path run_dir = std::filesystem::absolute(trial_file).parent_path();
  RankResult result;
  result.backend = "none";
  int code = kWorkerOk;
  try {
    const TrialFile trial = ReadTrialFile(trial_file);
    result.device = trial.device;
    try {
      RunTrial(trial, run_dir, result);
    } catch (const std::exception& e) {
      result.status = "failed";
      result.error = e.what();
      code = kWorkerFailed;
    }
  } catch (const std::exception& e) {
    result.status = "invalid";
    result.error = e.what();
    code = kWorkerInvalidConfig;
  }
  if (code != kWorkerOk) err << "ditbench engine-trial: " << result.error << "\n";
  // Every string here went through OneLine or LogTail (valid UTF-8); replacing is the guard
  // that a server's bytes can never keep the rank file from being written.
  WriteFileAtomically(RankResultPath(run_dir, 0),
                      ToJson(result).dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
  return code;
}

}  // namespace ditbench

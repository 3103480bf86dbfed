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
#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "engine/http_client.h"
#include "engine/image_response.h"
#include "experiments/engine_request.h"
#include "launch/local_launcher.h"
#include "metrics/image_quality.h"
#include "metrics/measurement.h"
#include "metrics/png_image.h"
#include "metrics/serve_loop.h"
#include "metrics/serve_slots.h"
#include "runner/engine_server.h"
#include "runner/ingest.h"
#include "runner/output_error.h"
#include "stats/stats.h"

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

// What one trial's requests share.
struct EngineSession {
  EngineSession(const TrialFile& t, std::filesystem::path dir, HttpLimits limits)
      : trial(t), run_dir(std::move(dir)), client(std::move(limits)) {}
  const TrialFile& trial;
  std::filesystem::path run_dir;
  std::string base_url;  // "http://127.0.0.1:PORT", no trailing '/'
  HttpClient client;
  std::string body;        // the request, as sent
  std::string image_body;  // the request whose image last_image is (a load's first shape's)
  int requests_sent = 0;
  int warmup_requests = 0;
  GeneratedImage last_image;
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

// One request with `body` through `client`; the image it answered. Throws a line naming the
// trial and the request (`which`).
// One request's failure: its kind as counted ("HTTP 500", "no answer", "malformed answer")
// and the line naming the trial and the request.
struct RequestFailure {
  std::string kind;
  std::string line;
};

// One request with `body` through `client`: the image it answered in `*image`, or why not.
std::optional<RequestFailure> TryGenerate(const EngineSession& s, HttpClient& client,
                                          const std::string& body, const std::string& which,
                                          GeneratedImage* image) {
  const std::string url = s.base_url + "/v1/images/generations";
  const HttpResponse response = client.PostJson(url, body);
  if (!response.ok())
    return RequestFailure{
        response.status > 0 ? fmt::format("HTTP {}", response.status) : "no answer",
        fmt::format("trial {}: {}: {}", s.trial.trial_key, which,
                    DescribeFailure(response, "POST", url))};
  ImageResponse images = ParseImageResponse(response.body, url);
  if (!images.error.empty())
    return RequestFailure{"malformed answer",
                          fmt::format("trial {}: {}: {}", s.trial.trial_key, which, images.error)};
  *image = std::move(images.images.back());
  return std::nullopt;
}

// TryGenerate, a failure thrown.
GeneratedImage Generate(const EngineSession& s, HttpClient& client, const std::string& body,
                        const std::string& which) {
  GeneratedImage image;
  if (auto failure = TryGenerate(s, client, body, which, &image))
    throw std::runtime_error(failure->line);
  return image;
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

// A PNG's pixels as a decoded image is stored and compared: float32 [1, 3, H, W] on [-1, 1], as
// a `dit` trial's. Throws naming the trial when the PNG does not decode.
NpyArray ImagePixels(const EngineSession& s, const GeneratedImage& png, const std::string& which) {
  RgbImage image;
  try {
    image = DecodePng(png.bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("trial {}: {} does not decode: {}", s.trial.trial_key, which, e.what()));
  }
  const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
  NpyArray array{{1, 3, image.height, image.width}, std::vector<float>(3 * plane)};
  for (std::size_t i = 0; i < plane; ++i)
    for (std::size_t c = 0; c < 3; ++c)
      array.data[c * plane + i] = static_cast<float>(image.pixels[3 * i + c]) / 127.5f - 1.0f;
  return array;
}

// The last image as the server sent it, and a PNG also as output.npy, so that
// runner/output_error.h compares it with its reference trial's (PSNR, SSIM, the quality gates)
// as for every trial.
void SaveImage(const EngineSession& s) {
  const bool png = s.last_image.format == ImageFormat::kPng;
  WriteFileAtomically(s.run_dir / (png ? "output.png" : "output.bin"), s.last_image.bytes);
  if (!png) return;
  const NpyArray pixels = ImagePixels(s, s.last_image, "the last image");
  WriteNpy(s.run_dir / kOutputFileName, pixels.shape, pixels.data.data());
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
  SaveImage(s);
}

// The most requests an open loop's client has in flight at once (its slots): a request that
// arrives while every slot waits for an answer is sent when one is free, its wait recorded as
// its queue time.
constexpr int kEngineClientSlots = 64;

// A load's failed requests: how many of each kind, and the first one's line.
struct LoadErrors {
  std::map<std::string, int> by_kind;
  std::string first;
  void Add(const RequestFailure& failure) {
    ++by_kind[failure.kind];
    if (first.empty()) first = failure.line;
  }
};

// Throws when the load's timed requests failed beyond engine.max_error_rate (any failure at 0),
// or when the load was cut short (the server gone), naming how many and the first error.
void CheckErrorRate(const EngineSession& s, const ServedRequests& served, const ServeLoad& load,
                    const LoadErrors& errors) {
  if (errors.first.empty()) return;
  int timed = 0, failed = 0;
  for (const RequestRecord& r : served.records)
    if (r.index >= load.warmup_requests) {
      ++timed;
      failed += r.failed ? 1 : 0;
    }
  const double allowed = s.trial.config.engine.max_error_rate;
  const std::size_t offered = s.trial.requests.requests.size();
  const bool cut_short = served.records.size() < offered;
  const double rate = timed > 0 ? static_cast<double>(failed) / timed : 1.0;
  if (!cut_short && allowed > 0 && rate <= allowed) return;
  throw std::runtime_error(fmt::format(
      "{} of {} timed requests failed ({:.1f}%{}){}; the first: {}", failed, timed, 100 * rate,
      allowed > 0 ? fmt::format(", max_error_rate {:g}", allowed) : std::string(),
      cut_short ? fmt::format("; the load stopped after {} of its {} requests",
                              served.records.size(), offered)
                : std::string(),
      errors.first));
}

// Milliseconds `send` took on the host's monotonic clock.
template <typename Send>
double TimedMs(Send&& send) {
  const Clock::time_point start = Clock::now();
  send();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A serving load (`serve`): warmup_requests untimed requests of every shape (the first one's
// latency is first_request_ms), each shape timed alone on the idle server (max(1, repeats.min)
// requests, the median: its isolated latency, against which the SLO is judged), then the load's
// requests through client slots (metrics/serve_slots.h), recorded as a `dit` trial's replica
// leader records its own (metrics/serve_loop.h, RecordServed).
void ServeLoad(EngineSession& s, EngineServer* server, const RequestList& load,
               RankResult& result) {
  const TrialConfig& config = s.trial.config;
  std::vector<std::string> bodies;
  for (const RequestShape& shape : load.shapes)
    bodies.push_back(EngineRequestBody(ShapeTrial(config, shape)).dump());
  s.image_body = bodies.at(0);
  int sent = 0;
  for (std::size_t shape = 0; shape < bodies.size(); ++shape)
    for (int i = 0; i < config.engine.warmup_requests; ++i) {
      const double ms = TimedMs([&] {
        Generate(s, s.client, bodies[shape],
                 fmt::format("warm-up request {} (shape {})", ++sent, shape));
      });
      if (!result.metrics.contains("first_request_ms")) result.metrics["first_request_ms"] = ms;
    }
  ServeRankOptions options;
  options.load = TrialServeLoad(config);
  options.requests = load.requests;
  options.shapes = static_cast<int>(bodies.size());
  options.isolated_runs = std::max(1, config.repeats.min);
  for (std::size_t shape = 0; shape < bodies.size(); ++shape) {
    std::vector<double> alone;
    for (int i = 0; i < options.isolated_runs; ++i)
      alone.push_back(TimedMs([&] {
        Generate(s, s.client, bodies[shape],
                 fmt::format("isolated request {} of shape {}", i + 1, shape));
      }));
    std::sort(alone.begin(), alone.end());
    options.isolated_ms.push_back(Quantile(alone, 0.5));
  }
  const int slots = options.load.concurrency > 0
                        ? options.load.concurrency
                        : std::clamp(static_cast<int>(load.requests.size()), 1, kEngineClientSlots);
  std::vector<HttpClient> clients;
  for (int i = 0; i < slots; ++i) clients.emplace_back(s.client.limits());
  std::mutex mutex;  // the image kept, the errors, the server's state
  LoadErrors errors;
  SteadyHostClock host;
  const ServedRequests served = ServeFromSlots(options, slots, host, [&](int slot, int shape) {
    GeneratedImage image;
    const auto failure = TryGenerate(
        s, clients[static_cast<std::size_t>(slot)], bodies[static_cast<std::size_t>(shape)],
        fmt::format("a load request of shape {} (client slot {})", shape, slot), &image);
    const std::lock_guard lock(mutex);
    if (failure) {
      errors.Add(*failure);
      // A server that is gone answers nothing more; errors are tolerated only up to the rate.
      const bool gone = server && server->ExitReason();
      return gone || config.engine.max_error_rate == 0 ? SlotOutcome::kStopLoad
                                                       : SlotOutcome::kFailed;
    }
    // The output compared with the reference trial's: the first shape's, as a `dit` trial's.
    if (shape == 0) s.last_image = std::move(image);
    return SlotOutcome::kServed;
  });
  RecordServed(served, options.load.warmup_requests, /*leader=*/true, result);
  result.environment["engine_client_slots"] = slots;
  if (!errors.by_kind.empty()) result.environment["engine_errors"] = errors.by_kind;
  CheckErrorRate(s, served, options.load, errors);
  SaveImage(s);
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
    result.environment["engine_restarts"] = "not measured: the server's image is not a PNG";
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
  std::filesystem::remove(run_dir / kServerLog);  // each start appends to it
  std::unique_ptr<EngineServer> server;
  try {
    if (config.engine.url.empty()) {
      server = StartServer(s, result);
    } else {
      s.base_url = TrimmedUrl(config.engine.url);
      result.environment["engine_url"] = s.base_url;
      WaitForServer(s, nullptr, result);
    }
    if (config.serve)
      ServeLoad(s, server.get(), trial.requests, result);
    else
      TimeRequests(s, result);
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

// What one engine trial's parts share (runner/engine_trial.h): the server's address, the
// request sent, the output kept, and one request through the sweep's API (engine/http_client.h
// for images, engine/video_job.h for videos). The latency mode and the restart band are in
// engine_trial.cc, the serving load in engine_load.cc.
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "engine/http_client.h"
#include "engine/image_response.h"

namespace ditbench {

class EngineServer;  // runner/engine_server.h

// What one trial's requests share.
struct EngineSession {
  EngineSession(const TrialFile& t, std::filesystem::path dir, HttpLimits limits)
      : trial(t), run_dir(std::move(dir)), client(std::move(limits)) {}
  const TrialFile& trial;
  std::filesystem::path run_dir;
  std::string base_url;  // "http://127.0.0.1:PORT", no trailing '/'
  HttpClient client;
  std::string body;        // the request, as sent
  std::string image_body;  // the request whose output last_image is (a load's first shape's)
  int requests_sent = 0;
  int warmup_requests = 0;
  GeneratedImage last_image;  // the output kept: an image, or a video's bytes

  // Video jobs (api: videos), over every request: how many, their polls, and the least and
  // most time from the completion seen to the content's last byte. Guarded by video_mutex
  // (a load's client slots send at once).
  std::mutex video_mutex;
  int video_jobs = 0;
  long long video_polls = 0;
};

// One request's failure: its kind as counted ("HTTP 500", "no answer", "malformed answer",
// "job failed", "deadline") and the line naming the trial and the request.
struct RequestFailure {
  std::string kind;
  std::string line;
};

// One request with `body` (the JSON the sweep's request mapping made; for videos each member
// is a form field) through `client`: its output in `*output`, or why not. `which` names the
// request in the line ("request 3 (timed 2)").
std::optional<RequestFailure> TryGenerate(EngineSession& s, HttpClient& client,
                                          const std::string& body, const std::string& which,
                                          GeneratedImage* output);

// TryGenerate, a failure thrown as std::runtime_error.
GeneratedImage Generate(EngineSession& s, HttpClient& client, const std::string& body,
                        const std::string& which);

// A PNG's pixels as a decoded image is stored and compared: float32 [1, 3, H, W] on [-1, 1], as
// a `dit` trial's. Throws naming the trial when the PNG does not decode.
NpyArray ImagePixels(const EngineSession& s, const GeneratedImage& png, const std::string& which);

// The output kept, as the server sent it (output.png, .jpg, .mp4 or .bin by its first bytes),
// its size and sha256 in the rank's environment (engine_output), a PNG also as output.npy so
// that runner/output_error.h compares it with its reference trial's (PSNR, SSIM, the quality
// gates) as for every trial. Video jobs' polling is recorded there too (engine_video).
void SaveOutput(EngineSession& s, RankResult& result);

// A serving load (`serve`): warmup_requests untimed requests of every shape (the first one's
// latency is first_request_ms), each shape timed alone on the idle server (max(1, repeats.min)
// requests, the median: its isolated latency, against which the SLO is judged), then the load's
// requests through client slots (metrics/serve_slots.h), recorded as a `dit` trial's replica
// leader records its own (metrics/serve_loop.h, RecordServed).
// `server`: the one ditbench started (null when attached), asked whether it is gone when a
// request fails. Throws past engine.max_error_rate, or when the load was cut short.
void ServeEngineLoad(EngineSession& s, EngineServer* server, const RequestList& load,
                     RankResult& result);

}  // namespace ditbench

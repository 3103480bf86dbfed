#include "runner/engine_session.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/atomic_file.h"
#include "engine/video_job.h"
#include "experiments/engine_spec.h"
#include "experiments/trial.h"
#include "metrics/png_image.h"

namespace ditbench {
namespace {

RequestFailure Failure(const EngineSession& s, std::string kind, const std::string& which,
                       const std::string& line) {
  return RequestFailure{std::move(kind),
                        fmt::format("trial {}: {}: {}", s.trial.trial_key, which, line)};
}

std::optional<RequestFailure> TryImage(const EngineSession& s, HttpClient& client,
                                       const std::string& body, const std::string& which,
                                       GeneratedImage* image) {
  const std::string url = s.base_url + "/v1/images/generations";
  const HttpResponse response = client.PostJson(url, body);
  if (!response.ok())
    return Failure(s, response.status > 0 ? fmt::format("HTTP {}", response.status) : "no answer",
                   which, DescribeFailure(response, "POST", url));
  ImageResponse images = ParseImageResponse(response.body, url);
  if (!images.error.empty()) return Failure(s, "malformed answer", which, images.error);
  *image = std::move(images.images.back());
  return std::nullopt;
}

// The request's members as form fields: a string as it is, any other value as its JSON text
// (42, 4.5, true).
std::vector<MultipartField> FormFields(const std::string& body) {
  std::vector<MultipartField> form;
  const nlohmann::json fields = nlohmann::json::parse(body);  // outlives the loop's items()
  for (const auto& [name, value] : fields.items())
    form.push_back({name, value.is_string() ? value.get<std::string>() : value.dump(), "", ""});
  return form;
}

std::optional<RequestFailure> TryVideo(EngineSession& s, HttpClient& client,
                                       const std::string& body, const std::string& which,
                                       GeneratedImage* video) {
  VideoJobOptions options;
  options.poll_interval = std::chrono::milliseconds(static_cast<std::int64_t>(
      s.trial.config.engine.poll_interval_ms.value_or(kDefaultEnginePollMs)));
  options.deadline = client.limits().total_timeout;
  VideoJobResult job = RunVideoJob(client, s.base_url, FormFields(body), options);
  {
    const std::lock_guard lock(s.video_mutex);
    ++s.video_jobs;
    s.video_polls += job.polls;
  }
  if (!job.error.empty()) return Failure(s, job.failure_kind, which, job.error);
  video->format = SniffImageFormat(job.content);
  video->bytes = std::move(job.content);
  return std::nullopt;
}

const char* OutputFileName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "output.png";
    case ImageFormat::kJpeg:
      return "output.jpg";
    case ImageFormat::kMp4:
      return "output.mp4";
    case ImageFormat::kOther:
      break;
  }
  return "output.bin";
}

}  // namespace

std::optional<RequestFailure> TryGenerate(EngineSession& s, HttpClient& client,
                                          const std::string& body, const std::string& which,
                                          GeneratedImage* output) {
  if (s.trial.config.engine.api == "videos") return TryVideo(s, client, body, which, output);
  return TryImage(s, client, body, which, output);
}

GeneratedImage Generate(EngineSession& s, HttpClient& client, const std::string& body,
                        const std::string& which) {
  GeneratedImage output;
  if (auto failure = TryGenerate(s, client, body, which, &output))
    throw std::runtime_error(failure->line);
  return output;
}

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

void SaveOutput(EngineSession& s, RankResult& result) {
  const GeneratedImage& output = s.last_image;
  const char* name = OutputFileName(output.format);
  WriteFileAtomically(s.run_dir / name, output.bytes);
  result.environment["engine_output"] = {{"file", name},
                                         {"format", ImageFormatName(output.format)},
                                         {"bytes", output.bytes.size()},
                                         {"sha256", Sha256Hex(output.bytes)}};
  if (s.video_jobs > 0) {
    const int interval = s.trial.config.engine.poll_interval_ms.value_or(kDefaultEnginePollMs);
    result.environment["engine_video"] = {
        {"poll_interval_ms", interval},
        {"jobs", s.video_jobs},
        {"polls_per_job", static_cast<double>(s.video_polls) / s.video_jobs},
        {"latency", "from POST /v1/videos sent to the content's last byte received"}};
  }
  if (output.format != ImageFormat::kPng) return;
  const NpyArray pixels = ImagePixels(s, output, "the last image");
  WriteNpy(s.run_dir / kOutputFileName, pixels.shape, pixels.data.data());
}

}  // namespace ditbench

#include "engine/video_job.h"

#include <algorithm>
#include <array>
#include <exception>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/untrusted_input.h"

namespace ditbench {
namespace {

using Clock = std::chrono::steady_clock;

// A job's answer is a flat object with a few nested ones (an `error`, `usage`).
constexpr int kMaxJobAnswerDepth = 8;
constexpr std::uint64_t kMaxJobAnswerValues = 4096;
constexpr std::size_t kMaxJobIdBytes = 128;
// How much of a server's own error message is kept in ours.
constexpr std::size_t kShownJobMessageBytes = 300;
constexpr std::array<std::string_view, 4> kStatuses = {"queued", "in_progress", "completed",
                                                       "failed"};

bool IdCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// The message of a failed job's `error` (a string, or an object with a string `message`).
std::string ErrorMessage(const nlohmann::json& error) {
  const nlohmann::json& message =
      error.is_object() && error.contains("message") ? error["message"] : error;
  const std::string text = message.is_string() ? message.get<std::string>() : message.dump();
  return OneLine(std::string_view(text).substr(0, kShownJobMessageBytes));
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Records `response`'s failure in `result` (an answer that is not 2xx, or none); true if it
// failed.
bool Failed(const HttpResponse& response, const char* method, const std::string& url,
            VideoJobResult& result) {
  if (response.ok()) return false;
  result.failure_kind = response.status > 0 ? fmt::format("HTTP {}", response.status) : "no answer";
  result.error = DescribeFailure(response, method, url);
  return true;
}

// A poll cut short by the job's deadline (no answer within the time left) is the deadline's
// failure, not the server's: true, with that said in `result`.
bool PastDeadline(const HttpResponse& response, Clock::time_point deadline,
                  const std::string& status, const std::string& url, const VideoJobOptions& options,
                  VideoJobResult& result) {
  if (response.status > 0 || Clock::now() < deadline) return false;
  result.failure_kind = "deadline";
  result.error =
      fmt::format("GET {}: the job was still {} after {} polls, past the deadline of {:g} s", url,
                  status, result.polls, options.deadline.count() / 1000.0);
  return true;
}

bool Malformed(const std::string& error, VideoJobResult& result) {
  if (error.empty()) return false;
  result.failure_kind = "malformed answer";
  result.error = error;
  return true;
}

}  // namespace

std::string ParseVideoJobState(std::string_view body, const std::string& where,
                               VideoJobState* state) {
  nlohmann::json answer;
  try {
    JsonLimits limits;
    limits.max_depth = kMaxJobAnswerDepth;
    limits.max_values = kMaxJobAnswerValues;
    answer = ParseBoundedJson(body, limits, where);
  } catch (const std::exception& e) {
    return OneLine(e.what());
  }
  const std::string at = OneLine(where);
  if (!answer.is_object())
    return at + ": not a JSON object; expected {\"id\": ..., \"status\": ...}";
  const auto id = answer.find("id");
  if (id == answer.end() || !id->is_string()) {
    if (const auto error = answer.find("error"); error != answer.end())
      return fmt::format("{}: the server answered an error: {}", at, ErrorMessage(*error));
    return at + ": no string 'id'";
  }
  const std::string& text = id->get_ref<const std::string&>();
  if (text.empty() || text.size() > kMaxJobIdBytes ||
      !std::all_of(text.begin(), text.end(), IdCharacter))
    return fmt::format("{}: 'id' is not 1 to {} characters of letters, digits, '.', '_', '-'", at,
                       kMaxJobIdBytes);
  const auto status = answer.find("status");
  if (status == answer.end() || !status->is_string() ||
      std::find(kStatuses.begin(), kStatuses.end(), status->get_ref<const std::string&>()) ==
          kStatuses.end())
    return at + ": 'status' is not one of queued, in_progress, completed, failed";
  state->id = text;
  state->status = status->get<std::string>();
  state->error.clear();
  if (state->status == "failed") {
    const auto error = answer.find("error");
    state->error = error == answer.end() || error->is_null() ? "no message" : ErrorMessage(*error);
  }
  return "";
}

VideoJobResult RunVideoJob(HttpClient& client, const std::string& base_url,
                           const std::vector<MultipartField>& form,
                           const VideoJobOptions& options) {
  VideoJobResult result;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + options.deadline;
  const auto left = [&] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()));
  };
  const std::string create = base_url + "/v1/videos";
  const HttpResponse created = client.PostMultipart(create, form);
  if (Failed(created, "POST", create, result)) return result;
  VideoJobState state;
  if (Malformed(ParseVideoJobState(created.body, "POST " + create, &state), result)) return result;
  result.id = state.id;
  result.submitted_ms = MsSince(start);
  const std::string job = create + "/" + state.id;
  // Bounded whatever the clock does: every round but the first waits a poll interval.
  const auto interval = std::max(options.poll_interval, std::chrono::milliseconds(1));
  const long long max_polls = options.deadline / interval + 2;
  while (state.status != "completed" && state.status != "failed") {
    if (Clock::now() >= deadline || result.polls >= max_polls) {
      result.failure_kind = "deadline";
      result.error =
          fmt::format("GET {}: the job was still {} after {} polls, past the deadline of {:g} s",
                      job, state.status, result.polls, options.deadline.count() / 1000.0);
      return result;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(interval, deadline - Clock::now()));
    ++result.polls;
    const HttpResponse polled = client.Get(job, left());
    if (PastDeadline(polled, deadline, state.status, job, options, result)) return result;
    if (Failed(polled, "GET", job, result)) return result;
    VideoJobState now;
    if (Malformed(ParseVideoJobState(polled.body, "GET " + job, &now), result)) return result;
    if (now.id != state.id) {
      Malformed(fmt::format("GET {}: answered about job '{}'", job, now.id), result);
      return result;
    }
    state = now;
  }
  if (state.status == "failed") {
    result.failure_kind = "job failed";
    result.error = fmt::format("GET {}: the job failed: {}", job, state.error);
    return result;
  }
  result.completed_ms = MsSince(start);
  const std::string content = job + "/content";
  HttpResponse video = client.Get(content, left());
  if (Failed(video, "GET", content, result)) return result;
  if (video.body.empty()) {
    result.failure_kind = "malformed answer";
    result.error = fmt::format("GET {}: the content is empty", content);
    return result;
  }
  result.content_ms = MsSince(start);
  result.content = std::move(video.body);
  return result;
}

}  // namespace ditbench

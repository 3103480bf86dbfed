// A video job on an OpenAI-style videos endpoint, driven as its clients drive it:
//   1. `POST /v1/videos` (multipart/form-data) creates the job: {"id": "...", "status": ...};
//   2. `GET /v1/videos/{id}` is polled at a fixed interval until the status is "completed"
//      (or "failed", with the server's error);
//   3. `GET /v1/videos/{id}/content` returns the video's bytes (an MP4 from the engines).
// The job's latency is the whole of it, from the submit's start to the content's last byte:
// that boundary is the one users wait for, and the polling interval bounds how late the
// completion can be seen (an interval of 2 s biases every latency by up to 2 s; the default
// here is 20 ms, and the caller records what it used).
//
// Every answer is untrusted input: the JSON is parsed with its depth and count of values
// capped, the job's id must be 1 to 128 characters of [A-Za-z0-9._-] before it goes into a
// URL, a status must be one of the four the API names, the content is capped by the client's
// body limit, and the whole job, polls included, is bounded by one deadline. Errors are one line
// naming the request that failed and why. Never throws for what the server does.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "engine/http_client.h"

namespace ditbench {

// The four states of the API: "queued", "in_progress", "completed", "failed".
struct VideoJobState {
  std::string id;
  std::string status;
  std::string error;  // a failed job's message (the server's, on one line), else ""
};

// The state in a create or status answer, or why it is refused ("" when read): not JSON or past
// the caps, not an object, no string `id` or one not of [A-Za-z0-9._-]{1,128}, a `status` that
// is not one of the four. `where` starts the error ("POST http://.../v1/videos").
std::string ParseVideoJobState(std::string_view body, const std::string& where,
                               VideoJobState* state);

struct VideoJobOptions {
  std::chrono::milliseconds poll_interval{20};
  // The whole job (submit, polls, content) at most; past it the job fails naming the deadline.
  std::chrono::milliseconds deadline{600'000};
};

// How one job went. `error` is "" when the content came.
struct VideoJobResult {
  std::string id;
  std::string content;  // the video's bytes
  int polls = 0;        // status requests made
  // From the submit's start: the create answer received, the completion seen, the content's
  // last byte (the job's latency). 0 where the job did not get that far.
  double submitted_ms = 0;
  double completed_ms = 0;
  double content_ms = 0;
  // A failure's kind as a load counts it ("HTTP 500", "no answer", "malformed answer",
  // "job failed", "deadline"), and its line.
  std::string failure_kind;
  std::string error;
};

// Runs one job against `base_url` ("http://127.0.0.1:8000", no trailing '/') with `form` as the
// create request's fields.
VideoJobResult RunVideoJob(HttpClient& client, const std::string& base_url,
                           const std::vector<MultipartField>& form, const VideoJobOptions& options);

}  // namespace ditbench

// An HTTP client for talking to inference servers (the engine workload), over libcurl. A
// server's answers are untrusted input, so every request is bounded: a body larger than the cap
// is refused (from its declared length before a byte of it is read, or as soon as the bytes
// read pass the cap), a connection and a whole request each have a timeout, redirects are never
// followed, only http:// and https:// are spoken, to a loopback address or a host the caller
// named, and no proxy from the environment is used. Compressed bodies are never asked for, so
// the cap is on the bytes that arrive and on the bytes that are kept alike.
//
// Errors: a request never throws for what the server does. A response that did not come
// (refused, reset, timed out, over the cap, a URL refused before sending) has `error` set to
// one line that names the method and URL:
//   "GET http://127.0.0.1:8000/health: connection refused (Couldn't connect to server)"
//   "POST http://127.0.0.1:8000/v1/images/generations: no complete answer within 2 s (the
//    client's timeout)"
//   "POST ...: the response body is over the cap of 67108864 bytes; refused"
// A response that came with any status (a 500, a 302) is a response: `status` and `body` as the
// server sent them, `error` empty.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ditbench {

// What one request got back.
struct HttpResponse {
  long status = 0;              // the HTTP status; 0 when no response came (`error` says why)
  std::string body;             // as the server sent it, at most HttpLimits::max_body_bytes
  std::string content_type;     // the Content-Type header, "" when none
  double seconds = 0;           // from the start of the request to its last byte (or its failure)
  bool new_connection = false;  // a connection was opened for it (not one kept alive)
  std::string error;            // "" when a response came; else one line naming the method and URL

  // A response came and its status is 2xx.
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

// One line for a request that did not succeed: `error` when no response came, else
// "<method> <url>: HTTP <status>: <the body's start, on one line>". "" for an ok() response.
std::string DescribeFailure(const HttpResponse& response, const std::string& method,
                            const std::string& url);

// The bounds every request of one client keeps.
struct HttpLimits {
  std::uint64_t max_body_bytes = std::uint64_t{64} << 20;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{600'000};  // the whole request, body included
  // Hosts a URL may name besides loopback ("127.0.0.1" and the rest of 127/8, "::1",
  // "localhost"): exactly as written in the URL, compared without case.
  std::vector<std::string> allowed_hosts;
};

// One part of a multipart/form-data body: a plain field, or a file when `filename` is set.
struct MultipartField {
  std::string name;
  std::string value;         // the field's value, or the file's bytes
  std::string filename;      // "": a plain field
  std::string content_type;  // "": libcurl's default for the kind of part
};

// A connection to servers that is kept open between requests (one libcurl easy handle, so a
// second request to the same server reuses its connection: keep-alive). Not thread-safe: one
// client per thread, or per request in flight. Move-only.
class HttpClient {
 public:
  // Throws std::runtime_error when libcurl cannot make a handle.
  explicit HttpClient(HttpLimits limits = {});
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const HttpLimits& limits() const { return limits_; }

  [[nodiscard]] HttpResponse Get(const std::string& url);
  // `body` sent as application/json, as given.
  [[nodiscard]] HttpResponse PostJson(const std::string& url, const std::string& body);
  [[nodiscard]] HttpResponse PostMultipart(const std::string& url,
                                           const std::vector<MultipartField>& fields);

  // The same request with its whole-request timeout lowered to `timeout` (never raised past
  // limits().total_timeout): for polling a deadline.
  [[nodiscard]] HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout);

 private:
  struct Handle;
  HttpLimits limits_;
  std::unique_ptr<Handle> handle_;
};

// Why a URL is refused before any request ("" when it may be asked): not http:// or https://,
// a host that is neither loopback nor in `allowed_hosts`, or not a URL at all.
std::string UrlRefusal(const std::string& url, const std::vector<std::string>& allowed_hosts);

// How a wait for a server to be ready ended.
struct ReadyResult {
  bool ready = false;
  double seconds = 0;        // from the start of the wait to its end
  int polls = 0;             // rounds of requests made
  std::string last_failure;  // when not ready: the last answer that was not 2xx, on one line
};

struct ReadyOptions {
  std::chrono::milliseconds timeout{60'000};
  std::chrono::milliseconds poll_interval{200};
  // Asked before every round: a reason ("the server exited with status 1") ends the wait at
  // once with that reason as the last failure. Null: never.
  std::function<std::string()> stop;
};

// Polls every URL of `urls` with `client`, a round at a time, until one round finds all of them
// answering 2xx (ready) or `options.timeout` has passed (not ready, with the last failure).
// Each request is given at most the time left; one cut shorter than a poll interval by the
// deadline that gets no answer does not replace an answer seen before it. Bounded: at most timeout
// / poll_interval + 2 rounds, whatever the clock does.
ReadyResult WaitReady(HttpClient& client, const std::vector<std::string>& urls,
                      const ReadyOptions& options);

}  // namespace ditbench

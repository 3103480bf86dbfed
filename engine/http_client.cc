#include "engine/http_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/terminal_text.h"

namespace ditbench {
namespace {

// libcurl's process-wide state, made once and kept for the life of the process (cleaning it up
// while another thread holds a handle would be undefined).
void InitCurlOnce() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (code != CURLE_OK) {
    throw std::runtime_error(
        fmt::format("libcurl: cannot initialise: {}", curl_easy_strerror(code)));
  }
}

struct CurlUrlDeleter {
  void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};
struct CurlMimeDeleter {
  void operator()(curl_mime* mime) const noexcept { curl_mime_free(mime); }
};
struct CurlListDeleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
using CurlList = std::unique_ptr<curl_slist, CurlListDeleter>;

// A URL part, or "" when the URL lacks it.
std::string UrlPart(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::string value(text);
  curl_free(text);
  return value;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return false;
  return (ntohl(address.s_addr) >> 24) == 127;
}

// Where the body of one response goes: kept up to the cap, and the transfer stopped (libcurl's
// CURLE_WRITE_ERROR) by the first write that would pass it.
struct BodySink {
  std::string* body = nullptr;
  std::uint64_t cap = 0;
  bool over_cap = false;
};

std::size_t WriteBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const std::size_t bytes = size * count;
  if (sink->body->size() + bytes > sink->cap) {
    sink->over_cap = true;
    return 0;
  }
  sink->body->append(data, bytes);
  return bytes;
}

std::string Seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

}  // namespace

struct HttpClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

HttpClient::HttpClient(HttpLimits limits)
    : limits_(std::move(limits)), handle_(std::make_unique<Handle>()) {
  InitCurlOnce();
  handle_->curl = curl_easy_init();
  if (handle_->curl == nullptr) throw std::runtime_error("libcurl: cannot make a handle");
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

std::string UrlRefusal(const std::string& url, const std::vector<std::string>& allowed_hosts) {
  std::unique_ptr<CURLU, CurlUrlDeleter> parsed(curl_url());
  if (!parsed) return "cannot parse URLs (out of memory)";
  if (curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    return "not a URL";
  }
  const std::string scheme = Lower(UrlPart(parsed.get(), CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") {
    return fmt::format("scheme '{}' refused; expected http:// or https://", OneLine(scheme));
  }
  const std::string host = Lower(UrlPart(parsed.get(), CURLUPART_HOST));
  if (IsLoopback(host)) return "";
  for (const std::string& allowed : allowed_hosts) {
    if (Lower(allowed) == host) return "";
  }
  return fmt::format("host '{}' refused; expected a loopback address or a host named as allowed",
                     OneLine(host));
}

std::string DescribeFailure(const HttpResponse& response, const std::string& method,
                            const std::string& url) {
  if (!response.error.empty()) return response.error;
  if (response.ok()) return "";
  constexpr std::size_t kShownBodyBytes = 300;
  std::string line = fmt::format("{} {}: HTTP {}", method, OneLine(url), response.status);
  if (!response.body.empty()) {
    line += ": " + OneLine(std::string_view(response.body).substr(0, kShownBodyBytes));
    if (response.body.size() > kShownBodyBytes) {
      line += fmt::format(" ... [{} more bytes]", response.body.size() - kShownBodyBytes);
    }
  }
  return line;
}

namespace {

// The options every request sets afresh (curl_easy_reset keeps the open connections).
void SetCommonOptions(CURL* curl, const std::string& url, const HttpLimits& limits,
                      std::chrono::milliseconds timeout, BodySink& sink, char* error_buffer) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // never a proxy named by the environment
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(limits.connect_timeout, timeout).count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(
                       std::min<std::uint64_t>(limits.max_body_bytes, std::uint64_t{1} << 62)));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "ditbench");
}

// The one line for a request that got no response.
std::string TransferError(CURLcode code, const BodySink& sink, const char* error_buffer,
                          const HttpLimits& limits, std::chrono::milliseconds timeout) {
  if (sink.over_cap || code == CURLE_FILESIZE_EXCEEDED) {
    return fmt::format("the response body is over the cap of {} bytes; refused",
                       limits.max_body_bytes);
  }
  const std::string detail =
      OneLine(error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code));
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return fmt::format("no complete answer within {} (the client's timeout; {})",
                         Seconds(timeout), detail);
    case CURLE_COULDNT_CONNECT:
      return fmt::format("cannot connect ({})", detail);
    case CURLE_GOT_NOTHING:
      return fmt::format("the server closed the connection without answering ({})", detail);
    default:
      return detail;
  }
}

enum class Method { kGet, kPostJson, kPostMultipart };

const char* MethodName(Method method) { return method == Method::kGet ? "GET" : "POST"; }

// One request: `body` for kPostJson, `fields` for kPostMultipart.
HttpResponse Perform(CURL* curl, const HttpLimits& limits, Method method, const std::string& url,
                     std::chrono::milliseconds timeout, const std::string* body,
                     const std::vector<MultipartField>* fields) {
  HttpResponse response;
  const auto started = std::chrono::steady_clock::now();
  const auto fail = [&](const std::string& what) {
    response.body.clear();
    response.status = 0;
    response.error = fmt::format("{} {}: {}", MethodName(method), OneLine(url), what);
    response.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return response;
  };
  if (std::string refusal = UrlRefusal(url, limits.allowed_hosts); !refusal.empty()) {
    return fail(refusal);
  }
  curl_easy_reset(curl);
  BodySink sink{&response.body, limits.max_body_bytes};
  char error_buffer[CURL_ERROR_SIZE] = {};
  SetCommonOptions(curl, url, limits, timeout, sink, error_buffer);
  // "Expect:" turns off libcurl's 100-continue round trip for large bodies.
  CurlList headers(curl_slist_append(nullptr, "Expect:"));
  std::unique_ptr<curl_mime, CurlMimeDeleter> mime;
  if (method == Method::kPostJson) {
    headers.reset(curl_slist_append(headers.release(), "Content-Type: application/json"));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else if (method == Method::kPostMultipart) {
    mime.reset(curl_mime_init(curl));
    for (const MultipartField& field : *fields) {
      curl_mimepart* part = curl_mime_addpart(mime.get());
      curl_mime_name(part, field.name.c_str());
      curl_mime_data(part, field.value.data(), field.value.size());
      if (!field.filename.empty()) curl_mime_filename(part, field.filename.c_str());
      if (!field.content_type.empty()) curl_mime_type(part, field.content_type.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime.get());
  }
  if (!headers) return fail("out of memory");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  const CURLcode code = curl_easy_perform(curl);
  // Nothing set above may outlive this request: the handle is reset before the next one.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_MIMEPOST, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) return fail(TransferError(code, sink, error_buffer, limits, timeout));
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* content_type = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type) == CURLE_OK &&
      content_type != nullptr) {
    response.content_type = content_type;
  }
  long connects = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
  response.new_connection = connects > 0;
  response.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return response;
}

}  // namespace

HttpResponse HttpClient::Get(const std::string& url) {
  return Perform(handle_->curl, limits_, Method::kGet, url, limits_.total_timeout, nullptr,
                 nullptr);
}

HttpResponse HttpClient::Get(const std::string& url, std::chrono::milliseconds timeout) {
  timeout = std::clamp(timeout, std::chrono::milliseconds(1), limits_.total_timeout);
  return Perform(handle_->curl, limits_, Method::kGet, url, timeout, nullptr, nullptr);
}

HttpResponse HttpClient::PostJson(const std::string& url, const std::string& body) {
  return Perform(handle_->curl, limits_, Method::kPostJson, url, limits_.total_timeout, &body,
                 nullptr);
}

HttpResponse HttpClient::PostMultipart(const std::string& url,
                                       const std::vector<MultipartField>& fields) {
  return Perform(handle_->curl, limits_, Method::kPostMultipart, url, limits_.total_timeout,
                 nullptr, &fields);
}

ReadyResult WaitReady(HttpClient& client, const std::vector<std::string>& urls,
                      const ReadyOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const auto deadline = started + options.timeout;
  const auto interval = std::max(options.poll_interval, std::chrono::milliseconds(1));
  const long long max_rounds = options.timeout / interval + 2;
  ReadyResult result;
  while (result.polls < max_rounds) {
    // The first round always asks, however short the timeout; later ones only before it.
    if (result.polls > 0 && Clock::now() >= deadline) break;
    if (options.stop) {
      if (std::string reason = options.stop(); !reason.empty()) {
        result.last_failure = std::move(reason);
        break;
      }
    }
    ++result.polls;
    bool all_ready = true;
    for (const std::string& url : urls) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      const auto given = std::max(left, std::chrono::milliseconds(1));
      const HttpResponse response = client.Get(url, given);
      if (!response.ok()) {
        all_ready = false;
        // A request cut short by the deadline that got no answer says less than an answer
        // seen before it (a 503 "loading"), so it does not replace one.
        const bool clipped = response.status == 0 && given < interval;
        if (!clipped || result.last_failure.empty()) {
          result.last_failure = DescribeFailure(response, "GET", url);
        }
        break;
      }
    }
    if (all_ready) {
      result.ready = true;
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(interval, deadline - now));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace ditbench

// engine/http_client.h without the reference engine: URLs refused before any request, and a
// canned answer from a socket this test listens on (a redirect that is not followed, a body over
// the cap, nothing listening). The reference engine's tests are in engine_server_test.cc.
#include "engine/http_client.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/untrusted_input.h"

namespace ditbench {
namespace {

using ::testing::HasSubstr;

// A socket on 127.0.0.1 that answers every connection with `answer` after reading the request
// (its headers, and as many bytes more as its Content-Length says), until it is destroyed. Every
// wait is bounded (poll with a timeout).
class CannedServer {
 public:
  explicit CannedServer(std::string answer) : answer_(std::move(answer)) {
    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_.get(), 8) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }
  // The last request read whole, headers and body.
  std::string last_request() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_request_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd ready{listener_.get(), POLLIN, 0};
      if (::poll(&ready, 1, 50) <= 0) continue;
      UniqueFd connection(::accept(listener_.get(), nullptr, nullptr));
      if (!connection) continue;
      const std::string request = ReadRequest(connection.get());
      {
        std::lock_guard<std::mutex> lock(mutex_);
        last_request_ = request;
      }
      // The client may hang up before the whole answer is written: that is not an error here.
      [[maybe_unused]] const ssize_t sent =
          ::send(connection.get(), answer_.data(), answer_.size(), MSG_NOSIGNAL);
    }
  }

  static std::string ReadRequest(int fd) {
    std::string request;
    char buffer[4096];
    std::size_t wanted = 65536;  // until the headers are in, then their Content-Length more
    while (request.size() < wanted && request.size() < 65536) {
      pollfd readable{fd, POLLIN, 0};
      if (::poll(&readable, 1, 2000) <= 0) break;
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got <= 0) break;
      request.append(buffer, static_cast<std::size_t>(got));
      const std::size_t end = request.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      const std::size_t length = request.find("Content-Length: ");
      wanted =
          end + 4 + (length < end ? std::stoul(request.substr(length + 16, 12)) : std::size_t{0});
    }
    return request;
  }

  std::string answer_;
  std::mutex mutex_;
  std::string last_request_;
  UniqueFd listener_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string Answer(const std::string& status_line, const std::string& headers,
                   const std::string& body) {
  return "HTTP/1.1 " + status_line + "\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

TEST(UrlRefusalTest, OnlyHttpToLoopbackOrNamedHostsIsAllowed) {
  EXPECT_EQ(UrlRefusal("http://127.0.0.1:8000/health", {}), "");
  EXPECT_EQ(UrlRefusal("http://127.3.4.5:1/", {}), "");
  EXPECT_EQ(UrlRefusal("http://localhost:8000/", {}), "");
  EXPECT_EQ(UrlRefusal("http://[::1]:8000/", {}), "");
  EXPECT_EQ(UrlRefusal("https://LOCALHOST/", {}), "");
  EXPECT_EQ(UrlRefusal("http://gpu-node-3:8000/", {"GPU-node-3"}), "");
  EXPECT_THAT(UrlRefusal("http://gpu-node-3:8000/", {}), HasSubstr("host 'gpu-node-3' refused"));
  EXPECT_THAT(UrlRefusal("http://10.0.0.1/", {}), HasSubstr("refused"));
  EXPECT_THAT(UrlRefusal("file:///etc/passwd", {}), HasSubstr("scheme 'file' refused"));
  EXPECT_THAT(UrlRefusal("ftp://127.0.0.1/x", {}), HasSubstr("scheme 'ftp' refused"));
  EXPECT_THAT(UrlRefusal("gopher://127.0.0.1/x", {}), HasSubstr("refused"));
  EXPECT_EQ(UrlRefusal("http://", {}), "not a URL");
}

TEST(HttpClientTest, RefusedUrlIsAnErrorNamingItWithoutARequest) {
  HttpClient client;
  const HttpResponse response = client.Get("file:///etc/passwd");
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(response.status, 0);
  EXPECT_EQ(response.body, "");
  EXPECT_EQ(response.error,
            "GET file:///etc/passwd: scheme 'file' refused; expected http:// or "
            "https://");
}

TEST(HttpClientTest, NothingListeningIsAnErrorNamingTheUrl) {
  int port = 0;
  {
    CannedServer closed("");
    port = closed.port();
  }  // the port is free again: nothing listens there now
  HttpClient client;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/health";
  const HttpResponse response = client.Get(url);
  EXPECT_FALSE(response.ok());
  EXPECT_THAT(response.error, HasSubstr("GET " + url + ": cannot connect"));
  EXPECT_EQ(response.error.find('\n'), std::string::npos);
}

TEST(HttpClientTest, RedirectIsReturnedNotFollowed) {
  CannedServer server(Answer("302 Found", "Location: file:///etc/passwd\r\n", "moved"));
  HttpClient client;
  const HttpResponse response = client.Get(server.url("/v1/models"));
  EXPECT_EQ(response.error, "");
  EXPECT_EQ(response.status, 302);
  EXPECT_EQ(response.body, "moved");
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(DescribeFailure(response, "GET", server.url("/v1/models")),
            "GET " + server.url("/v1/models") + ": HTTP 302: moved");
}

TEST(HttpClientTest, BodyOverTheCapIsRefusedWithoutKeepingIt) {
  const std::string body(5000, 'x');
  CannedServer declared(Answer("200 OK", "Content-Type: application/json\r\n", body));
  // No Content-Length: the cap is met while the bytes arrive.
  CannedServer undeclared("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body);
  HttpLimits limits;
  limits.max_body_bytes = 4096;
  HttpClient client(limits);
  for (const CannedServer* server : {&declared, &undeclared}) {
    const HttpResponse response = client.Get(server->url("/big"));
    EXPECT_EQ(response.status, 0);
    EXPECT_EQ(response.body, "");
    EXPECT_EQ(response.error, "GET " + server->url("/big") +
                                  ": the response body is over the cap of 4096 bytes; refused");
  }
  // At the cap exactly, the body is kept.
  limits.max_body_bytes = 5000;
  HttpClient roomy(limits);
  const HttpResponse response = roomy.Get(undeclared.url("/big"));
  EXPECT_TRUE(response.ok()) << response.error;
  EXPECT_EQ(response.body.size(), 5000u);
}

TEST(HttpClientTest, PostJsonSendsTheBodyAndReadsTheAnswer) {
  CannedServer server(Answer("201 Created", "Content-Type: application/json\r\n", "{\"a\":1}"));
  HttpClient client;
  const HttpResponse response = client.PostJson(server.url("/x"), "{\"prompt\":\"a cat\"}");
  EXPECT_TRUE(response.ok()) << response.error;
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(response.body, "{\"a\":1}");
  EXPECT_TRUE(response.new_connection);
  const std::string request = server.last_request();
  EXPECT_EQ(request.rfind("POST /x HTTP/1.1\r\n", 0), 0u) << request;
  EXPECT_THAT(request, HasSubstr("\r\nContent-Type: application/json\r\n"));
  EXPECT_THAT(request, HasSubstr("\r\nContent-Length: 18\r\n"));
  EXPECT_THAT(request, ::testing::EndsWith("\r\n\r\n{\"prompt\":\"a cat\"}"));
  EXPECT_THAT(request, ::testing::Not(HasSubstr("Expect:")));
}

TEST(HttpClientTest, PostMultipartSendsFieldsAndFiles) {
  CannedServer server(Answer("200 OK", "Content-Type: application/json\r\n", "{\"id\":\"v1\"}"));
  HttpClient client;
  const std::string png("\x89PNG\r\n\x1a\n\0\xff", 10);
  const HttpResponse response = client.PostMultipart(
      server.url("/v1/videos"), {{"prompt", "a cat on a boat", "", ""},
                                 {"num_frames", "81", "", ""},
                                 {"input_reference", png, "first.png", "image/png"}});
  ASSERT_TRUE(response.ok()) << response.error;
  EXPECT_EQ(response.body, "{\"id\":\"v1\"}");
  const std::string request = server.last_request();
  EXPECT_THAT(request, HasSubstr("Content-Type: multipart/form-data; boundary="));
  EXPECT_THAT(request, HasSubstr("name=\"prompt\"\r\n\r\na cat on a boat\r\n"));
  EXPECT_THAT(request, HasSubstr("name=\"num_frames\"\r\n\r\n81\r\n"));
  EXPECT_THAT(request, HasSubstr("name=\"input_reference\"; filename=\"first.png\"\r\n"
                                 "Content-Type: image/png\r\n\r\n" +
                                 png + "\r\n"));
}

TEST(WaitReadyTest, NothingListeningFailsAfterTheTimeoutWithTheLastError) {
  int port = 0;
  {
    CannedServer closed("");
    port = closed.port();
  }
  HttpClient client;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/health";
  ReadyOptions options;
  options.timeout = std::chrono::milliseconds(300);
  options.poll_interval = std::chrono::milliseconds(50);
  const ReadyResult result = WaitReady(client, {url}, options);
  EXPECT_FALSE(result.ready);
  EXPECT_GE(result.polls, 1);
  EXPECT_LE(result.polls, 300 / 50 + 2);
  EXPECT_THAT(result.last_failure, HasSubstr("GET " + url + ": cannot connect"));
}

TEST(WaitReadyTest, StopEndsTheWaitWithItsReason) {
  CannedServer server(Answer("503 Service Unavailable", "", "loading"));
  HttpClient client;
  int asked = 0;
  ReadyOptions options;
  options.timeout = std::chrono::hours(1);
  options.poll_interval = std::chrono::milliseconds(1);
  options.stop = [&asked] { return ++asked == 3 ? "the server exited with status 1" : ""; };
  const ReadyResult result = WaitReady(client, {server.url("/health")}, options);
  EXPECT_FALSE(result.ready);
  EXPECT_EQ(result.polls, 2);
  EXPECT_EQ(result.last_failure, "the server exited with status 1");
}

TEST(WaitReadyTest, EveryPathMustAnswer2xx) {
  CannedServer ok(Answer("200 OK", "", "ok"));
  CannedServer loading(Answer("503 Service Unavailable", "", "{\"status\": \"loading\"}"));
  HttpClient client;
  ReadyOptions options;
  options.timeout = std::chrono::milliseconds(200);
  options.poll_interval = std::chrono::milliseconds(20);
  EXPECT_TRUE(WaitReady(client, {ok.url("/health"), ok.url("/v1/models")}, options).ready);
  const ReadyResult result =
      WaitReady(client, {ok.url("/health"), loading.url("/health")}, options);
  EXPECT_FALSE(result.ready);
  EXPECT_EQ(result.last_failure,
            "GET " + loading.url("/health") + ": HTTP 503: {\"status\": \"loading\"}");
}

}  // namespace
}  // namespace ditbench

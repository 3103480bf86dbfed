// The HTTP client (engine/http_client.h) and the images answer (engine/image_response.h)
// against the reference engine, python/ditbench_engine_server.py, run as a real local process
// on a tiny real diffusers pipeline (tests/support/engine_server.h), well behaved and with each
// of its misbehaviours. Every server is killed with its process group when its test ends.
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/untrusted_input.h"
#include "engine/http_client.h"
#include "engine/image_response.h"
#include "metrics/png_image.h"
#include "tests/support/engine_server.h"

namespace ditbench {
namespace {

using test::EngineServer;
using test::ExpectReady;
using test::TinyPipeline;
using ::testing::HasSubstr;

constexpr char kGenerations[] = "/v1/images/generations";

std::string Request(int n = 1, int seed = 7, const std::string& size = "64x64") {
  return nlohmann::json{
      {"prompt", "a red fox in the snow"}, {"size", size},          {"n", n},
      {"num_inference_steps", 2},          {"guidance_scale", 4.5}, {"seed", seed},
      {"response_format", "b64_json"}}
      .dump();
}

TEST(EngineServerTest, GenerationReturnsPngsThatDecodeAndRepeatForTheSameSeed) {
  EngineServer server(TinyPipeline(), {});
  HttpClient client;
  ExpectReady(server, client);
  const HttpResponse response = client.PostJson(server.url(kGenerations), Request(2));
  ASSERT_TRUE(response.ok()) << DescribeFailure(response, "POST", kGenerations);
  EXPECT_EQ(response.content_type, "application/json");
  const ImageResponse images = ParseImageResponse(response.body, "POST");
  ASSERT_EQ(images.error, "");
  ASSERT_EQ(images.images.size(), 2u);
  for (const GeneratedImage& image : images.images) {
    EXPECT_EQ(image.format, ImageFormat::kPng);
    const RgbImage picture = DecodePng(image.bytes);
    EXPECT_EQ(picture.width, 64);
    EXPECT_EQ(picture.height, 64);
  }
  // The same request in the same process: the same pixels. Another seed: others.
  const HttpResponse again = client.PostJson(server.url(kGenerations), Request(1));
  const HttpResponse other = client.PostJson(server.url(kGenerations), Request(1, 8, "96x64"));
  ASSERT_TRUE(again.ok() && other.ok());
  const ImageResponse again_images = ParseImageResponse(again.body, "POST");
  ASSERT_EQ(again_images.images.size(), 1u);
  EXPECT_EQ(DecodePng(again_images.images[0].bytes).pixels,
            DecodePng(images.images[0].bytes).pixels);
  const RgbImage wide = DecodePng(ParseImageResponse(other.body, "POST").images.at(0).bytes);
  EXPECT_EQ(wide.width, 96);
  EXPECT_EQ(wide.height, 64);
  // One connection, kept alive from the health check on.
  EXPECT_FALSE(again.new_connection);
  EXPECT_FALSE(other.new_connection);
}

TEST(EngineServerTest, ModelsAndVersionDescribeTheEngine) {
  EngineServer server(TinyPipeline(), {"--served-model-name", "tiny-pixart"});
  HttpClient client;
  ExpectReady(server, client);
  const HttpResponse models = client.Get(server.url("/v1/models"));
  ASSERT_TRUE(models.ok()) << models.error;
  EXPECT_EQ(ParseBoundedJson(models.body, 8, "models")["data"][0]["id"], "tiny-pixart");
  const HttpResponse version = client.Get(server.url("/version"));
  ASSERT_TRUE(version.ok()) << version.error;
  const nlohmann::json versions = ParseBoundedJson(version.body, 8, "version");
  EXPECT_EQ(versions["engine"], "ditbench-reference");
  EXPECT_EQ(versions["diffusers"], "0.35.2");
  EXPECT_TRUE(versions["torch"].is_string());
}

TEST(EngineServerTest, BadRequestsAreAnswered400WithTheReason) {
  EngineServer server(TinyPipeline(), {});
  HttpClient client;
  ExpectReady(server, client);
  const std::pair<std::string, std::string> cases[] = {
      {Request(1, 7, "65x64"), "each side must be a multiple of 16"},
      {Request(99), "'n' must be an integer from 1 to 4"},
      {R"({"prompt": "a cat", "size": "64x64", "steps": 2})", "unknown field 'steps'"},
      {R"({"size": "64x64"})", "'prompt' must be a string"},
      {R"({"prompt": "a cat", "size": "64x64", "response_format": "url"})", "'b64_json'"},
      {"[[[", "the body is not JSON"},
  };
  for (const auto& [body, reason] : cases) {
    const HttpResponse response = client.PostJson(server.url(kGenerations), body);
    EXPECT_EQ(response.status, 400) << body;
    const ImageResponse parsed = ParseImageResponse(response.body, "POST");
    EXPECT_THAT(parsed.error, HasSubstr("the server answered an error: ")) << body;
    EXPECT_THAT(parsed.error, HasSubstr(reason)) << body;
  }
  // A body over the server's own cap is refused before it is read.
  const HttpResponse huge = client.PostJson(server.url(kGenerations), std::string(2 << 20, ' '));
  EXPECT_EQ(huge.status, 413) << huge.error;
}

TEST(EngineServerTest, NeverReadyFailsTheWaitAtItsTimeoutWithTheLastStatus) {
  EngineServer server(TinyPipeline(), {"--never-ready"});
  ASSERT_NE(server.port(), 0) << server.log();
  HttpClient client;
  ReadyOptions options;
  options.timeout = std::chrono::milliseconds(1500);
  options.poll_interval = std::chrono::milliseconds(100);
  const ReadyResult ready = WaitReady(client, {server.url("/health")}, options);
  EXPECT_FALSE(ready.ready);
  EXPECT_EQ(ready.last_failure,
            "GET " + server.url("/health") + ": HTTP 503: {\"status\": \"loading\"}");
  EXPECT_FALSE(server.exit_status());
}

TEST(EngineServerTest, AServerThatCannotLoadExitsAndEndsTheWait) {
  test::TempDir empty;
  EngineServer server(empty.path(), {});
  HttpClient client;
  const ReadyResult ready =
      WaitReady(client, {server.url("/health")}, test::ServerReadyOptions(server));
  EXPECT_FALSE(ready.ready);
  EXPECT_EQ(ready.last_failure, "the server exited with status 1");
  EXPECT_THAT(server.log(), HasSubstr("cannot load the pipeline from"));
}

TEST(EngineServerTest, FailEveryTwoAnswers500WithTheErrorBody) {
  EngineServer server(TinyPipeline(), {"--fail-every", "2"});
  HttpClient client;
  ExpectReady(server, client);
  const HttpResponse first = client.PostJson(server.url(kGenerations), Request());
  const HttpResponse second = client.PostJson(server.url(kGenerations), Request());
  const HttpResponse third = client.PostJson(server.url(kGenerations), Request());
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(second.status, 500);
  EXPECT_EQ(second.error, "");
  EXPECT_THAT(second.body, HasSubstr("injected failure of image request 2 (--fail-every 2)"));
  EXPECT_THAT(DescribeFailure(second, "POST", server.url(kGenerations)),
              HasSubstr("POST " + server.url(kGenerations) + ": HTTP 500: {"));
}

TEST(EngineServerTest, AnAnswerSlowerThanTheClientsTimeoutIsATimeoutError) {
  EngineServer server(TinyPipeline(), {"--delay-s", "60"});
  HttpLimits limits;
  limits.total_timeout = std::chrono::milliseconds(500);
  HttpClient client(limits);
  ExpectReady(server, client);
  const HttpResponse response = client.PostJson(server.url(kGenerations), Request());
  EXPECT_EQ(response.status, 0);
  EXPECT_THAT(response.error, HasSubstr("POST " + server.url(kGenerations) +
                                        ": no complete answer within 0.5 s (the client's "
                                        "timeout; "));
}

TEST(EngineServerTest, HugeBodiesAreRefusedAtTheCap) {
  HttpLimits limits;
  limits.max_body_bytes = 1 << 20;
  for (const char* mode : {"--huge-body", "--endless-body"}) {
    EngineServer server(TinyPipeline(), {mode});
    HttpClient client(limits);
    ExpectReady(server, client);
    const HttpResponse response = client.PostJson(server.url(kGenerations), Request());
    EXPECT_EQ(response.status, 0) << mode;
    EXPECT_EQ(response.body, "") << mode;
    EXPECT_EQ(response.error, "POST " + server.url(kGenerations) +
                                  ": the response body is over the cap of 1048576 bytes; refused")
        << mode;
    // The server is still there for the next client.
    HttpClient next;
    EXPECT_TRUE(next.Get(server.url("/health")).ok()) << mode;
  }
}

TEST(EngineServerTest, MalformedAnswerIsABodyThatTheParserRefuses) {
  EngineServer server(TinyPipeline(), {"--malformed"});
  HttpClient client;
  ExpectReady(server, client);
  const HttpResponse response = client.PostJson(server.url(kGenerations), Request());
  ASSERT_TRUE(response.ok()) << response.error;
  const ImageResponse images =
      ParseImageResponse(response.body, "POST " + server.url(kGenerations));
  EXPECT_TRUE(images.images.empty());
  EXPECT_THAT(images.error, HasSubstr("POST " + server.url(kGenerations) + ": not valid JSON"));
}

TEST(EngineServerTest, AServerThatDiesMidRequestIsAnErrorAndItsExitIsSeen) {
  EngineServer server(TinyPipeline(), {"--die-after", "1"});
  HttpClient client;
  ExpectReady(server, client);
  EXPECT_TRUE(client.PostJson(server.url(kGenerations), Request()).ok());
  const HttpResponse second = client.PostJson(server.url(kGenerations), Request());
  EXPECT_EQ(second.status, 0);
  EXPECT_THAT(second.error, HasSubstr("POST " + server.url(kGenerations) + ": "));
  EXPECT_EQ(server.WaitExit(30), 3);
  EXPECT_THAT(server.log(), HasSubstr("exiting without an answer (--die-after 1)"));
}

// A socket listening on a port of 127.0.0.1 for as long as it lives.
class HeldPort {
 public:
  HeldPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_.get(), 1) != 0 ||
        ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot hold a port");
    }
    port_ = ntohs(address.sin_port);
  }
  int port() const { return port_; }

 private:
  UniqueFd fd_;
  int port_ = 0;
};

TEST(EngineServerTest, AHeldPortIsRefusedAndPortZeroTakesAnother) {
  const HeldPort held;
  EngineServer refused(TinyPipeline(), {"--port", std::to_string(held.port())});
  EXPECT_EQ(refused.port(), 0);
  EXPECT_EQ(refused.WaitExit(60), 2);
  EXPECT_THAT(refused.log(),
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(held.port())));
  EngineServer server(TinyPipeline(), {"--port", "0"});
  EXPECT_NE(server.port(), held.port());
  HttpClient client;
  ExpectReady(server, client);
}

}  // namespace
}  // namespace ditbench

// A video job (engine/video_job.h): its answers read as untrusted input, and whole jobs against
// the reference engine (python/ditbench_engine_server.py) serving a tiny real Wan pipeline on
// CPU, well behaved and misbehaving. Every server is killed with its process group when its
// test ends.
#include "engine/video_job.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/image_response.h"
#include "tests/support/engine_server.h"

namespace ditbench {
namespace {

using test::EngineServer;
using test::ExpectReady;
using test::TinyVideoPipeline;
using ::testing::HasSubstr;

constexpr char kJobWhere[] = "GET http://127.0.0.1:1/v1/videos/x";

std::string Parsed(const std::string& body, VideoJobState* state = nullptr) {
  VideoJobState ignored;
  return ParseVideoJobState(body, kJobWhere, state ? state : &ignored);
}

TEST(VideoJobStateTest, ReadsTheIdAndStatusOfEachState) {
  VideoJobState state;
  EXPECT_EQ(Parsed(R"({"id": "video_1a", "object": "video", "status": "queued"})", &state), "");
  EXPECT_EQ(state.id, "video_1a");
  EXPECT_EQ(state.status, "queued");
  for (const char* status : {"in_progress", "completed"}) {
    EXPECT_EQ(Parsed(std::string(R"({"id": "v.2-x_3", "status": ")") + status + "\"}", &state), "");
    EXPECT_EQ(state.status, status);
    EXPECT_EQ(state.error, "");
  }
}

TEST(VideoJobStateTest, AFailedJobCarriesTheServersMessageOnOneLine) {
  VideoJobState state;
  EXPECT_EQ(Parsed(R"({"id": "v1", "status": "failed",
                       "error": {"code": "x", "message": "out of\nmemory"}})",
                   &state),
            "");
  EXPECT_EQ(state.error, "out of\\nmemory");  // the line break shown, not kept
  EXPECT_EQ(Parsed(R"({"id": "v1", "status": "failed", "error": "boom"})", &state), "");
  EXPECT_EQ(state.error, "boom");
  EXPECT_EQ(Parsed(R"({"id": "v1", "status": "failed"})", &state), "");
  EXPECT_EQ(state.error, "no message");
}

TEST(VideoJobStateTest, RefusesWhatCannotBeAJob) {
  EXPECT_THAT(Parsed("<html>"), HasSubstr(kJobWhere));
  EXPECT_THAT(Parsed("[1, 2]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(Parsed(R"({"status": "queued"})"), HasSubstr("no string 'id'"));
  EXPECT_THAT(Parsed(R"({"id": 7, "status": "queued"})"), HasSubstr("no string 'id'"));
  // An id goes into a URL: nothing that could leave the path.
  for (const char* id : {"", "../admin", "a/b", "a?b=1", "a b", "a%2F"})
    EXPECT_THAT(Parsed(std::string(R"({"id": ")") + id + R"(", "status": "queued"})"),
                HasSubstr("'id' is not 1 to 128 characters"))
        << id;
  EXPECT_THAT(Parsed(R"({"id": ")" + std::string(129, 'a') + R"(", "status": "queued"})"),
              HasSubstr("'id' is not"));
  EXPECT_THAT(Parsed(R"({"id": "v1", "status": "done"})"), HasSubstr("'status' is not one of"));
  EXPECT_THAT(Parsed(R"({"id": "v1"})"), HasSubstr("'status' is not one of"));
  EXPECT_THAT(Parsed(R"({"error": {"message": "no such model"}})"),
              HasSubstr("the server answered an error: no such model"));
}

std::vector<MultipartField> Form(int frames = 9, int seed = 3) {
  return {{"prompt", "a red fox in the snow", "", ""},
          {"size", "32x32", "", ""},
          {"num_frames", std::to_string(frames), "", ""},
          {"num_inference_steps", "2", "", ""},
          {"fps", "8", "", ""},
          {"seed", std::to_string(seed), "", ""}};
}

std::string Base(const EngineServer& server) {
  std::string url = server.url("/");
  url.pop_back();
  return url;
}

TEST(VideoJobTest, AJobIsSubmittedPolledAndItsMp4Fetched) {
  EngineServer server(TinyVideoPipeline(), {});
  HttpClient client;
  ExpectReady(server, client);
  VideoJobOptions options;
  options.poll_interval = std::chrono::milliseconds(20);
  options.deadline = std::chrono::seconds(120);
  const VideoJobResult job = RunVideoJob(client, Base(server), Form(), options);
  ASSERT_EQ(job.error, "") << server.log();
  EXPECT_EQ(SniffImageFormat(job.content), ImageFormat::kMp4);
  EXPECT_THAT(job.id, testing::StartsWith("video_"));
  // A tiny video still takes far longer than one interval on any CPU: the job was polled.
  EXPECT_GE(job.polls, 1);
  EXPECT_GT(job.submitted_ms, 0);
  EXPECT_LE(job.submitted_ms, job.completed_ms);
  EXPECT_LE(job.completed_ms, job.content_ms);
  // The same request again: the server made the same frames (the same seed, one process), and
  // its encoder the same bytes.
  const VideoJobResult again = RunVideoJob(client, Base(server), Form(), options);
  ASSERT_EQ(again.error, "");
  EXPECT_NE(again.id, job.id);
  EXPECT_EQ(again.content, job.content);
}

TEST(VideoJobTest, AFailedJobNamesTheServersReason) {
  EngineServer server(TinyVideoPipeline(), {"--fail-every", "1"});
  HttpClient client;
  ExpectReady(server, client);
  const VideoJobResult job = RunVideoJob(client, Base(server), Form(), {});
  EXPECT_EQ(job.failure_kind, "job failed");
  EXPECT_THAT(job.error, HasSubstr("the job failed: injected failure of video job 1"));
  EXPECT_TRUE(job.content.empty());
}

TEST(VideoJobTest, AJobPastItsDeadlineIsGivenUpNamingIt) {
  EngineServer server(TinyVideoPipeline(), {"--delay-s", "30"});
  HttpClient client;
  ExpectReady(server, client);
  VideoJobOptions options;
  options.deadline = std::chrono::milliseconds(500);
  const VideoJobResult job = RunVideoJob(client, Base(server), Form(), options);
  EXPECT_EQ(job.failure_kind, "deadline");
  EXPECT_THAT(job.error, HasSubstr("past the deadline of 0.5 s"));
}

TEST(VideoJobTest, ARefusedRequestIsAnHttpErrorWithTheServersMessage) {
  EngineServer server(TinyVideoPipeline(), {});
  HttpClient client;
  ExpectReady(server, client);
  const VideoJobResult job = RunVideoJob(client, Base(server), Form(/*frames=*/8), {});
  EXPECT_EQ(job.failure_kind, "HTTP 400");
  EXPECT_THAT(job.error, HasSubstr("'num_frames' 8: expected 1 + a multiple of 4"));
}

TEST(VideoJobTest, AServerThatDiesIsNoAnswer) {
  EngineServer server(TinyVideoPipeline(), {"--die-after", "1"});
  HttpClient client;
  ExpectReady(server, client);
  ASSERT_EQ(RunVideoJob(client, Base(server), Form(), {}).error, "");
  const VideoJobResult job = RunVideoJob(client, Base(server), Form(), {});
  EXPECT_EQ(job.failure_kind, "no answer");
  EXPECT_THAT(job.error, HasSubstr("POST"));
}

}  // namespace
}  // namespace ditbench

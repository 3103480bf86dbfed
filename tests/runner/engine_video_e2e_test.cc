// The `engine` workload's video API end to end (api: videos): the real coordinator starts
// `ditbench engine-trial`, which starts the reference engine on a tiny real Wan pipeline on CPU,
// submits each request as a video job, polls it at the sweep's interval and fetches its MP4.
// What the database and the run folders say is checked; the failures are a real server's.
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/image_response.h"
#include "tests/support/engine_server.h"
#include "tests/support/engine_workload.h"

namespace ditbench::engine_video_e2e_test {
namespace {

using test::EngineWorkloadTest;
using ::testing::HasSubstr;

// A sweep of the video server with `flags` on its command line and `more` as more keys of its
// defaults (", serve: {...}").
void WriteVideoSweep(const std::filesystem::path& dir, const std::string& flags,
                     const std::string& more = "") {
  std::ofstream(dir / "sweep.yaml") << fmt::format(
      "name: engine-video-e2e\n"
      "workload: engine\n"
      "engine:\n"
      "  start: [\"{}\", \"{}\", --model, \"{}\", --port, \"{{port}}\", --threads, \"1\"{}]\n"
      "  api: videos\n"
      "  poll_interval_ms: 25\n"
      "  request: {{prompt: a red fox, size: \"{{size}}\", num_frames: \"{{frames}}\", "
      "num_inference_steps: \"{{steps}}\", seed: \"{{seed}}\", fps: 8}}\n"
      "  start_timeout: 120\n"
      "  max_error_rate: 0.5\n"
      "defaults: {{model: wan2.1-t2v-tiny, resolution: 32, frames: 9, steps: 2, repeats: {{min: 2, "
      "max: 2}}, timeout: 5m{}}}\n",
      test::EnginePython(), test::EngineScript("ditbench_engine_server.py").string(),
      test::TinyVideoPipeline().string(), flags, more);
}

nlohmann::json RankFile(const nlohmann::json& trial) {
  std::ifstream in(std::filesystem::path(trial["run_dir"].get<std::string>()) / "rank0.json");
  return nlohmann::json::parse(in);
}

TEST_F(EngineWorkloadTest, AVideoJobIsTimedFromSubmitToContentAndItsMp4Kept) {
  WriteVideoSweep(dir_.path(), "");
  ASSERT_EQ(RunWrittenSweep(), 0) << log_;
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 1u) << log_;
  ASSERT_EQ(trials[0]["status"], "ok") << trials.dump();
  const std::filesystem::path run_dir = trials[0]["run_dir"].get<std::string>();
  std::ifstream video(run_dir / "output.mp4", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(video)), {});
  EXPECT_EQ(SniffImageFormat(bytes), ImageFormat::kMp4);
  // The request as the engine's form saw it: numbers from the trial's fields.
  std::ifstream request(run_dir / "request.json");
  const nlohmann::json body = nlohmann::json::parse(request);
  EXPECT_EQ(body["num_frames"], 9);
  EXPECT_EQ(body["size"], "32x32");
  const nlohmann::json env = RankFile(trials[0])["environment"];
  EXPECT_EQ(env["engine_output"]["format"], "mp4");
  EXPECT_EQ(env["engine_output"]["bytes"], bytes.size());
  EXPECT_EQ(env["engine_output"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(env["engine_video"]["poll_interval_ms"], 25);
  EXPECT_EQ(env["engine_video"]["jobs"], 3);  // one warm-up, two timed
  EXPECT_GE(env["engine_video"]["polls_per_job"].get<double>(), 1);
  EXPECT_EQ(env["engine_version"], "1");  // the reference engine's /version
  // The campaign is described by the engine's version alone, which `compare` lists where two
  // campaigns differ; the trial's own port, pid and hash stay out of it.
  EXPECT_EQ(
      Sql("SELECT json_extract(environment_json, '$.worker') AS worker FROM campaigns")[0]
                                                                                       ["worker"],
      R"({"engine_version":"1"})");
  ExpectServerGone(run_dir);
  // No image to decode: the coordinator compares nothing, and says nothing false.
  EXPECT_FALSE(std::filesystem::exists(run_dir / "output.npy"));
  const nlohmann::json samples =
      Sql("SELECT SUM(warmup = 0) AS timed, MIN(ms) AS low FROM samples");
  EXPECT_EQ(samples[0]["timed"], 2);
  EXPECT_GT(samples[0]["low"].get<double>(), 0);
}

TEST_F(EngineWorkloadTest, AVideoLoadCountsFailedJobsAndKeepsItsTail) {
  WriteVideoSweep(dir_.path(), ", --fail-every, \"4\"",
                  ", serve: {arrivals: poisson, rate: 4, requests: 12}");
  ASSERT_EQ(RunWrittenSweep(), 0) << log_;
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 1u) << log_;
  ASSERT_EQ(trials[0]["status"], "ok") << trials.dump();
  const nlohmann::json env = RankFile(trials[0])["environment"];
  EXPECT_GE(env["engine_errors"]["job failed"].get<int>(), 1) << env.dump();
  const nlohmann::json failed =
      Sql("SELECT value FROM metric_values WHERE name = 'failed_requests'");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_GE(failed[0]["value"].get<double>(), 1);
  // 12 requests bound no p95; the median, throughput and SLO attainment are there.
  const nlohmann::json row = Sql("SELECT requests_per_s, slo_attainment FROM results")[0];
  EXPECT_GT(row["requests_per_s"].get<double>(), 0) << row.dump();
  EXPECT_LT(row["slo_attainment"].get<double>(), 1) << row.dump();  // failed jobs miss it
  ExpectServerGone(trials[0]["run_dir"].get<std::string>());
}

TEST_F(EngineWorkloadTest, AnImageServerAskedForAVideoFailsNamingWhy) {
  WriteVideoSweep(dir_.path(), "");
  // The same sweep against the image pipeline: its server refuses /v1/videos.
  std::ifstream in(dir_ / "sweep.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string video = test::TinyVideoPipeline().string();
  text.replace(text.find(video), video.size(), test::TinyPipeline().string());
  std::ofstream(dir_ / "sweep.yaml") << text;
  EXPECT_NE(RunWrittenSweep(), 0);
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 1u) << log_;
  EXPECT_EQ(trials[0]["status"], "failed");
  EXPECT_THAT(trials[0]["error"].get<std::string>(),
              HasSubstr("HTTP 400: {\"error\": {\"message\": \"this server's model makes images"));
}

}  // namespace
}  // namespace ditbench::engine_video_e2e_test

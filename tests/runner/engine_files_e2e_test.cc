// An engine that takes its layout from a config file (engine.files), end to end: the file is a
// template of the trial written before the server starts, and the server started with it
// (the reference engine's --config) runs the layout the trial asked for.
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/engine_server.h"
#include "tests/support/engine_workload.h"

namespace ditbench::engine_files_e2e_test {
namespace {

using test::EngineWorkloadTest;
using ::testing::HasSubstr;

TEST_F(EngineWorkloadTest, AConfigFileOfTheTrialGivesTheServerItsLayout) {
  engine_extra_ =
      "  files: {engine.json: '{{\"replicas\": {dp}}}'}\n"
      "  degrees: [dp]\n";
  ASSERT_EQ(RunCampaign(", --config, \"{files}/engine.json\"", "dp: [1, 2]", 120, "cpu:2"), 0)
      << log_;
  const nlohmann::json trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << log_;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(trials[i]["status"], "ok") << trials.dump();
    const std::filesystem::path run_dir = trials[i]["run_dir"].get<std::string>();
    EXPECT_EQ(test::ReadWholeFile(run_dir / "engine-files" / "engine.json"),
              fmt::format("{{\"replicas\": {}}}", i + 1));
    // The server says how many pipelines it loaded: the file's, not a flag's.
    EXPECT_THAT(test::ReadWholeFile(run_dir / "server.log"),
                HasSubstr(fmt::format("loaded {} x PixArtAlphaPipeline", i + 1)));
    ExpectServerGone(run_dir);
  }
}

}  // namespace
}  // namespace ditbench::engine_files_e2e_test

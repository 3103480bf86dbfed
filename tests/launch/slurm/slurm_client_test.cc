#include "launch/slurm/slurm_client.h"

#include <chrono>

#include <gtest/gtest.h>

namespace ditbench::slurm_client_test {
namespace {

TEST(SlurmClientTest, RunProgramKeepsOutputAndExitCode) {
  const ProgramOutput out = RunProgram("sh", {"-c", "echo to-out; echo to-err >&2; exit 4"});
  EXPECT_EQ(out.exit_code, 4);
  EXPECT_NE(out.text.find("to-out"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("to-err"), std::string::npos) << out.text;
}

TEST(SlurmClientTest, ProgramThatDoesNotAnswerIsKilledAtItsTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const ProgramOutput out = RunProgram("sleep", {"30"}, std::chrono::milliseconds(200));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(out.exit_code, -1);
  EXPECT_NE(out.text.find("did not answer"), std::string::npos) << out.text;
}

TEST(SlurmClientTest, MissingProgramIsNamed) {
  const ProgramOutput out = RunProgram("no-such-program-ditbench", {});
  EXPECT_EQ(out.exit_code, -1);
  EXPECT_NE(out.text.find("no-such-program-ditbench not found"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace ditbench::slurm_client_test

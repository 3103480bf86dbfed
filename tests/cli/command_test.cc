#include "cli/command.h"

#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace ditbench {
namespace {

TEST(RunGuardedTest, ReturnsTheActionsExitCode) {
  std::stringstream err;
  EXPECT_EQ(RunGuarded([] { return 130; }, err), 130);
  EXPECT_EQ(err.str(), "");
}

TEST(RunGuardedTest, BadInputEscapingIsOneLineAndExitTwo) {
  std::stringstream err;
  EXPECT_EQ(RunGuarded([]() -> int { throw std::invalid_argument("stoi"); }, err), kExitUsage);
  EXPECT_EQ(err.str(), "ditbench: error: stoi\n");
}

TEST(RunGuardedTest, OtherFailuresAreOneLineAndExitOne) {
  std::stringstream err;
  EXPECT_EQ(RunGuarded([]() -> int { throw std::runtime_error("disk full\nat x"); }, err),
            kExitTrialsFailed);
  // The one OneLine rule (base/terminal_text.h): control characters, ESC included,
  // never reach the terminal.
  EXPECT_EQ(err.str(), "ditbench: error: disk full\\nat x\n");
  err.str("");
  EXPECT_EQ(RunGuarded([]() -> int { throw std::runtime_error("\x1b[2Jcleared"); }, err),
            kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: error: \\x1b[2Jcleared\n");
  err.str("");
  EXPECT_EQ(RunGuarded([]() -> int { throw 42; }, err), kExitTrialsFailed);
  EXPECT_EQ(err.str(), "ditbench: error: unknown exception\n");
}

}  // namespace
}  // namespace ditbench

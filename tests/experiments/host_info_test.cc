#include "experiments/host_info.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

TEST(HostInfoTest, CommandOutputLinesRunsAProgramWithItsArgumentsVerbatim) {
  EXPECT_EQ(CommandOutputLines({"printf", "a\\n\\nb; touch x\\n"}),
            (std::vector<std::string>{"a", "b; touch x"}));
}

TEST(HostInfoTest, APathWithQuotesAndSemicolonsRunsNothingElse) {
  test::TempDir dir;
  const auto folder = dir / "it's; touch pwned; '";
  std::filesystem::create_directories(folder);
  const auto program = folder / "describe";
  std::ofstream(program) << "#!/bin/sh\necho described\n";
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  // Through a shell, the quote would end the quoting and `touch pwned` would run instead.
  EXPECT_EQ(CommandOutputLines({program.string(), "--describe"}),
            std::vector<std::string>{"described"});
}

TEST(HostInfoTest, MissingProgramGivesNoLines) {
  EXPECT_TRUE(CommandOutputLines({"/nonexistent/ditbench-probe"}).empty());
  EXPECT_TRUE(CommandOutputLines({}).empty());
}

}  // namespace
}  // namespace ditbench

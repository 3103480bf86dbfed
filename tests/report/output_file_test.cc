#include "report/output_file.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::output_file_test {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OutputFileTest, ARegularFileIsReplacedWhole) {
  test::TempDir dir;
  const auto path = dir / "report.html";
  std::ofstream(path) << "old";
  WriteOutputFile(path, "new text");
  EXPECT_EQ(Read(path), "new text");
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html.tmp"));
}

TEST(OutputFileTest, AFullDeviceIsAnErrorNamingTheCause) {
  try {
    WriteOutputFile("/dev/full", "text");
    FAIL() << "wrote to /dev/full";
  } catch (const OutputWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot write '/dev/full': No space left on device"));
  }
  EXPECT_EQ(std::filesystem::status("/dev/full").type(), std::filesystem::file_type::character);
}

TEST(OutputFileTest, AMissingFolderIsAnErrorNamingTheCause) {
  test::TempDir dir;
  try {
    WriteOutputFile(dir / "no" / "report.html", "text");
    FAIL() << "wrote into a missing folder";
  } catch (const OutputWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("No such file or directory"));
  }
}

TEST(OutputFileTest, AStreamThatFailedIsReportedWithItsCause) {
  std::ofstream full("/dev/full");
  full << std::string(1 << 16, 'x');  // more than the buffer: the writes fail
  EXPECT_THROW(CheckOutput(full, "the plan"), OutputWriteError);
  std::stringstream fine;
  fine << "ok";
  EXPECT_NO_THROW(CheckOutput(fine, "the plan"));
}

}  // namespace
}  // namespace ditbench::output_file_test

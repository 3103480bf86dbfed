#include "base/atomic_file.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/untrusted_input.h"
#include "tests/support/temp_dir.h"

namespace ditbench::atomic_file_test {
namespace {

using ::testing::HasSubstr;

std::string Read(const std::filesystem::path& path) { return ReadRegularFile(path, 1024); }

TEST(AtomicFileTest, ReplacesTheFileWholeAndLeavesNoTemporary) {
  test::TempDir dir;
  const auto path = dir / "trial.json";
  std::ofstream(path) << "old, longer than the new text";
  for (const bool durable : {true, false}) {
    WriteFileAtomically(path, durable ? "durable" : "not synced", durable);
    EXPECT_EQ(Read(path), durable ? "durable" : "not synced");
    EXPECT_FALSE(std::filesystem::exists(dir / "trial.json.tmp"));
  }
}

// A run folder is shared with the ranks: a link planted at the temporary's name made the
// coordinator write through it, over the link's target.
TEST(AtomicFileTest, ALinkPlantedAtTheTemporaryNameIsNotWrittenThrough) {
  test::TempDir dir;
  std::ofstream(dir / "victim.txt") << "keep me";
  std::filesystem::create_symlink(dir / "victim.txt", dir / "trial.json.tmp");
  WriteFileAtomically(dir / "trial.json", "{}");
  EXPECT_EQ(Read(dir / "victim.txt"), "keep me");
  EXPECT_EQ(Read(dir / "trial.json"), "{}");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dir / "trial.json.tmp")));
}

TEST(AtomicFileTest, AMissingFolderIsAnErrorNamingTheFileAndTheCause) {
  test::TempDir dir;
  const auto path = dir / "no" / "rank0.json";
  try {
    WriteFileAtomically(path, "text");
    FAIL() << "wrote into a missing folder";
  } catch (const FileWriteError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write '" + path.string() + "': No such file or directory");
  }
}

// A rename that fails (here: a folder stands where the file goes) used to leave "<path>.tmp"
// behind in the worker contract's copy; the old target and the folder stay as they were.
TEST(AtomicFileTest, AFailedRenameRemovesTheTemporaryFile) {
  test::TempDir dir;
  const auto path = dir / "outcome.json";
  std::filesystem::create_directory(path);
  std::ofstream(path / "kept") << "x";
  EXPECT_THROW(WriteFileAtomically(path, "text"), FileWriteError);
  EXPECT_FALSE(std::filesystem::exists(dir / "outcome.json.tmp"));
  EXPECT_TRUE(std::filesystem::is_directory(path));
  EXPECT_EQ(Read(path / "kept"), "x");
}

TEST(AtomicFileTest, AFullDeviceWrittenInPlaceIsAnErrorNamingTheCause) {
  try {
    WriteIntoExistingFile("/dev/full", "text");
    FAIL() << "wrote to /dev/full";
  } catch (const FileWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot write '/dev/full': No space left on device"));
  }
}

}  // namespace
}  // namespace ditbench::atomic_file_test

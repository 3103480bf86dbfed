#include "base/run_folder_file.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::run_folder_file_test {
namespace {

// A run folder `run/` beside a file `secret.txt` that must not leak out of it.
class RunFolderFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directory(Run());
    std::ofstream(dir_ / "secret.txt") << "the secret\n";
  }
  std::filesystem::path Run() const { return dir_ / "run"; }

  // The message ReadRunFolderFile throws for `name` in the run folder, or "" when it reads it.
  std::string Refusal(const std::filesystem::path& name, std::uint64_t max_bytes = 1024) {
    try {
      ReadRunFolderFile(Run(), name, max_bytes);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  test::TempDir dir_;
};

TEST_F(RunFolderFileTest, ReadsAFileInTheFolderAndInAFolderBelowIt) {
  std::ofstream(Run() / "rank0.log") << "hello";
  std::filesystem::create_directory(Run() / "srun");
  std::ofstream(Run() / "srun" / "rank0.log") << "below";
  EXPECT_EQ(ReadRunFolderFile(Run(), "rank0.log", 5), "hello");
  EXPECT_EQ(ReadRunFolderFile(Run() / "rank0.log", 5), "hello");
  EXPECT_EQ(ReadRunFolderFile(Run(), "srun/rank0.log", 5), "below");
}

TEST_F(RunFolderFileTest, ASymlinkPointingOutsideIsRefusedNotFollowed) {
  std::filesystem::create_symlink(dir_ / "secret.txt", Run() / "note.txt");
  const std::string refusal = Refusal("note.txt");
  EXPECT_NE(refusal.find("run/note.txt: is a symbolic link; expected a regular file in the "
                         "run folder"),
            std::string::npos)
      << refusal;
  EXPECT_EQ(refusal.find("the secret"), std::string::npos);
}

// A link to a file inside the folder is refused too: no link is followed at all.
TEST_F(RunFolderFileTest, ASymlinkInsideTheFolderIsRefusedToo) {
  std::ofstream(Run() / "real.txt") << "x";
  std::filesystem::create_symlink("real.txt", Run() / "alias.txt");
  EXPECT_NE(Refusal("alias.txt").find("is a symbolic link"), std::string::npos);
}

TEST_F(RunFolderFileTest, AFolderLinkOnTheWayIsRefused) {
  std::filesystem::create_directory_symlink(dir_.path(), Run() / "up");
  EXPECT_NE(Refusal("up/secret.txt").find("is a symbolic link"), std::string::npos);
  EXPECT_NE(Refusal("../secret.txt").find("no '.' or '..'"), std::string::npos);
  EXPECT_NE(Refusal(dir_ / "secret.txt").find("expected a file name inside the run folder"),
            std::string::npos);
}

TEST_F(RunFolderFileTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((Run() / "fifo").c_str(), 0644), 0);
  EXPECT_NE(Refusal("fifo").find("run/fifo: is a FIFO; expected a regular file"),
            std::string::npos);
}

TEST_F(RunFolderFileTest, AnOversizedFileIsRefusedBeforeItIsRead) {
  std::ofstream(Run() / "big") << std::string(2000, 'x');
  EXPECT_NE(Refusal("big", 1999).find("run/big: is 2000 bytes; expected at most 1999"),
            std::string::npos);
  EXPECT_EQ(Refusal("big", 2000), "");
}

TEST_F(RunFolderFileTest, ANoteIsItsFirstLine) {
  std::ofstream(Run() / "note.txt") << "the PNG encoder failed\r\nsecond line\n";
  EXPECT_EQ(ReadRunFolderNote(Run(), "note.txt"), "the PNG encoder failed");
  EXPECT_EQ(ReadRunFolderNote(Run(), "absent.txt"), "");
}

TEST_F(RunFolderFileTest, ANoteThatIsALinkAFifoOrHugeShowsNothingOrItsStart) {
  std::filesystem::create_symlink(dir_ / "secret.txt", Run() / "link.txt");
  EXPECT_EQ(ReadRunFolderNote(Run(), "link.txt"), "");
  ASSERT_EQ(::mkfifo((Run() / "fifo.txt").c_str(), 0644), 0);
  EXPECT_EQ(ReadRunFolderNote(Run(), "fifo.txt"), "");  // returns at once: never blocks
  std::ofstream(Run() / "huge.txt") << std::string(10 * kMaxRunFolderNoteBytes, 'y');
  EXPECT_EQ(ReadRunFolderNote(Run(), "huge.txt"), std::string(kMaxRunFolderNoteBytes, 'y'));
}

}  // namespace
}  // namespace ditbench::run_folder_file_test

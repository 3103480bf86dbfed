#include "runner/run_folder.h"

#include <sys/stat.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::run_folder_test {
namespace {

using ::testing::HasSubstr;

// The owner file was read by its first line: a database path holding a newline made the
// second run refuse the folder it had claimed itself.
TEST(RunFolderTest, ADatabasePathWithANewlineClaimsItsFolderAgain) {
  test::TempDir dir;
  const auto db = dir / "night\nly.db";
  const auto root = DefaultRunRoot(db);
  EXPECT_EQ(ClaimRunRoot(root, db), "");
  EXPECT_EQ(ClaimRunRoot(root, db), "");
  EXPECT_THAT(ClaimRunRoot(root, dir / "other.db"), HasSubstr("holds the trials of another"));
}

TEST(RunFolderTest, AnOwnerFileThatIsAFifoIsRefusedWithoutBlocking) {
  test::TempDir dir;
  const auto root = dir / "results.runs";
  std::filesystem::create_directories(root);
  ASSERT_EQ(::mkfifo((root / ".ditbench-db").c_str(), 0644), 0);
  EXPECT_THAT(ClaimRunRoot(root, dir / "results.db"),
              HasSubstr(".ditbench-db: is a FIFO; expected a regular file"));
}

TEST(RunFolderTest, AnOwnerFileThatLinksElsewhereIsRefusedNotFollowed) {
  test::TempDir dir;
  const auto root = dir / "results.runs";
  std::filesystem::create_directories(root);
  std::ofstream(dir / "claim") << std::filesystem::weakly_canonical(dir / "results.db").string()
                               << "\n";
  std::filesystem::create_symlink(dir / "claim", root / ".ditbench-db");
  EXPECT_THAT(ClaimRunRoot(root, dir / "results.db"),
              HasSubstr(".ditbench-db: is a symbolic link"));
}

}  // namespace
}  // namespace ditbench::run_folder_test

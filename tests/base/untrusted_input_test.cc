#include "base/untrusted_input.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

class RegularFileTest : public ::testing::Test {
 protected:
  // The message ReadRegularFile throws for `path`, or "" when it reads the file.
  std::string Refusal(const std::filesystem::path& path, std::uint64_t max_bytes = 1024) {
    try {
      ReadRegularFile(path, max_bytes);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  test::TempDir dir_;
};

TEST_F(RegularFileTest, ReadsAWholeFileAndPartsOfIt) {
  std::ofstream(dir_ / "a.txt") << "hello world";
  EXPECT_EQ(ReadRegularFile(dir_ / "a.txt", 11), "hello world");
  const RegularFile file = OpenRegularFile(dir_ / "a.txt", 11);
  EXPECT_EQ(file.size, 11u);
  EXPECT_EQ(ReadRegularFileAt(file, dir_ / "a.txt", 6, 100), "world");  // stops at the end
  EXPECT_EQ(ReadRegularFileAt(file, dir_ / "a.txt", 20, 5), "");
}

// A FIFO with no writer would block an ordinary open for ever; it is refused at once.
TEST_F(RegularFileTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  const std::string refusal = Refusal(dir_ / "fifo");
  EXPECT_NE(refusal.find("/fifo: is a FIFO; expected a regular file"), std::string::npos)
      << refusal;
}

TEST_F(RegularFileTest, DirectoryDeviceMissingAndTooLargeAreRefusedNamingThePath) {
  std::filesystem::create_directory(dir_ / "folder");
  EXPECT_NE(Refusal(dir_ / "folder").find("folder: is a directory"), std::string::npos);
  EXPECT_NE(Refusal("/dev/zero").find("/dev/zero: is a character device"), std::string::npos);
  EXPECT_NE(Refusal(dir_ / "absent").find("absent: cannot read: No such file"),
            std::string::npos);
  std::ofstream(dir_ / "big") << std::string(2000, 'x');
  EXPECT_NE(Refusal(dir_ / "big", 1999).find("big: is 2000 bytes; expected at most 1999"),
            std::string::npos);
  EXPECT_EQ(Refusal(dir_ / "big", 2000), "");
}

TEST_F(RegularFileTest, UniqueFdClosesOnceAndMoves) {
  std::ofstream(dir_ / "a.txt") << "x";
  RegularFile file = OpenRegularFile(dir_ / "a.txt", 1);
  const int fd = file.fd.get();
  UniqueFd moved = std::move(file.fd);
  EXPECT_EQ(file.fd.get(), -1);
  EXPECT_EQ(moved.get(), fd);
  { UniqueFd gone = std::move(moved); }
  struct stat st {};
  EXPECT_NE(::fstat(fd, &st), 0);  // closed by `gone`
}

// The message of f()'s std::runtime_error, or "accepted".
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(BoundedJsonTest, UpToTheDepthIsParsedOneDeeperIsRefused) {
  // Depth 3: an object holding an array holding an object.
  EXPECT_EQ(ParseBoundedJson(R"({"a": [{"b": 1}]})", 3, "f")["a"][0]["b"], 1);
  EXPECT_EQ(ErrorOf([] { ParseBoundedJson(R"({"a": [{"b": []}]})", 3, "f"); }),
            "f: 'a' is nested more than 3 levels deep");
  EXPECT_EQ(ErrorOf([] { ParseBoundedJson("[[[[]]]]", 3, "f"); }),
            "f: JSON nested more than 3 levels deep");
}

// 100,000 levels: nlohmann's copy and dump would recurse once per level and overflow the stack.
TEST(BoundedJsonTest, DeepJsonIsRefusedBeforeItIsBuilt) {
  const std::string deep = R"({"environment": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  EXPECT_EQ(ErrorOf([&] { ParseBoundedJson(deep, 32, "rank0.json"); }),
            "rank0.json: 'environment' is nested more than 32 levels deep");
}

TEST(BoundedJsonTest, NotJsonNamesTheSource) {
  EXPECT_NE(ErrorOf([] { ParseBoundedJson("{\"a\": ", 8, "config.json"); })
                .find("config.json: not valid JSON: "),
            std::string::npos);
}

}  // namespace
}  // namespace ditbench

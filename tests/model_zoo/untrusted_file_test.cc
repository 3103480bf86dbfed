#include "model_zoo/untrusted_file.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(UntrustedFileTest, ReadsARegularFile) {
  test::TempDir dir;
  std::ofstream(dir / "a.json") << R"({"x": [1, 2]})";
  EXPECT_EQ(ReadRegularFile(dir / "a.json", 100), R"({"x": [1, 2]})");
}

// Opening a FIFO for reading waits for a writer: the reader must refuse it without opening it
// in blocking mode (this test would hang, not fail, if it did).
TEST(UntrustedFileTest, FifoIsRefusedWithoutWaiting) {
  test::TempDir dir;
  const auto fifo = dir / "rank0.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile(fifo, 100); }),
            fifo.string() + ": is a FIFO, expected a regular file");
}

TEST(UntrustedFileTest, FoldersAndDevicesAreRefused) {
  test::TempDir dir;
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile(dir.path(), 100); }),
            dir.path().string() + ": is a folder, expected a regular file");
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile("/dev/zero", 100); }),
            "/dev/zero: is a character device, expected a regular file");
}

TEST(UntrustedFileTest, LargerThanTheCapIsRefusedBeforeReading) {
  test::TempDir dir;
  std::ofstream(dir / "big") << std::string(3 << 20, 'x');
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile(dir / "big", 1 << 20); }),
            (dir / "big").string() + ": 3.0 MB, more than the 1.0 MB expected");
}

TEST(UntrustedFileTest, MissingFileNamesTheError) {
  test::TempDir dir;
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile(dir / "none", 10); }),
            (dir / "none").string() + ": cannot open: No such file or directory");
}

TEST(UntrustedFileTest, JsonUpToTheDepthIsParsedOneDeeperIsRefused) {
  // Depth 3: an object holding an array holding an object.
  EXPECT_EQ(ParseBoundedJson(R"({"a": [{"b": 1}]})", 3, "f")["a"][0]["b"], 1);
  EXPECT_EQ(ErrorOf([] { ParseBoundedJson(R"({"a": [{"b": []}]})", 3, "f"); }),
            "f: nested deeper than 3 levels");
}

// 100,000 levels: nlohmann's copy and dump would recurse once per level and overflow the stack.
TEST(UntrustedFileTest, DeepJsonIsRefusedBeforeItIsBuilt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(ErrorOf([&] { ParseBoundedJson(deep, 64, "rank0.json"); }),
            "rank0.json: nested deeper than 64 levels");
}

TEST(UntrustedFileTest, NotJsonNamesTheSource) {
  EXPECT_NE(ErrorOf([] { ParseBoundedJson("{\"a\": ", 8, "config.json"); })
                .find("config.json: not JSON: "),
            std::string::npos);
}

}  // namespace
}  // namespace ditbench

#include "base/untrusted_input.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.h"

namespace ditbench::untrusted_input_test {
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

// An array of N empty objects: N + 1 values, 3 bytes of text each.
std::string EmptyObjects(const std::string& key, int n) {
  std::string text = "{\"" + key + "\": [";
  for (int i = 0; i < n; ++i) text += i ? ",{}" : "{}";
  return text + "], \"kept\": 7}";
}

// The shape that hung ingest for hours with nlohmann's callback parser (it rescans a container
// on every closing bracket): read once, in work counted per value, and not built at all when
// the field is not one the reader keeps.
TEST(BoundedJsonTest, AMillionValuesInAFieldNotKeptAreCountedAndDroppedUnbuilt) {
  JsonLimits limits;
  limits.max_values = 2'000'000;
  limits.keep_top_level_keys = {"kept"};
  JsonReadStats stats;
  const nlohmann::json j =
      ParseBoundedJson(EmptyObjects("unknown", 1'000'000), limits, "r", &stats);
  EXPECT_EQ(j, nlohmann::json({{"kept", 7}}));
  EXPECT_EQ(stats.values, 1'000'003u);  // the top object, the array, its objects, 7
  EXPECT_EQ(stats.dropped, 1'000'001u);
  EXPECT_LT(stats.built_bytes, 1000u);
}

TEST(BoundedJsonTest, TheCountOfValuesIsCappedAsItIsReadNamingTheField) {
  JsonLimits limits;
  limits.max_values = 1000;
  JsonReadStats stats;
  EXPECT_EQ(ErrorOf([&] { ParseBoundedJson(EmptyObjects("samples", 5000), limits, "r", &stats); }),
            "r: 'samples' holds more than 1000 JSON values; expected at most 1000");
  EXPECT_EQ(stats.values, 1001u);         // stopped at the first value beyond the cap
  limits.keep_top_level_keys = {"kept"};  // dropped values count too
  EXPECT_NE(ErrorOf([&] { ParseBoundedJson(EmptyObjects("other", 5000), limits, "r"); }),
            "accepted");
}

// What is built is capped per byte of text: three bytes of "{}," would become about a hundred
// bytes of objects, so a kept field of them is refused before its memory is taken.
TEST(BoundedJsonTest, MemoryBuiltIsCappedPerByteOfText) {
  JsonLimits limits;
  limits.max_values = 10'000'000;
  JsonReadStats stats;
  const std::string error =
      ErrorOf([&] { ParseBoundedJson(EmptyObjects("samples", 1'000'000), limits, "r", &stats); });
  EXPECT_NE(error.find("r: 'samples' would take more than"), std::string::npos) << error;
  EXPECT_LE(stats.built_bytes, kJsonBytesPerTextByte * 3'000'020 + (1 << 20) + 200);
  // Ordinary documents are far inside it: numbers, strings, objects of a few members.
  std::string samples = "{\"samples\": [";
  for (int i = 0; i < 10000; ++i)
    samples += fmt::format(
        "{}{{\"iteration\": {}, \"stage\": \"denoise\", \"ms\": 12.5, "
        "\"warmup\": false}}",
        i ? "," : "", i);
  samples += "]}";
  EXPECT_EQ(ParseBoundedJson(samples, limits, "r", &stats)["samples"].size(), 10000u);
  EXPECT_LT(stats.built_bytes, 10 * samples.size());
}

TEST(BoundedJsonTest, CancellationIsAskedEveryFixedNumberOfValuesAndEndsTheRead) {
  JsonLimits limits;
  limits.max_values = 10'000'000;
  int asked = 0;
  limits.cancelled = [&] { return ++asked == 3; };
  JsonReadStats stats;
  try {
    ParseBoundedJson(EmptyObjects("samples", 1'000'000), limits, "rank0.json", &stats);
    FAIL() << "not cancelled";
  } catch (const JsonReadCancelled& e) {
    EXPECT_EQ(std::string(e.what()), "rank0.json: reading was interrupted");
  }
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(stats.values, 3 * kJsonValuesBetweenChecks);
}

// Duplicate keys keep the last value, as nlohmann's own parser does; scalars of every kind.
TEST(BoundedJsonTest, BuildsTheSameDocumentAsNlohmannsParser) {
  const std::string text =
      R"({"a": [1, -2, 3.5, "x", true, null, {"b": []}], "a": {"c": {}}, "d": 18446744073709551615})";
  EXPECT_EQ(ParseBoundedJson(text, 8, "f"), nlohmann::json::parse(text));
  EXPECT_EQ(ParseBoundedJson("[]", 8, "f"), nlohmann::json::array());
  EXPECT_EQ(ParseBoundedJson("\"s\"", 8, "f"), "s");
}

}  // namespace
}  // namespace ditbench::untrusted_input_test

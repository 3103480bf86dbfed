#include "model_zoo/shapes/safetensors_header.h"

#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ditbench::safetensors_header_test {
namespace {

std::string ErrorOf(const std::string& header, std::uint64_t data_size) {
  try {
    ParseSafetensorsHeader(header, data_size, "w.safetensors");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SafetensorsHeaderTest, EntriesComeInNameOrderWithoutTheMetadata) {
  const auto entries = ParseSafetensorsHeader(
      R"({"__metadata__": {"format": "pt"},
          "b": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [16, 28]},
          "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
          "empty": {"dtype": "F16", "shape": [0, 5], "data_offsets": [28, 28]}})",
      28, "w.safetensors");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "a");
  EXPECT_EQ(entries[0].dtype, "F32");
  EXPECT_EQ(entries[1].name, "b");
  EXPECT_EQ(entries[1].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(entries[1].begin, 16u);
  EXPECT_EQ(entries[1].end, 28u);
  EXPECT_EQ(entries[2].name, "empty");
}

TEST(SafetensorsHeaderTest, EveryInconsistencyIsRefusedNamingTheTensor) {
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}})", 1),
            "w.safetensors: unsupported dtype 'F8'");
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 8),
            "w.safetensors: tensor 'a': shape needs 8 bytes, data_offsets give 4");
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 2),
            "w.safetensors: tensor 'a': data_offsets outside the 2 data bytes");
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 0]}})", 2),
            "w.safetensors: tensor 'a': negative dimension");
  // 2^32 x 2^32 x 4 bytes wraps to 0 in 64 bits: checked in 128.
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296],
                              "data_offsets": [0, 0]}})",
                    8),
            "w.safetensors: tensor 'a': shape needs 9 bytes, data_offsets give 0");
  EXPECT_EQ(ErrorOf(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                        "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})",
                    8),
            "w.safetensors: tensors 'a' and 'b': data_offsets overlap, expected disjoint ranges");
  EXPECT_NE(ErrorOf(R"({"a": {"shape": [1], "data_offsets": [0, 1]}})", 1)
                .find("w.safetensors: tensor 'a': "),
            std::string::npos);
  EXPECT_EQ(ErrorOf("[1]", 0), "w.safetensors: header is not a JSON object");
  EXPECT_EQ(ErrorOf(R"({"a": {"shape": [[[[1]]]]}})", 0),
            "w.safetensors: header: 'a' is nested more than 4 levels deep");
}

// 300,000 entries (the header that was still parsing after 200 s): read in one linear pass.
// Beyond the value cap a header is refused as it is read.
TEST(SafetensorsHeaderTest, AHeaderOfManyEntriesIsReadAndItsValuesAreCapped) {
  std::string header = "{";
  for (int i = 0; i < 300000; ++i)
    header += fmt::format(R"({}"t{}": {{"dtype": "U8", "shape": [1], "data_offsets": [{}, {}]}})",
                          i ? "," : "", i, i, i + 1);
  header += "}";
  EXPECT_EQ(ParseSafetensorsHeader(header, 300000, "w.safetensors").size(), 300000u);
  std::string many = "{\"__metadata__\": [";
  for (std::uint64_t i = 0; i <= kMaxSafetensorsHeaderValues; ++i) many += i ? ",0" : "0";
  many += "]}";
  EXPECT_EQ(ErrorOf(many, 0), fmt::format("w.safetensors: header: '__metadata__' holds more than "
                                          "{0} JSON values; expected at most {0}",
                                          kMaxSafetensorsHeaderValues));
}

}  // namespace
}  // namespace ditbench::safetensors_header_test

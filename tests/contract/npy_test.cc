#include "contract/npy.h"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::npy_test {
namespace {

class NpyTest : public ::testing::Test {
 protected:
  // A version-1 .npy file with `header` and `data` bytes; `header_size` overrides the length
  // field (version 2's 4-byte one when it does not fit in 2 bytes).
  std::filesystem::path Write(const std::string& header, const std::string& data = "",
                              std::uint64_t header_size = 0) {
    if (header_size == 0) header_size = header.size();
    std::string bytes = header_size > 0xffff ? std::string("\x93NUMPY\x02\x00", 8)
                                             : std::string("\x93NUMPY\x01\x00", 8);
    for (int i = 0; i < (header_size > 0xffff ? 4 : 2); ++i)
      bytes += static_cast<char>((header_size >> (8 * i)) & 0xff);
    const auto path = dir_ / "out.npy";
    std::ofstream(path, std::ios::binary) << bytes << header << data;
    return path;
  }
  std::string Refusal(const std::filesystem::path& path) {
    try {
      ReadNpy(path);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  static std::string Header(const std::string& shape) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  }
  test::TempDir dir_;
};

TEST_F(NpyTest, ReadsTheShapesNumpyWrites) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const std::string data(reinterpret_cast<const char*>(values), sizeof values);
  EXPECT_EQ(ReadNpy(Write(Header("6,"), data)).shape, (std::vector<std::int64_t>{6}));
  EXPECT_EQ(ReadNpy(Write(Header("2, 3"), data)).data[5], 6.0f);
  EXPECT_EQ(ReadNpy(Write(Header(""), data.substr(0, 4))).data.size(), 1u);  // a scalar
  EXPECT_EQ(ReadNpy(Write(Header("0, 3"))).data.size(), 0u);
}

// A 64-byte file may claim 500M floats: the claim is checked against the file's size first, so
// nothing is allocated for it (before, 1.97 GB was).
TEST_F(NpyTest, AShapeTheFileDoesNotHoldIsRefusedBeforeAllocating) {
  EXPECT_NE(Refusal(Write(Header("500000000,"))).find(
                "out.npy: the header's shape (500000000) does not match the 0 bytes"),
            std::string::npos);
  EXPECT_NE(Refusal(Write(Header("1000000, 1000000"))).find("shape (1000000, 1000000)"),
            std::string::npos);
  // a product that overflows 64 bits
  EXPECT_NE(Refusal(Write(Header("4294967296, 4294967296, 16"))).find("does not match"),
            std::string::npos);
  EXPECT_NE(Refusal(Write(Header("2,"), std::string(12, '\0'))).find("the 12 bytes"),
            std::string::npos);  // more data than the shape: refused too
  EXPECT_NE(Refusal(Write(Header("-2,"))).find("'-2' is not a non-negative integer"),
            std::string::npos);
}

TEST_F(NpyTest, AHugeHeaderLengthIsRefusedBeforeAllocating) {
  EXPECT_NE(Refusal(Write(Header("1,"), "", 0xFFFFFFFF))
                .find("the .npy header length is 4294967295 bytes; expected at most 65536"),
            std::string::npos);
  EXPECT_NE(Refusal(Write(Header("1,"), "", 0xFFFF)).find("truncated .npy header"),
            std::string::npos);
}

TEST_F(NpyTest, AFifoOrAnOversizedFileIsRefused) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.npy").c_str(), 0644), 0);
  EXPECT_NE(Refusal(dir_ / "fifo.npy").find("is a FIFO"), std::string::npos);
  const auto big = Write(Header("1,"));
  std::filesystem::resize_file(big, kMaxNpyFileBytes + 1);  // sparse: no disk used
  EXPECT_NE(Refusal(big).find(fmt::format("expected at most {}", kMaxNpyFileBytes)),
            std::string::npos)
      << Refusal(big);
}

}  // namespace
}  // namespace ditbench::npy_test

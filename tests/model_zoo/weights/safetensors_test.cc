#include "model_zoo/weights/safetensors.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <sys/stat.h>

#include <gtest/gtest.h>

namespace ditbench::safetensors_test {
namespace {

// A scratch folder removed with POSIX calls: in a binary linked with libtorch,
// std::filesystem::remove_all resolves to libtorch's copy and crashes (so no test::TempDir here).
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/tmp/ditbench-safetensors-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    for (const char* name : {"x.safetensors", "y.safetensors", "good.safetensors",
                             "bad.safetensors", "fifo.safetensors"})
      ::unlink((path_ / name).c_str());
    ::rmdir(path_.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void WriteBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A file of `header` followed by `data_bytes` zero bytes.
std::string FileWithHeader(const std::string& header, size_t data_bytes) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + std::string(data_bytes, '\0');
}

// The message of ReadSafetensors(path)'s error, or "accepted".
std::string ReadError(const std::filesystem::path& path) {
  try {
    ReadSafetensors(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

// A file laid out by hand from the format's definition: the reader is pinned to the format,
// not only to the writer.
TEST(SafetensorsTest, ReadsAHandWrittenFile) {
  ScratchDir dir;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header;
  const float a[2] = {1.5f, -2.0f};
  bytes.append(reinterpret_cast<const char*>(a), 8);
  bytes += std::string("\x80\x3f", 2);  // bf16 1.0 = 0x3f80, little-endian
  WriteBytes(dir.path() / "x.safetensors", bytes);
  auto tensors = ReadSafetensors(dir.path() / "x.safetensors");
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors["a"].scalar_type(), torch::kFloat32);
  EXPECT_FLOAT_EQ(tensors["a"][1].item<float>(), -2.0f);
  EXPECT_EQ(tensors["b"].scalar_type(), torch::kBFloat16);
  EXPECT_FLOAT_EQ(tensors["b"][0].item<float>(), 1.0f);
}

TEST(SafetensorsTest, WrittenTensorsReadBackBitForBit) {
  ScratchDir dir;
  NamedTensors out = {{"hidden_states", torch::randn({2, 3, 4})},
                      {"timestep", torch::tensor({999}, torch::kInt64)},
                      {"half", torch::randn({5}).to(torch::kBFloat16)},
                      {"strided", torch::randn({4, 6}).t()}};
  WriteSafetensors(dir.path() / "y.safetensors", out);
  auto in = ReadSafetensors(dir.path() / "y.safetensors");
  ASSERT_EQ(in.size(), out.size());
  for (const auto& [name, t] : out) EXPECT_TRUE(torch::equal(in.at(name), t)) << name;
}

TEST(SafetensorsTest, DamagedFilesAreRefusedWithTheirName) {
  ScratchDir dir;
  NamedTensors out = {{"w", torch::randn({16})}};
  const auto good = dir.path() / "good.safetensors";
  WriteSafetensors(good, out);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto refused = [&](const std::string& content, const std::string& expected) {
    const auto bad = dir.path() / "bad.safetensors";
    WriteBytes(bad, content);
    try {
      ReadSafetensors(bad);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.safetensors"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused(bytes.substr(0, 5), "truncated");
  refused(bytes.substr(0, 20), "truncated");
  refused(bytes.substr(0, bytes.size() - 4), "data_offsets");
  std::string not_json = bytes;
  not_json[8] = '[';
  refused(not_json, "JSON");
  std::string dtype = bytes;
  dtype.replace(dtype.find("F32"), 3, "F99");
  refused(dtype, "unsupported dtype");
  EXPECT_THROW(ReadSafetensors(dir.path() / "missing.safetensors"), std::runtime_error);
}

// Hostile files (issue 19): each refused in one line naming the file, before anything large is
// allocated or anything waits.
TEST(SafetensorsTest, HostileFilesAreRefusedBeforeAllocating) {
  ScratchDir dir;
  const auto bad = dir.path() / "bad.safetensors";
  auto refused = [&](const std::string& content, const std::string& expected) {
    WriteBytes(bad, content);
    const std::string error = ReadError(bad);
    EXPECT_NE(error.find("bad.safetensors"), std::string::npos) << error;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  };
  // Two tensors over the same 8 bytes.
  refused(FileWithHeader(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
          "overlap");
  refused(FileWithHeader(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
          "overlap");
  // A shape whose byte count wraps round 64 bits to the 8 bytes its offsets give.
  refused(FileWithHeader(R"({"a":{"dtype":"F32","shape":[4611686018427387906],)"
                         R"("data_offsets":[0,8]}})", 8),
          "shape needs");
  // A header nested 100,000 deep: refused at the fifth level, not copied level by level.
  refused(FileWithHeader(std::string(100000, '[') + std::string(100000, ']'), 0), "nested");
  // A header length far beyond the format's cap.
  std::string huge(8, '\0');
  huge[5] = 0x10;  // 2^44 bytes
  refused(huge + "{}", "truncated");
  // A FIFO: refused at once; opening it for reading would wait for a writer for ever.
  const auto fifo = dir.path() / "fifo.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string error = ReadError(fifo);
  EXPECT_NE(error.find("is a FIFO; expected a regular file"), std::string::npos) << error;
}

// Tensors that only touch (one ends where the next begins) and empty tensors are fine.
TEST(SafetensorsTest, AdjacentAndEmptyTensorsAreNotOverlaps) {
  ScratchDir dir;
  const auto file = dir.path() / "x.safetensors";
  WriteBytes(file, FileWithHeader(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                  R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  EXPECT_EQ(ReadSafetensors(file).size(), 3u);
}

}  // namespace
}  // namespace ditbench::safetensors_test

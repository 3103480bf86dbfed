// Which files of a diffusers folder hold its weights: diffusers' from_pretrained rules (a
// variant's file, a sharded index, the default file), and an index as untrusted input.
#include "model_zoo/shapes/diffusers_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::diffusers_files_test {
namespace {

void Touch(const std::filesystem::path& path, const std::string& text = "") {
  std::ofstream(path) << text;
}

std::string ErrorOf(const std::filesystem::path& dir, const std::string& variant) {
  try {
    DiffusersWeightFiles(dir, variant);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(DiffusersFilesTest, TheDefaultFileOrTheVariantsFileAndNothingBesideIt) {
  test::TempDir dir;
  Touch(dir / "config.json", "{}");
  Touch(dir / "diffusion_pytorch_model.safetensors");
  Touch(dir / "diffusion_pytorch_model.fp16.safetensors");
  Touch(dir / "copy.safetensors");  // a stray file diffusers would not read either
  EXPECT_EQ(DiffusersWeightFiles(dir.path()), (std::vector<std::filesystem::path>{
                                           dir / "diffusion_pytorch_model.safetensors"}));
  EXPECT_EQ(DiffusersWeightFiles(dir.path(), "fp16"),
            (std::vector<std::filesystem::path>{dir / "diffusion_pytorch_model.fp16.safetensors"}));
  const std::string missing = ErrorOf(dir.path(), "bf16");
  EXPECT_NE(missing.find("no diffusion_pytorch_model.bf16.safetensors or "
                         "diffusion_pytorch_model.safetensors.index.bf16.json"),
            std::string::npos)
      << missing;
}

TEST(DiffusersFilesTest, AShardedIndexNamesItsFilesEachOnceAndComesFirst) {
  test::TempDir dir;
  Touch(dir / "diffusion_pytorch_model.safetensors");  // the index wins, as in diffusers
  Touch(dir / "diffusion_pytorch_model-00001-of-00002.safetensors");
  Touch(dir / "diffusion_pytorch_model-00002-of-00002.safetensors");
  Touch(dir / "diffusion_pytorch_model.safetensors.index.json",
        R"({"metadata": {"total_size": 8}, "weight_map": {
          "a.weight": "diffusion_pytorch_model-00002-of-00002.safetensors",
          "b.weight": "diffusion_pytorch_model-00001-of-00002.safetensors",
          "c.weight": "diffusion_pytorch_model-00002-of-00002.safetensors"}})");
  EXPECT_EQ(DiffusersWeightFiles(dir.path()),
            (std::vector<std::filesystem::path>{
                dir / "diffusion_pytorch_model-00001-of-00002.safetensors",
                dir / "diffusion_pytorch_model-00002-of-00002.safetensors"}));
  // A variant's index: diffusers inserts the variant before the last extension.
  Touch(dir / "diffusion_pytorch_model.safetensors.index.fp16.json",
        R"({"weight_map": {"a.weight": "diffusion_pytorch_model.fp16-00001-of-00001.safetensors"}})");
  Touch(dir / "diffusion_pytorch_model.fp16-00001-of-00001.safetensors");
  EXPECT_EQ(DiffusersWeightFiles(dir.path(), "fp16"),
            (std::vector<std::filesystem::path>{
                dir / "diffusion_pytorch_model.fp16-00001-of-00001.safetensors"}));
}

TEST(DiffusersFilesTest, AnIndexIsUntrustedInput) {
  test::TempDir dir;
  const auto index = dir / "diffusion_pytorch_model.safetensors.index.json";
  for (const char* text :
       {R"({"weight_map": {"a": "../outside.safetensors"}})", R"({"weight_map": {"a": 3}})",
        R"({"weight_map": {"a": "notes.txt"}})", R"({"weight_map": {}})", R"([1, 2])",
        "not json", R"({"weight_map": {"a": "missing.safetensors"}})"}) {
    SCOPED_TRACE(text);
    Touch(index, text);
    const std::string error = ErrorOf(dir.path(), "");
    EXPECT_NE(error.find(index.string()), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

// An index is read here, so one that is no regular file is refused without reading it (a FIFO
// would wait); a weights file is only named, and its reader checks what it is.
TEST(DiffusersFilesTest, AnIndexThatIsAFifoIsRefusedWithoutWaiting) {
  test::TempDir dir;
  const auto index = dir / "diffusion_pytorch_model.safetensors.index.json";
  ASSERT_EQ(::mkfifo(index.c_str(), 0600), 0);
  EXPECT_NE(ErrorOf(dir.path(), "").find("expected a regular file"), std::string::npos);
  ::unlink(index.c_str());
  ASSERT_EQ(::mkfifo((dir / "diffusion_pytorch_model.safetensors").c_str(), 0600), 0);
  EXPECT_EQ(DiffusersWeightFiles(dir.path()).size(), 1u);
}

TEST(DiffusersFilesTest, AMissingDefaultFileNamesTheVariantThatWouldLoad) {
  test::TempDir dir;
  Touch(dir / "config.json", "{}");
  Touch(dir / "diffusion_pytorch_model.fp16.safetensors");
  const std::string error = ErrorOf(dir.path(), "");
  EXPECT_NE(error.find("no diffusion_pytorch_model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("the folder has: diffusion_pytorch_model.fp16.safetensors"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("set weights_variant: fp16"), std::string::npos) << error;
  EXPECT_NE(ErrorOf(dir.path(), "../fp16").find("expected 1 to 32 letters"), std::string::npos);
  EXPECT_TRUE(IsValidWeightsVariant("fp16"));
  EXPECT_FALSE(IsValidWeightsVariant(""));
  EXPECT_FALSE(IsValidWeightsVariant("a/b"));
}

// A weight_map value nested a million levels deep (2 MB) is refused at the cap, while it is
// read: nothing serialises or copies it recursively. An index larger than its cap is refused
// from its size, before a byte is read (a sparse file of 1 GiB here).
TEST(DiffusersFilesTest, ADeepOrHugeIndexIsRefusedBeforeItIsBuilt) {
  test::TempDir dir;
  const auto index = dir / "diffusion_pytorch_model.safetensors.index.json";
  Touch(index, R"({"weight_map": {"a": )" + std::string(1'000'000, '[') +
                   std::string(1'000'000, ']') + "}}");
  EXPECT_EQ(ErrorOf(dir.path(), ""),
            index.string() + ": 'weight_map' is nested more than 3 levels deep");
  std::filesystem::resize_file(index, 1ull << 30);
  const std::string error = ErrorOf(dir.path(), "");
  EXPECT_NE(error.find(index.string() + ": is 1073741824 bytes; expected at most"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace ditbench::diffusers_files_test

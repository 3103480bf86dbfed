// The coordinator keeps a scope pipeline trial's decoded output as PNG in its run folder; read
// back with libpng, the pixels are the output's, clamped to [-1, 1] and mapped to 0..255.
#include "runner/output_image.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "contract/npy.h"
#include "contract/worker_contract.h"
#include "metrics/png_image.h"
#include "tests/support/temp_dir.h"

namespace ditbench::output_image_test {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(OutputImageTest, AnImageOutputBecomesOutputPngWithItsPixels) {
  test::TempDir dir;
  // [1, 3, 4, 8]: red is a ramp over x from below -1 to above 1, green over y, blue -1.
  const int h = 4, w = 8;
  std::vector<float> values;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        values.push_back(c == 0 ? -1.5f + 3.0f * x / (w - 1) : c == 1 ? -1.0f + 2.0f * y / (h - 1)
                                                                      : -1.0f);
  WriteNpy(dir.path() / kOutputFileName, {1, 3, h, w}, values.data());
  EXPECT_EQ(WriteOutputImages(dir.path()), std::vector<std::string>{"output.png"});
  const RgbImage png = DecodePng(ReadFile(dir.path() / "output.png"));
  ASSERT_EQ(png.width, w);
  ASSERT_EQ(png.height, h);
  auto at = [&](int y, int x, int c) { return png.pixels[(y * w + x) * 3 + c]; };
  EXPECT_EQ(at(0, 0, 0), 0);    // -1.5 clamped to -1
  EXPECT_EQ(at(0, 7, 0), 255);  // 1.5 clamped to 1
  EXPECT_EQ(at(2, 3, 0), ToLevel(-1.5f + 3.0f * 3 / 7));
  EXPECT_EQ(at(0, 5, 1), 0);
  EXPECT_EQ(at(3, 5, 1), 255);
  EXPECT_EQ(at(1, 1, 2), 0);
}

TEST(OutputImageTest, AVideoOutputBecomesItsFirstMiddleAndLastFrames) {
  test::TempDir dir;
  std::vector<float> values(3 * 9 * 2 * 2);
  for (std::size_t i = 0; i < values.size(); ++i)  // frame f of every channel: f / 4 - 1
    values[i] = static_cast<float>((i / 4) % 9) / 4.0f - 1.0f;
  WriteNpy(dir.path() / kOutputFileName, {1, 3, 9, 2, 2}, values.data());
  EXPECT_EQ(WriteOutputImages(dir.path()),
            (std::vector<std::string>{"output-frame0.png", "output-frame4.png",
                                      "output-frame8.png"}));
  EXPECT_EQ(DecodePng(ReadFile(dir.path() / "output-frame4.png")).pixels,
            std::vector<std::uint8_t>(12, 128));
  EXPECT_EQ(DecodePng(ReadFile(dir.path() / "output-frame8.png")).pixels,
            std::vector<std::uint8_t>(12, 255));
}

TEST(OutputImageTest, AnOutputThatIsNoImageLeavesTheReasonNotAPicture) {
  test::TempDir dir;
  KeepOutputImages(dir.path());  // no output.npy (a command workload): nothing at all
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  const std::vector<float> latent(8);
  WriteNpy(dir.path() / kOutputFileName, {2, 4}, latent.data());
  KeepOutputImages(dir.path());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "output.png"));
  EXPECT_NE(ReadFile(dir.path() / kOutputImageErrorName).find("is not a decoded image"),
            std::string::npos);
}

}  // namespace
}  // namespace ditbench::output_image_test

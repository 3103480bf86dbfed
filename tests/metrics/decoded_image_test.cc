#include "metrics/decoded_image.h"

#include <limits>

#include <gtest/gtest.h>

#include "metrics/png_image.h"

namespace ditbench::decoded_image_test {
namespace {

TEST(DecodedImageTest, ValuesAreClampedToTheVaeRangeAndMappedTo8Bits) {
  EXPECT_EQ(ToLevel(-1.0f), 0);
  EXPECT_EQ(ToLevel(1.0f), 255);
  EXPECT_EQ(ToLevel(0.0f), 128);  // 127.5 rounds away from zero
  EXPECT_EQ(ToLevel(-0.5f), 64);  // 63.75
  EXPECT_EQ(ToLevel(-7.0f), 0);
  EXPECT_EQ(ToLevel(3.0f), 255);
  EXPECT_EQ(ToLevel(std::numeric_limits<float>::quiet_NaN()), 0);
}

// [1, 3, 2, 3]: the red plane counts up, green is its negative, blue is constant.
NpyArray SmallImage() {
  NpyArray image{{1, 3, 2, 3}, {}};
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 6; ++p)
      image.data.push_back(c == 0 ? -1.0f + 0.4f * p : c == 1 ? 1.0f - 0.4f * p : 0.5f);
  return image;
}

TEST(DecodedImageTest, AnImageIsOnePictureOfItsFirstSampleChannelsInterleaved) {
  const std::vector<DecodedFrame> frames = DecodedFrames(SmallImage());
  ASSERT_EQ(frames.size(), 1u);
  const RgbImage& image = frames[0].image;
  EXPECT_EQ(image.width, 3);
  EXPECT_EQ(image.height, 2);
  ASSERT_EQ(image.pixels.size(), 18u);
  // Pixel (row 1, column 2) is element 5 of each plane.
  EXPECT_EQ(image.pixels[15], ToLevel(-1.0f + 0.4f * 5));
  EXPECT_EQ(image.pixels[16], ToLevel(1.0f - 0.4f * 5));
  EXPECT_EQ(image.pixels[17], ToLevel(0.5f));
}

TEST(DecodedImageTest, AVideoShowsItsFirstMiddleAndLastFrames) {
  // [1, 1, 5, 1, 1]: grey, frame f has the value f / 2 - 1.
  NpyArray video{{1, 1, 5, 1, 1}, {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f}};
  const std::vector<DecodedFrame> frames = DecodedFrames(video);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].frame, 0);
  EXPECT_EQ(frames[1].frame, 2);
  EXPECT_EQ(frames[2].frame, 4);
  EXPECT_EQ(frames[1].image.pixels, (std::vector<std::uint8_t>{128, 128, 128}));
  EXPECT_EQ(frames[2].image.pixels, (std::vector<std::uint8_t>{255, 255, 255}));
  // One frame is one picture, not three.
  EXPECT_EQ(DecodedFrames(NpyArray{{1, 3, 1, 1, 1}, {0, 0, 0}}).size(), 1u);
}

TEST(DecodedImageTest, OtherLayoutsAreRefusedNamingTheShape) {
  try {
    DecodedFrames(NpyArray{{1, 4, 2, 2}, std::vector<float>(16)});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "output of shape [1, 4, 2, 2] is not a decoded image: expected 3 channels (RGB) or "
              "1 (grey)");
  }
  EXPECT_THROW(DecodedFrames(NpyArray{{1, 4}, std::vector<float>(4)}), std::invalid_argument);
  EXPECT_THROW(DecodedFrames(NpyArray{{1, 3, 2, 2}, std::vector<float>(5)}),
               std::invalid_argument);
}

TEST(PngImageTest, APictureReadsBackFromItsPngPixelForPixel) {
  const RgbImage image = DecodedFrames(SmallImage()).at(0).image;
  const std::string png = EncodePng(image);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const RgbImage read = DecodePng(png);
  EXPECT_EQ(read.width, image.width);
  EXPECT_EQ(read.height, image.height);
  EXPECT_EQ(read.pixels, image.pixels);
}

TEST(PngImageTest, BytesThatAreNotAPngAreRefused) {
  EXPECT_THROW(DecodePng("not a png"), std::runtime_error);
  std::string cut = EncodePng(DecodedFrames(SmallImage()).at(0).image);
  cut.resize(cut.size() / 2);
  EXPECT_THROW(DecodePng(cut), std::runtime_error);
  EXPECT_THROW(EncodePng(RgbImage{}), std::runtime_error);
}

}  // namespace
}  // namespace ditbench::decoded_image_test

#include "metrics/image_quality.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace ditbench::image_quality_test {
namespace {

constexpr int kB = 2, kC = 3, kH = 24, kW = 20;

// The images of tests/metrics/image_quality_reference.py: every value exact in float32; the
// second is the first plus a patterned error, which pushes some values past 1 (clamped).
void Images(NpyArray& a, NpyArray& b, bool minus_one_to_one) {
  a.shape = b.shape = {kB, kC, kH, kW};
  a.data.clear();
  b.data.clear();
  for (int n = 0; n < kB; ++n)
    for (int c = 0; c < kC; ++c)
      for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) {
          const double v = ((x * 7 + y * 13 + c * 5 + n * 3) % 17) / 16.0;
          const double w = v + (((x * 3 + y * 5 + n) % 7) - 3) / 64.0;
          a.data.push_back(static_cast<float>(minus_one_to_one ? 2 * v - 1 : v));
          b.data.push_back(static_cast<float>(minus_one_to_one ? 2 * w - 1 : w));
        }
}

// Reference values: scikit-image 0.26.0 (numpy 2.4.6), peak_signal_noise_ratio and
// structural_similarity(gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
// data_range=R) averaged over the six planes, printed by image_quality_reference.py.
TEST(ImageQualityTest, MatchesScikitImageOnZeroToOneImages) {
  NpyArray a, b;
  Images(a, b, false);
  EXPECT_NEAR(Psnr(b, a, ImageRange::kZeroToOne), 30.381678602115919, 1e-9);
  EXPECT_NEAR(Ssim(b, a, ImageRange::kZeroToOne), 0.99507262852154754, 1e-12);
}

TEST(ImageQualityTest, MatchesScikitImageOnMinusOneToOneImages) {
  NpyArray a, b;
  Images(a, b, true);
  EXPECT_NEAR(Psnr(b, a, ImageRange::kMinusOneToOne), 30.381678602115919, 1e-9);
  EXPECT_NEAR(Ssim(b, a, ImageRange::kMinusOneToOne), 0.98814396240648861, 1e-12);
}

TEST(ImageQualityTest, EqualImagesHaveInfinitePsnrAndSsimOne) {
  NpyArray a, b;
  Images(a, b, false);
  EXPECT_EQ(Psnr(a, a, ImageRange::kZeroToOne), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(Ssim(a, a, ImageRange::kZeroToOne), 1.0);
}

TEST(ImageQualityTest, PsnrOfAUniformErrorIsExact) {
  // Every value off by 0.1 on [0, 1]: MSE 0.01, PSNR 10 log10(1 / 0.01) = 20 dB.
  NpyArray a{{1, 16, 16}, std::vector<float>(256, 0.25f)};
  NpyArray b{{1, 16, 16}, std::vector<float>(256, 0.25f + 0.1f)};
  EXPECT_NEAR(Psnr(a, b, ImageRange::kZeroToOne), 20.0, 1e-5);
}

TEST(ImageQualityTest, RefusesMismatchedShapesAndPlanesSmallerThanTheWindow) {
  NpyArray a{{1, 16, 16}, std::vector<float>(256)};
  NpyArray b{{1, 16, 8}, std::vector<float>(128)};
  try {
    Psnr(a, b, ImageRange::kZeroToOne);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "image shape [1, 16, 16] differs from the reference's [1, 16, 8]");
  }
  NpyArray small{{3, 10, 40}, std::vector<float>(1200)};
  try {
    Ssim(small, small, ImageRange::kZeroToOne);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "SSIM needs planes of at least 11x11 pixels, got 10x40");
  }
}

}  // namespace
}  // namespace ditbench::image_quality_test

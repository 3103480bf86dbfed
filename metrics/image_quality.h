// Output quality as a user sees it: PSNR and SSIM of a parallel trial's decoded image against
// the 1-rank trial's (scope `pipeline`; runner/output_error.h). Torch-free and pure.
//
// An image is a float32 array whose last two dimensions are height and width; every leading
// dimension (batch, channel, video frame) indexes a plane. Values are first clamped to the
// stated range (what a viewer shows: diffusers clamps a decoded image the same way), then
//  * PSNR = 10 log10(R^2 / MSE) over every element, R the range's width (+infinity when the
//    images are equal);
//  * SSIM (Wang et al. 2004) per plane with an 11x11 Gaussian window of sigma 1.5, K1 = 0.01,
//    K2 = 0.03, C1 = (K1 R)^2, C2 = (K2 R)^2, population (not sample) covariances, averaged
//    over the positions where the window lies inside the plane, then over the planes. This is
//    scikit-image's structural_similarity(gaussian_weights=True, sigma=1.5,
//    use_sample_covariance=False, data_range=R), averaged over channels.
#pragma once

#include "contract/npy.h"

namespace ditbench {

// The range of an image's values.
enum class ImageRange {
  kZeroToOne,      // [0, 1]: R = 1
  kMinusOneToOne,  // [-1, 1]: R = 2 (a VAE decoder's output)
};
double RangeWidth(ImageRange range);

inline constexpr int kSsimWindow = 11;
inline constexpr double kSsimSigma = 1.5;

// REQUIRES nothing: a shape mismatch, fewer than two dimensions or (SSIM) a plane smaller than
// the window throws std::invalid_argument naming the shapes.
double Psnr(const NpyArray& image, const NpyArray& reference, ImageRange range);
double Ssim(const NpyArray& image, const NpyArray& reference, ImageRange range);

}  // namespace ditbench

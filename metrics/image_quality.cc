#include "metrics/image_quality.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ditbench {
namespace {

void CheckShapes(const NpyArray& image, const NpyArray& reference) {
  if (image.shape != reference.shape)
    throw std::invalid_argument(fmt::format("image shape [{}] differs from the reference's [{}]",
                                            fmt::join(image.shape, ", "),
                                            fmt::join(reference.shape, ", ")));
  if (image.shape.size() < 2)
    throw std::invalid_argument(fmt::format(
        "an image needs height and width (two dimensions at least), got shape [{}]",
        fmt::join(image.shape, ", ")));
}

double Clamped(float value, ImageRange range) {
  const double low = range == ImageRange::kZeroToOne ? 0.0 : -1.0;
  return std::clamp(static_cast<double>(value), low, 1.0);
}

// The normalised 1-D Gaussian of the window; the 2-D window is its outer product.
std::array<double, kSsimWindow> GaussianTaps() {
  std::array<double, kSsimWindow> taps{};
  double sum = 0;
  for (int i = 0; i < kSsimWindow; ++i) {
    const double x = i - kSsimWindow / 2;
    taps[i] = std::exp(-x * x / (2 * kSsimSigma * kSsimSigma));
    sum += taps[i];
  }
  for (double& t : taps) t /= sum;
  return taps;
}

// `plane` (h x w, row-major) filtered by the window at every position where it fits:
// (h - 10) x (w - 10) values. Separable: rows, then columns.
std::vector<double> Filter(const std::vector<double>& plane, int h, int w) {
  static const std::array<double, kSsimWindow> taps = GaussianTaps();
  const int ow = w - kSsimWindow + 1, oh = h - kSsimWindow + 1;
  std::vector<double> rows(static_cast<std::size_t>(h) * ow);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < ow; ++x) {
      double s = 0;
      for (int k = 0; k < kSsimWindow; ++k) s += taps[k] * plane[std::size_t(y) * w + x + k];
      rows[std::size_t(y) * ow + x] = s;
    }
  std::vector<double> out(static_cast<std::size_t>(oh) * ow);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      double s = 0;
      for (int k = 0; k < kSsimWindow; ++k) s += taps[k] * rows[std::size_t(y + k) * ow + x];
      out[std::size_t(y) * ow + x] = s;
    }
  return out;
}

double PlaneSsim(const std::vector<double>& a, const std::vector<double>& b, int h, int w,
                 double range) {
  const std::size_t n = a.size();
  std::vector<double> aa(n), bb(n), ab(n);
  for (std::size_t i = 0; i < n; ++i) {
    aa[i] = a[i] * a[i];
    bb[i] = b[i] * b[i];
    ab[i] = a[i] * b[i];
  }
  const std::vector<double> ua = Filter(a, h, w), ub = Filter(b, h, w);
  const std::vector<double> uaa = Filter(aa, h, w), ubb = Filter(bb, h, w), uab = Filter(ab, h, w);
  const double c1 = (0.01 * range) * (0.01 * range), c2 = (0.03 * range) * (0.03 * range);
  double sum = 0;
  for (std::size_t i = 0; i < ua.size(); ++i) {
    const double va = uaa[i] - ua[i] * ua[i], vb = ubb[i] - ub[i] * ub[i];
    const double cov = uab[i] - ua[i] * ub[i];
    sum += ((2 * ua[i] * ub[i] + c1) * (2 * cov + c2)) /
           ((ua[i] * ua[i] + ub[i] * ub[i] + c1) * (va + vb + c2));
  }
  return sum / static_cast<double>(ua.size());
}

}  // namespace

double RangeWidth(ImageRange range) { return range == ImageRange::kZeroToOne ? 1.0 : 2.0; }

double Psnr(const NpyArray& image, const NpyArray& reference, ImageRange range) {
  CheckShapes(image, reference);
  double squared = 0;
  for (std::size_t i = 0; i < image.data.size(); ++i) {
    const double d = Clamped(image.data[i], range) - Clamped(reference.data[i], range);
    squared += d * d;
  }
  const double mse = squared / static_cast<double>(image.data.size());
  if (mse == 0) return std::numeric_limits<double>::infinity();
  const double r = RangeWidth(range);
  return 10 * std::log10(r * r / mse);
}

double Ssim(const NpyArray& image, const NpyArray& reference, ImageRange range) {
  CheckShapes(image, reference);
  const std::int64_t h = image.shape[image.shape.size() - 2];
  const std::int64_t w = image.shape.back();
  if (h < kSsimWindow || w < kSsimWindow)
    throw std::invalid_argument(fmt::format(
        "SSIM needs planes of at least {0}x{0} pixels, got {1}x{2}", kSsimWindow, h, w));
  const std::size_t plane = static_cast<std::size_t>(h * w);
  const std::size_t planes = image.data.size() / plane;
  double sum = 0;
  std::vector<double> a(plane), b(plane);
  for (std::size_t p = 0; p < planes; ++p) {
    for (std::size_t i = 0; i < plane; ++i) {
      a[i] = Clamped(image.data[p * plane + i], range);
      b[i] = Clamped(reference.data[p * plane + i], range);
    }
    sum += PlaneSsim(a, b, static_cast<int>(h), static_cast<int>(w), RangeWidth(range));
  }
  return sum / static_cast<double>(planes);
}

}  // namespace ditbench

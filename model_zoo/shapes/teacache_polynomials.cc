#include "model_zoo/shapes/teacache_polynomials.h"

#include <array>
#include <string_view>

namespace ditbench {

namespace {

using Coefficients = std::array<double, 5>;

// Figures from the TeaCache repository (ali-vilab/TeaCache): TeaCache4FLUX/teacache_flux.py,
// TeaCache4HunyuanVideo/teacache_sample_video.py and TeaCache4Wan2.1/teacache_generate.py (the
// polynomials without use_ret_steps, which watch Wan's timestep embedding).
constexpr Coefficients kFlux = {4.98651651e+02, -2.83781631e+02, 5.58554382e+01, -3.82021401e+00,
                                2.64230861e-01};
constexpr Coefficients kHunyuanVideo = {7.33226126e+02, -4.01131952e+02, 6.75869174e+01,
                                        -3.14987800e+00, 9.61237896e-02};
constexpr Coefficients kWan1_3b = {2.39676752e+03, -1.31110545e+03, 2.01331979e+02, -8.29855975e+00,
                                   1.37887774e-01};
constexpr Coefficients kWan14b = {-5784.54975374, 5449.50911966, -1811.16591783, 256.27178429,
                                  -13.02252404};

struct Published {
  std::string_view model;
  const Coefficients& coefficients;
  std::string_view source;
};

constexpr Published kPublished[] = {
    {"flux-dev", kFlux, "TeaCache4FLUX (FLUX.1-dev)"},
    {"flux-dev-tiny", kFlux, "TeaCache4FLUX (FLUX.1-dev), borrowed by the tiny model"},
    {"hunyuanvideo", kHunyuanVideo, "TeaCache4HunyuanVideo"},
    {"hunyuanvideo-tiny", kHunyuanVideo, "TeaCache4HunyuanVideo, borrowed by the tiny model"},
    {"wan2.1-t2v-1.3b", kWan1_3b, "TeaCache4Wan2.1 (T2V-1.3B)"},
    {"wan2.1-t2v-tiny", kWan1_3b, "TeaCache4Wan2.1 (T2V-1.3B), borrowed by the tiny model"},
    {"wan2.1-t2v-14b", kWan14b, "TeaCache4Wan2.1 (T2V-14B)"},
};

}  // namespace

std::optional<TeaCachePolynomial> PublishedTeaCachePolynomial(const std::string& model_name) {
  for (const Published& p : kPublished)
    if (p.model == model_name)
      return TeaCachePolynomial{{p.coefficients.begin(), p.coefficients.end()},
                                std::string(p.source)};
  return std::nullopt;
}

double EvaluatePolynomial(const std::vector<double>& coefficients, double x) {
  double value = 0;
  for (const double c : coefficients) value = value * x + c;
  return value;
}

}  // namespace ditbench

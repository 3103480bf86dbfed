#include "model_zoo/shapes/teacache_polynomials.h"

#include <array>
#include <string_view>

namespace ditbench {

namespace {

struct Published {
  std::string_view model;
  std::array<double, 5> coefficients;
  std::string_view source;
};

// Figures from the TeaCache repository (ali-vilab/TeaCache): TeaCache4FLUX/teacache_flux.py,
// TeaCache4HunyuanVideo/teacache_sample_video.py and TeaCache4Wan2.1/teacache_generate.py (the
// polynomials without use_ret_steps, which watch Wan's timestep embedding).
constexpr Published kPublished[] = {
    {"flux-dev",
     {4.98651651e+02, -2.83781631e+02, 5.58554382e+01, -3.82021401e+00, 2.64230861e-01},
     "TeaCache4FLUX (FLUX.1-dev)"},
    {"flux-dev-tiny",
     {4.98651651e+02, -2.83781631e+02, 5.58554382e+01, -3.82021401e+00, 2.64230861e-01},
     "TeaCache4FLUX (FLUX.1-dev), borrowed by the tiny model"},
    {"hunyuanvideo",
     {7.33226126e+02, -4.01131952e+02, 6.75869174e+01, -3.14987800e+00, 9.61237896e-02},
     "TeaCache4HunyuanVideo"},
    {"hunyuanvideo-tiny",
     {7.33226126e+02, -4.01131952e+02, 6.75869174e+01, -3.14987800e+00, 9.61237896e-02},
     "TeaCache4HunyuanVideo, borrowed by the tiny model"},
    {"wan2.1-t2v-1.3b",
     {2.39676752e+03, -1.31110545e+03, 2.01331979e+02, -8.29855975e+00, 1.37887774e-01},
     "TeaCache4Wan2.1 (T2V-1.3B)"},
    {"wan2.1-t2v-tiny",
     {2.39676752e+03, -1.31110545e+03, 2.01331979e+02, -8.29855975e+00, 1.37887774e-01},
     "TeaCache4Wan2.1 (T2V-1.3B), borrowed by the tiny model"},
    {"wan2.1-t2v-14b",
     {-5784.54975374, 5449.50911966, -1811.16591783, 256.27178429, -13.02252404},
     "TeaCache4Wan2.1 (T2V-14B)"},
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

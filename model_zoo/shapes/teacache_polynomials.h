// The rescale polynomials TeaCache's authors published per model (`cache: {kind: teacache}`,
// model_zoo/families/step_cache.h): a step's relative L1 change of the timestep-modulated
// input, x, is rescaled to the output's expected change by p(x), accumulated over skipped
// steps and compared with the threshold. A model without a published polynomial is refused
// before launch (experiments/validity.cc) rather than given another model's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ditbench {

struct TeaCachePolynomial {
  std::vector<double> coefficients;  // highest degree first (numpy.poly1d's order)
  std::string source;                // where it was published, for the docs and errors
};

// The polynomial of preset `model_name`, or nullopt. A tiny preset borrows its full-size
// model's: the same computation at another width, so a threshold skips other steps there.
std::optional<TeaCachePolynomial> PublishedTeaCachePolynomial(const std::string& model_name);

// p(x), by Horner's rule.
double EvaluatePolynomial(const std::vector<double>& coefficients, double x);

}  // namespace ditbench

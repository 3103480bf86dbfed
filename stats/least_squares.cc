#include "stats/least_squares.h"

#include <algorithm>
#include <cmath>

namespace ditbench {
std::optional<std::vector<double>> InverseSpd(std::vector<double> a, std::size_t n) {
  // A = L L'.
  for (std::size_t j = 0; j < n; ++j) {
    double diagonal = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) diagonal -= a[j * n + k] * a[j * n + k];
    if (!(diagonal > 0)) return std::nullopt;
    a[j * n + j] = std::sqrt(diagonal);
    for (std::size_t i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / a[j * n + j];
    }
  }
  // Columns of A^-1: solve L L' x = e_c.
  std::vector<double> inverse(n * n, 0.0), z(n);
  for (std::size_t c = 0; c < n; ++c) {
    for (std::size_t i = 0; i < n; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (std::size_t k = 0; k < i; ++k) v -= a[i * n + k] * z[k];
      z[i] = v / a[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) {
      double v = z[i];
      for (std::size_t k = i + 1; k < n; ++k) v -= a[k * n + i] * z[k];
      z[i] = v / a[i * n + i];
    }
    for (std::size_t i = 0; i < n; ++i) inverse[i * n + c] = z[i];
  }
  return inverse;
}

double LeastSquaresFit::Predict(const std::vector<double>& x) const {
  double sum = 0;
  for (std::size_t j = 0; j < columns && j < x.size(); ++j) sum += coefficients[j] * x[j];
  return sum;
}

double LeastSquaresFit::PredictionVariance(const std::vector<double>& x) const {
  double sum = 0;
  for (std::size_t i = 0; i < columns && i < x.size(); ++i)
    for (std::size_t j = 0; j < columns && j < x.size(); ++j)
      sum += x[i] * covariance[i * columns + j] * x[j];
  return std::max(0.0, sum);
}

double LeastSquaresFit::StandardError(std::size_t column) const {
  return std::sqrt(std::max(0.0, covariance[column * columns + column]));
}

NormalEquations::NormalEquations(std::size_t m)
    : columns(m), xtwx(m * m, 0.0), xtwy(m, 0.0), nonzero_rows(m, 0) {}

void NormalEquations::Add(const std::vector<double>& x, double y, double weight, double sign) {
  const double w = sign * weight;
  for (std::size_t a = 0; a < columns; ++a) {
    const double xa = x[a] * w;
    if (x[a] != 0) nonzero_rows[a] = sign > 0 ? nonzero_rows[a] + 1 : nonzero_rows[a] - 1;
    xtwy[a] += xa * y;
    for (std::size_t b = 0; b < columns; ++b) xtwx[a * columns + b] += xa * x[b];
  }
  ytwy += w * y * y;
  rows = sign > 0 ? rows + 1 : rows - 1;
}

namespace {

// The active-set solve on the sums; `residuals(fit)`: the weighted residual sum of squares.
template <typename Residuals>
std::optional<LeastSquaresFit> Solve(const NormalEquations& sums, double ridge,
                                     const Residuals& residuals) {
  const std::size_t m = sums.columns, n = sums.rows;
  if (n == 0) return std::nullopt;
  std::vector<bool> active(m, false);
  std::vector<double> scale(m, 0.0);  // weighted mean square of each column
  for (std::size_t j = 0; j < m; ++j) {
    scale[j] = sums.xtwx[j * m + j] / double(n);
    active[j] = sums.nonzero_rows[j] > 0 && scale[j] > 0;
  }
  while (true) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < m; ++j)
      if (active[j]) cols.push_back(j);
    const std::size_t k = cols.size();
    if (k == 0 || n < k + 1) return std::nullopt;
    std::vector<double> normal(k * k, 0.0), rhs(k, 0.0);
    for (std::size_t a = 0; a < k; ++a) {
      rhs[a] = sums.xtwy[cols[a]];
      for (std::size_t b = 0; b < k; ++b) normal[a * k + b] = sums.xtwx[cols[a] * m + cols[b]];
      normal[a * k + a] += ridge * scale[cols[a]] * double(n);
    }
    const std::optional<std::vector<double>> inverse = InverseSpd(normal, k);
    if (!inverse) return std::nullopt;
    std::vector<double> b(k, 0.0);
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t c = 0; c < k; ++c) b[a] += (*inverse)[a * k + c] * rhs[c];
    // The most negative coefficient leaves the active set (relative to its column's scale).
    std::size_t worst = k;
    double most_negative = 0;
    for (std::size_t a = 0; a < k; ++a) {
      const double relative = b[a] * std::sqrt(scale[cols[a]]);
      if (relative < most_negative) {
        most_negative = relative;
        worst = a;
      }
    }
    if (worst < k) {
      active[cols[worst]] = false;
      continue;
    }
    LeastSquaresFit fit;
    fit.columns = m;
    fit.active = active;
    fit.coefficients.assign(m, 0.0);
    for (std::size_t a = 0; a < k; ++a) fit.coefficients[cols[a]] = b[a];
    fit.degrees_of_freedom = n - k;
    fit.sigma = std::sqrt(std::max(0.0, residuals(fit)) / double(fit.degrees_of_freedom));
    fit.covariance.assign(m * m, 0.0);
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t c = 0; c < k; ++c)
        fit.covariance[cols[a] * m + cols[c]] = fit.sigma * fit.sigma * (*inverse)[a * k + c];
    return fit;
  }
}

}  // namespace

std::optional<LeastSquaresFit> FitNonNegative(const std::vector<std::vector<double>>& rows,
                                              const std::vector<double>& y,
                                              const std::vector<double>& weights,
                                              double ridge) {
  if (rows.empty()) return std::nullopt;
  NormalEquations sums(rows.front().size());
  for (std::size_t i = 0; i < rows.size(); ++i) sums.Add(rows[i], y[i], weights[i]);
  return Solve(sums, ridge, [&](const LeastSquaresFit& fit) {
    double residuals = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double r = y[i] - fit.Predict(rows[i]);
      residuals += weights[i] * r * r;
    }
    return residuals;
  });
}

std::optional<LeastSquaresFit> FitNonNegative(const NormalEquations& sums, double ridge) {
  return Solve(sums, ridge, [&](const LeastSquaresFit& fit) {
    const std::size_t m = sums.columns;
    double residuals = sums.ytwy;
    for (std::size_t a = 0; a < m; ++a) {
      residuals -= 2 * fit.coefficients[a] * sums.xtwy[a];
      for (std::size_t c = 0; c < m; ++c)
        residuals += fit.coefficients[a] * sums.xtwx[a * m + c] * fit.coefficients[c];
    }
    return residuals;
  });
}

double StudentT95(std::size_t dof) {
  if (dof == 0) return 12.71;
  if (dof == 1) return 12.71;
  // Cornish-Fisher expansion of t around the normal quantile z = 1.96.
  const double z = 1.959964, n = double(dof);
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n);
}

}  // namespace ditbench

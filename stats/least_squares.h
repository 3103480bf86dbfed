// Weighted non-negative linear least squares with the uncertainty of its coefficients: what a
// cost model fitted from a handful of measured trials needs (plan/cost_model.h). Small
// problems only (a dozen columns, hundreds of rows): normal equations solved by Cholesky,
// non-negativity by an active set (a column whose coefficient comes out negative is dropped
// and the rest refitted, until none is). Pure; no dependencies.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace ditbench {

struct LeastSquaresFit {
  std::vector<double> coefficients;  // one per column; 0 for a dropped column
  std::vector<bool> active;          // the column took part in the final fit
  // Covariance of the active coefficients (row-major over every column; zero rows and
  // columns for dropped ones): sigma^2 (X'WX)^-1.
  std::vector<double> covariance;
  double sigma = 0;               // residual standard deviation in weighted units
  std::size_t degrees_of_freedom = 0;  // rows - active columns
  std::size_t columns = 0;

  double Predict(const std::vector<double>& x) const;
  // Variance of Predict(x) from the coefficients' uncertainty alone (x' Cov x).
  double PredictionVariance(const std::vector<double>& x) const;
  double StandardError(std::size_t column) const;
};

// Fits y ~ X b with b >= 0, minimising sum w_i (y_i - x_i b)^2. `rows` are the x_i (all the
// same length), `weights` positive. A column that is zero in every row is dropped. `ridge`
// (relative to each column's weighted mean square) keeps nearly collinear columns solvable.
// nullopt when fewer rows than active columns + 1 remain or the system cannot be solved.
std::optional<LeastSquaresFit> FitNonNegative(const std::vector<std::vector<double>>& rows,
                                              const std::vector<double>& y,
                                              const std::vector<double>& weights,
                                              double ridge = 1e-9);

// The sums a weighted least-squares fit is made of: X'WX, X'Wy, y'Wy and the row count.
// A row is added or taken out in O(columns^2), so that leave-one-out refits (plan/cost_model.h)
// need not read every row again.
struct NormalEquations {
  std::size_t columns = 0, rows = 0;
  std::vector<double> xtwx;  // columns x columns, row-major
  std::vector<double> xtwy;
  double ytwy = 0;
  // Per column, the rows added (less those taken out) whose value in it is not zero: a column
  // none of whose rows is left is dropped, even though rounding leaves its sums not quite zero.
  std::vector<std::size_t> nonzero_rows;

  explicit NormalEquations(std::size_t columns);
  // Adds the row (x, y) with `weight`; `sign` -1 takes out a row added before.
  void Add(const std::vector<double>& x, double y, double weight, double sign = 1);
};

// FitNonNegative from the sums alone: the same active set and covariance; the residual sum of
// squares is y'Wy - 2 b'X'Wy + b'X'WXb (not summed over the rows: equal to rounding).
std::optional<LeastSquaresFit> FitNonNegative(const NormalEquations& sums, double ridge = 1e-9);

// The inverse of the symmetric positive definite n x n matrix `a` (row-major), by Cholesky;
// nullopt when `a` is not positive definite.
std::optional<std::vector<double>> InverseSpd(std::vector<double> a, std::size_t n);

// The two-sided 95% quantile of Student's t with `dof` degrees of freedom (1.96 for large
// dof); a close approximation, exact to 2% from dof 2 on.
double StudentT95(std::size_t dof);

}  // namespace ditbench

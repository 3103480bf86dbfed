// Weighted non-negative least squares from its sums (NormalEquations): a row taken out of the
// sums gives the fit of the other rows, as leave-one-out needs (plan/cost_model.h).
#include "stats/least_squares.h"

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

namespace ditbench::least_squares_test {
namespace {

// 40 rows of 4 columns (the last zero except in row 7), y = 2 + 3 x1 + 0.5 x2 with 2% noise.
struct Problem {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
};

Problem MakeProblem() {
  Problem p;
  std::uint32_t state = 7;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return double(state >> 8) / double(1u << 24);
  };
  for (int i = 0; i < 40; ++i) {
    const double x1 = 1 + 10 * next(), x2 = 20 * next();
    const double x3 = i == 7 ? 1.0 : 0.0;
    const double y = (2 + 3 * x1 + 0.5 * x2 + 4 * x3) * (1 + 0.04 * (next() - 0.5));
    p.rows.push_back({1.0, x1, x2, x3});
    p.y.push_back(y);
    p.w.push_back(1 / (y * y));
  }
  return p;
}

void ExpectSameFit(const LeastSquaresFit& a, const LeastSquaresFit& b) {
  ASSERT_EQ(a.active, b.active);
  EXPECT_EQ(a.degrees_of_freedom, b.degrees_of_freedom);
  EXPECT_NEAR(a.sigma, b.sigma, 1e-9 * a.sigma);
  for (std::size_t j = 0; j < a.columns; ++j) {
    EXPECT_NEAR(a.coefficients[j], b.coefficients[j], 1e-9 * (1 + std::abs(a.coefficients[j])));
    EXPECT_NEAR(a.StandardError(j), b.StandardError(j), 1e-7 * (1 + a.StandardError(j)));
  }
}

TEST(LeastSquaresTest, TheSumsGiveTheFitOfTheRows) {
  const Problem p = MakeProblem();
  NormalEquations sums(4);
  for (std::size_t i = 0; i < p.rows.size(); ++i) sums.Add(p.rows[i], p.y[i], p.w[i]);
  const auto direct = FitNonNegative(p.rows, p.y, p.w);
  const auto from_sums = FitNonNegative(sums);
  ASSERT_TRUE(direct && from_sums);
  ExpectSameFit(*direct, *from_sums);
}

TEST(LeastSquaresTest, ARowTakenOutOfTheSumsGivesTheFitOfTheOthers) {
  const Problem p = MakeProblem();
  NormalEquations sums(4);
  for (std::size_t i = 0; i < p.rows.size(); ++i) sums.Add(p.rows[i], p.y[i], p.w[i]);
  for (std::size_t out : {0u, 7u, 39u}) {  // 7: the only row of the last column
    Problem others;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      if (i == out) continue;
      others.rows.push_back(p.rows[i]);
      others.y.push_back(p.y[i]);
      others.w.push_back(p.w[i]);
    }
    NormalEquations less = sums;
    less.Add(p.rows[out], p.y[out], p.w[out], -1);
    EXPECT_EQ(less.rows, others.rows.size());
    const auto direct = FitNonNegative(others.rows, others.y, others.w);
    const auto from_sums = FitNonNegative(less);
    ASSERT_TRUE(direct && from_sums) << out;
    ExpectSameFit(*direct, *from_sums);
    // Row 7 is the only one of the last column: without it the column is dropped.
    EXPECT_EQ(from_sums->active[3], out != 7);
  }
}

TEST(LeastSquaresTest, AColumnWhoseRowsAreAllTakenOutIsDropped) {
  // Leave-one-out takes out every seed twin of a trial at once (plan/cost_model.h): when they
  // were the only rows of a column, the sums of that column are rounding residue (a + b - a - b),
  // not zero, and must not make it active.
  Problem p = MakeProblem();
  p.rows[7][3] = 0.7;
  p.rows[8][3] = 2.9;
  NormalEquations sums(4);
  for (std::size_t i = 0; i < p.rows.size(); ++i) sums.Add(p.rows[i], p.y[i], p.w[i]);
  NormalEquations less = sums;
  less.Add(p.rows[7], p.y[7], p.w[7], -1);
  less.Add(p.rows[8], p.y[8], p.w[8], -1);
  const auto fit = FitNonNegative(less);
  ASSERT_TRUE(fit);
  EXPECT_FALSE(fit->active[3]);
  EXPECT_EQ(fit->coefficients[3], 0.0);
}

}  // namespace
}  // namespace ditbench::least_squares_test

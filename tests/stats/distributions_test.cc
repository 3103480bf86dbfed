#include "stats/distributions.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ditbench::distributions_test {
namespace {

TEST(DistributionsTest, IncompleteBetaMatchesTheBinomialSum) {
  // I_x(2, 3) = P(Binomial(4, x) >= 2) = 6x^2(1-x)^2 + 4x^3(1-x) + x^4; at x = 0.4: 0.5248.
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.4), 0.5248, 1e-12);
  EXPECT_NEAR(RegularizedIncompleteBeta(2, 3, 0.9), 1 - (1 - 0.9) * (1 - 0.9) * (1 - 0.9) *
                                                            (1 + 3 * 0.9), 1e-12);
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 0), 0);
  EXPECT_EQ(RegularizedIncompleteBeta(2, 3, 1), 1);
}

TEST(DistributionsTest, StudentTQuantilesMatchPublishedTables) {
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706205, 1e-5);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.302653, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.776445, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.228139, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.995, 30), 2.749996, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.025, 4), -2.776445, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 1e7), 1.959964, 1e-5);
  EXPECT_EQ(StudentTQuantile(0.5, 3), 0);
}

TEST(DistributionsTest, StudentTCdfIsSymmetricAndMonotone) {
  EXPECT_DOUBLE_EQ(StudentTCdf(0, 3.5), 0.5);
  EXPECT_NEAR(StudentTCdf(-1.7, 2.5) + StudentTCdf(1.7, 2.5), 1, 1e-12);
  // With df = 1 the t distribution is Cauchy: F(t) = 1/2 + atan(t)/pi.
  EXPECT_NEAR(StudentTCdf(2, 1), 0.5 + std::atan(2.0) / 3.14159265358979323846, 1e-12);
  EXPECT_LT(StudentTCdf(1, 2.2), StudentTCdf(1.01, 2.2));
}

TEST(DistributionsTest, NormalQuantileMatchesPublishedValues) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963985, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-12);
  EXPECT_NEAR(NormalCdf(NormalQuantile(0.9)), 0.9, 1e-12);
}

}  // namespace
}  // namespace ditbench::distributions_test

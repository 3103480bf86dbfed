// Distribution functions the comparison tests need: Student's t and the standard normal.
// Pure functions, no dependencies; each pinned by tests/stats/distributions_test.cc against
// published table values.
#pragma once

namespace ditbench {

// The regularized incomplete beta function I_x(a, b). REQUIRES: a > 0, b > 0, 0 <= x <= 1.
// Continued fraction (Lentz), accurate to about 1e-12.
double RegularizedIncompleteBeta(double a, double b, double x);

// P(T <= t) for Student's t with `df` > 0 degrees of freedom (df need not be an integer:
// Welch's test gives fractional ones).
double StudentTCdf(double t, double df);

// The p-quantile of Student's t (0 < p < 1, df > 0), by bisection on StudentTCdf.
double StudentTQuantile(double p, double df);

// P(Z <= z) for the standard normal.
double NormalCdf(double z);

// The p-quantile of the standard normal (0 < p < 1): Acklam's rational approximation refined
// by one Newton step (absolute error below 1e-12).
double NormalQuantile(double p);

}  // namespace ditbench

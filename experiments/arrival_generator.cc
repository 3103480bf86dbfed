// The load generator (experiments/arrivals.h, GenerateArrivals): a load's requests drawn from
// its seed, identically on every machine and standard library.
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "experiments/arrivals.h"

namespace ditbench {
namespace {

// Marsaglia-Tsang accepts more than 95% of its proposals for every shape of at least 1, so a
// gamma draw that has not been accepted in this many is a broken shape, not bad luck.
constexpr int kMaxGammaProposals = 10000;

// Uniform draws in [0, 1) from the 53 high bits of std::mt19937_64, and the draws built on them.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : engine_(seed) {}

  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Exponential() { return -std::log1p(-Uniform()); }  // mean 1
  // Standard normal: Box-Muller, one of the pair.
  double Normal() {
    const double radius = std::sqrt(-2 * std::log(1 - Uniform()));
    return radius * std::cos(2 * std::numbers::pi * Uniform());
  }
  // Gamma of shape `k` and scale 1: Marsaglia and Tsang (2000) for k >= 1; below 1 through
  // Gamma(k) = Gamma(k + 1) * U^(1/k). Throws rather than loop: std::invalid_argument for a
  // shape that is not a positive finite number, std::runtime_error when kMaxGammaProposals
  // proposals are all rejected (a shape too large for doubles to tell its proposals apart).
  double Gamma(double k) {
    if (!(k > 0 && std::isfinite(k)))
      throw std::invalid_argument(
          fmt::format("a gamma draw of shape {}; expected a positive finite shape", k));
    if (k < 1) {
      const double gamma = Gamma(k + 1);  // drawn first: the operands of * have no set order
      return gamma * std::pow(1 - Uniform(), 1 / k);
    }
    const double d = k - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (int proposal = 0; proposal < kMaxGammaProposals; ++proposal) {
      const double z = Normal(), v = std::pow(1 + c * z, 3);
      if (v <= 0) continue;
      if (std::log(1 - Uniform()) < z * z / 2 + d - d * v + d * std::log(v)) return d * v;
    }
    throw std::runtime_error(fmt::format(
        "a gamma draw of shape {} was rejected {} times; expected a shape its sampler draws", k,
        kMaxGammaProposals));
  }

 private:
  std::mt19937_64 engine_;
};

// The mix entry that a uniform draw `u` in [0, 1) lands in, by weight.
int PickShape(const std::vector<RequestShape>& mix, double total_weight, double u) {
  const double target = u * total_weight;
  double cumulative = 0;
  int last_drawable = 0;
  for (int i = 0; i < static_cast<int>(mix.size()); ++i) {
    if (mix[i].weight <= 0) continue;
    cumulative += mix[i].weight;
    last_drawable = i;
    if (target < cumulative) return i;
  }
  return last_drawable;  // only when rounding put target at the very top
}

}  // namespace

std::vector<Request> GenerateArrivals(const ServeLoad& load) {
  if (auto problem = ServeLoadProblem(load)) throw std::invalid_argument(*problem);
  if (load.arrivals == ArrivalKind::kTrace)
    throw std::invalid_argument("a trace's requests come from ReadArrivalTrace");
  if (load.rate_points != 0 || (load.of_capacity != 0 && load.rate_per_s == 0))
    throw std::invalid_argument(
        "'rate' is a share of a capacity not measured yet; expected the rate it comes to, set "
        "when the trial is launched (ResolveCapacityShare)");
  Draws gaps(load.seed), shapes(load.seed ^ 0x9e3779b97f4a7c15ull);
  double total_weight = 0;
  for (const RequestShape& shape : load.mix) total_weight += shape.weight;

  const bool open_loop = load.concurrency == 0;
  const int count = load.requests > 0 ? load.warmup_requests + load.requests : kMaxServeRequests;
  std::vector<Request> requests;
  double time_s = 0;
  for (int i = 0; i < count; ++i) {
    if (load.duration_s > 0 && time_s >= load.duration_s) break;
    requests.push_back({i, time_s, PickShape(load.mix, total_weight, shapes.Uniform())});
    if (!open_loop) continue;  // every request ready at 0
    switch (load.arrivals) {
      case ArrivalKind::kPoisson:
        time_s += gaps.Exponential() / load.rate_per_s;
        break;
      case ArrivalKind::kGamma:
        time_s += gaps.Gamma(1 / load.burstiness) * load.burstiness / load.rate_per_s;
        break;
      case ArrivalKind::kConstant:
        time_s = (i + 1) / load.rate_per_s;
        break;
      case ArrivalKind::kTrace:
        break;  // refused above
    }
  }
  if (load.requests == 0 && time_s < load.duration_s)
    throw std::invalid_argument(
        fmt::format("'duration_s' {} at 'rate' {} makes more than {} requests", load.duration_s,
                    load.rate_per_s, kMaxServeRequests));
  return requests;
}

}  // namespace ditbench

#include "plan/calibration.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "experiments/trial.h"
#include "model_zoo/shapes/model_config.h"
#include "plan/comm_volume.h"
#include "stats/stats.h"

namespace ditbench {
namespace {

// Least squares of y = a + b x over the points, with a > 0 and b >= 0: a time per GFLOP that
// falls with the work's size, never below zero. When the points disagree with that shape (a
// larger forward slower per FLOP: caches), the fastest point's rate for every size.
ForwardRateCurve FitCurve(const std::vector<std::pair<double, double>>& points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, fastest = points.front().second;
  for (const auto& [x, y] : points) {
    sx += x, sy += y, sxx += x * x, sxy += x * y;
    fastest = std::min(fastest, y);
  }
  const double n = static_cast<double>(points.size());
  const double denominator = n * sxx - sx * sx;
  if (points.size() >= 2 && denominator > 0) {
    const double b = (n * sxy - sx * sy) / denominator;
    const double a = (sy - b * sx) / n;
    if (a > 0 && b >= 0) return {a, b};
  }
  return {fastest, 0};
}

// What one collective costs in place, between computing ranks, in microseconds: of each
// forward split by Ulysses, its time beyond the compute its ranks' rate curve predicts for
// their share and beyond its bytes at the measured bandwidths, per collective it makes
// (plan/comm_volume.h counts them as the planner does for trials); the median over the
// measured forwards, and never below the bare latency the selfcheck measured. nullopt when
// no Ulysses forward was measured.
std::optional<double> CollectiveCostInPlace(const SelfcheckMeasurements& m,
                                            const PlanCalibration& calibration) {
  std::string error;
  const auto model = ResolveModel(m.calibration->model, {}, &error);
  if (!model) return std::nullopt;
  std::vector<double> per_call_us;
  for (const SelfcheckForwardRate& f : m.calibration->forward) {
    if (f.ulysses < 2 || f.gflop <= 0 || f.ms <= 0 || f.rank_elements <= 0) continue;
    const auto rank_tflops =
        calibration.CpuTflops(f.precision, f.threads, f.rank_elements / f.ulysses);
    TrialConfig trial;
    trial.model = m.calibration->model;
    trial.resolution = f.image;
    trial.ulysses = f.ulysses;
    const auto comm = CommByKindPerStep(*model, trial);
    if (!rank_tflops || !comm) continue;
    double calls = 0;
    for (const double c : comm->calls) calls += c;
    if (calls <= 0) continue;
    const double compute_ms = f.gflop / f.ulysses / *rank_tflops;  // GFLOP / TFLOP/s = ms
    LinkPrior bandwidth_only = *calibration.link;
    bandwidth_only.latency_us = {0, 0, 0, 0};
    const double bytes_ms = CommSeconds(*comm, bandwidth_only) * 1000;
    per_call_us.push_back(std::max(0.0, f.ms - compute_ms - bytes_ms) / calls * 1000);
  }
  if (per_call_us.empty()) return std::nullopt;
  return std::max(Summarize(per_call_us).median, m.comm->latency_us);
}

}  // namespace

double ForwardRateCurve::Tflops(double rank_elements) const {
  // ms per GFLOP t: 1e9 / (t * 1e-3) FLOP/s = 1 / t TFLOP/s.
  const double n = std::max(rank_elements, 1.0);
  return 1.0 / (per_gflop_ms + per_gflop_element_ms / n);
}

std::optional<double> PlanCalibration::CpuTflops(const std::string& precision, int threads,
                                                 double rank_elements) const {
  const auto found = rates.find(precision);
  if (found == rates.end() || found->second.empty()) return std::nullopt;
  const auto& by_threads = found->second;
  threads = std::max(1, threads);
  const auto exact = by_threads.find(threads);
  if (exact != by_threads.end()) return exact->second.Tflops(rank_elements);
  const auto above = by_threads.upper_bound(threads);
  if (above == by_threads.end()) {  // more threads than measured: scale the most measured
    const auto& [most, curve] = *by_threads.rbegin();
    return curve.Tflops(rank_elements) * threads / most;
  }
  if (above == by_threads.begin())  // fewer than the fewest measured
    return above->second.Tflops(rank_elements) * threads / above->first;
  const auto below = std::prev(above);
  const double low = below->second.Tflops(rank_elements);
  const double high = above->second.Tflops(rank_elements);
  const double f = (std::log(threads) - std::log(below->first)) /
                   (std::log(above->first) - std::log(below->first));
  return low * std::pow(high / low, f);
}

std::optional<PlanCalibration> CalibrationFrom(const SelfcheckMeasurements& m, std::string source,
                                               std::string* why_not) {
  if (!m.calibration) {
    if (why_not)
      *why_not = "it holds no calibration (a worker built before it measured one, or it failed)";
    return std::nullopt;
  }
  // A figure no device can give (a forward of 1e-300 ms) would calibrate every estimate to
  // nothing: the whole check is suspect, and none of it is used.
  if (const auto implausible = ImplausibleSelfcheckFigure(m)) {
    if (why_not) *why_not = "its stored figures are out of physical bounds: " + *implausible;
    return std::nullopt;
  }
  PlanCalibration calibration;
  calibration.source = std::move(source);
  // What a launch pays around its work (a warm `--describe` launch: process start, LibTorch's
  // load, exit) and the model's build. On a GPU the rendezvous counts too (NCCL's set-up takes
  // seconds, in a trial as in the selfcheck); on CPU it is left out: the selfcheck's ranks
  // wait there for each other's start (0.4 s on a 2-core machine) while a trial's Gloo
  // rendezvous measured 5 ms.
  if (!m.launch_wall_s) {
    if (why_not)
      *why_not =
          "it holds no launch time (stored by an older ditbench, or the worker's --describe "
          "failed)";
    return std::nullopt;
  }
  const bool cpu = m.device == "cpu";
  calibration.startup_s =
      *m.launch_wall_s + (cpu ? 0.0 : m.calibration->setup_s) + m.calibration->build_ms / 1000;
  // By precision, threads and ranks computing at once: (1 / n, ms per GFLOP).
  std::map<std::string, std::map<int, std::map<int, std::vector<std::pair<double, double>>>>>
      points;
  for (const SelfcheckForwardRate& f : m.calibration->forward)
    if (f.ulysses == 1 && f.gflop > 0 && f.ms > 0 && f.rank_elements > 0)
      points[f.precision][f.threads][f.ranks].emplace_back(1.0 / f.rank_elements, f.ms / f.gflop);
  // Of one thread count measured alone and with other ranks, the ranks computing together:
  // what a trial of several ranks at that thread count meets.
  // CPU only: on a GPU the tiny forward measures launches (the worker measures none there).
  if (m.device == "cpu")
    for (const auto& [precision, by_threads] : points)
      for (const auto& [threads, by_ranks] : by_threads)
        calibration.rates[precision][threads] = FitCurve(by_ranks.rbegin()->second);
  if (m.comm && m.comm->world_size >= 2 && m.comm->all_to_all_gbps > 0 &&
      m.comm->all_gather_gbps > 0) {
    const double latency = m.comm->latency_us;
    // kAllToAll, kSendRecv, kAllGather, kAllReduce (plan/comm_volume.h). An all-reduce is a
    // reduce-scatter and an all-gather, each rank sending (P-1)/P of the tensor in each: the
    // selfcheck's all-gather bus bandwidth prices it (no all-reduce is measured).
    calibration.link = LinkPrior{kCalibratedLinkName,
                                 {latency, latency, latency, latency},
                                 {m.comm->all_to_all_gbps, m.comm->all_gather_gbps,
                                  m.comm->all_gather_gbps, m.comm->all_gather_gbps}};
    calibration.comm_ranks = m.comm->world_size;
    if (const auto in_place = CollectiveCostInPlace(m, calibration)) {
      calibration.link->latency_us = {*in_place, *in_place, *in_place, *in_place};
      calibration.in_place_latency = true;
    }
  }
  return calibration;
}

}  // namespace ditbench

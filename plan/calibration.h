// What `plan` knows about this machine before any trial is measured: the figures a stored
// `ditbench selfcheck` measured (contract/selfcheck_measurements.h, "calibration" and "comm"),
// turned into the constants of the analytic estimate (plan/sweep_plan.h: AnalyticEstimate).
//
//   start-up   a warm `ditbench-worker --describe` launch's wall time (process start,
//              LibTorch's load, exit; on a GPU plus the selfcheck's rendezvous, NCCL's set-up)
//              plus the tiny model's build: what every trial pays around its iterations, in
//              place of the prior's 3 s
//   compute    CPU: per precision and per thread count, the tiny model's forward rate at three
//              sizes (at a thread count below the cores, with the selfcheck's ranks computing
//              at once, as a trial's do), fitted as time per FLOP = a + b / n (n: the elements of
//              one rank's activation, rows x tokens x hidden), that is a rate max * n / (n + half)
//              that rises with the work's size as the GPU prior's does (plan/device_prior.h). A
//              rank's thread count between two measured ones is interpolated in log threads;
//              beyond the most measured, the rate scales with the threads (the prior's rule)
//   link       with a selfcheck of 2+ ranks: every collective costs a latency plus its bytes
//              at the measured all-to-all and all-gather bus bandwidths (send/receive at the
//              all-gather's), in place of the prior's link. The latency: on CPU, what a
//              collective costs in place, from the tiny forward split over the ranks by
//              Ulysses (its time beyond its ranks' compute and bytes, per collective: the
//              waits between ranks that compute at slightly different speeds included);
//              else the measured small all-gather's
// GPU compute stays the prior's (a tiny model measures kernel launches there, not a DiT's
// rate); its start-up and link are calibrated. Pure: parsed measurements in.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "contract/selfcheck_measurements.h"
#include "plan/device_prior.h"

namespace ditbench {

inline constexpr std::string_view kCalibratedLinkName = "measured by ditbench selfcheck";

// time per GFLOP (ms) = per_gflop_ms + per_gflop_element_ms / n.
struct ForwardRateCurve {
  double per_gflop_ms = 0;
  double per_gflop_element_ms = 0;
  double Tflops(double rank_elements) const;
};

struct PlanCalibration {
  std::string source;  // "selfcheck #3 of cpu on host, build 1a2b3c4, 2026-11-27T19:04Z"
  double startup_s = 0;
  // CPU: by precision ("fp32", "bf16"), by thread count.
  std::map<std::string, std::map<int, ForwardRateCurve>> rates;
  std::optional<LinkPrior> link;  // measured with comm_ranks ranks (name: kCalibratedLinkName)
  int comm_ranks = 0;
  // The link's latency is each collective's cost in place, from the selfcheck's forward split
  // by Ulysses (CPU), rather than a bare collective's latency.
  bool in_place_latency = false;

  // The TFLOP/s one CPU rank reaches at `precision` with `threads` threads on an activation of
  // `rank_elements`; nullopt when no rate was measured for the precision (fp16 on CPU).
  std::optional<double> CpuTflops(const std::string& precision, int threads,
                                  double rank_elements) const;
};

// The calibration the measurements give; nullopt, with the reason in `why_not`, when they hold
// none (a worker older than the calibration, or one that failed before it) or hold a figure
// outside its physical bound (ImplausibleSelfcheckFigure: a database edited by hand, or a
// worker that lied).
std::optional<PlanCalibration> CalibrationFrom(const SelfcheckMeasurements& m, std::string source,
                                               std::string* why_not);

}  // namespace ditbench

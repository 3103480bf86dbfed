// The overnight progress line: trials done and left, time elapsed, and how long the rest
// should take. The estimate of the rest is the plan's (plan/sweep_plan.h) scaled by how far
// off the plan was for the trials already finished; a trial the plan cannot estimate (a
// `command` workload) counts as long as the mean wall time of the finished trials without an
// estimate, and until one has finished the time to go is unknown. Pure: the caller passes the
// clock.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ditbench {

class Progress {
 public:
  // `estimated_s`: the plan's wall-time estimate of each queued trial: 0 for one that will
  // not run (an invalid trial recorded as skipped), none for one the plan cannot estimate.
  // `started_at`: seconds, any epoch.
  Progress(std::vector<std::optional<double>> estimated_s, double started_at);

  // Trial `index` (into estimated_s) ended after `wall_s` seconds.
  void Finished(std::size_t index, double wall_s);

  // "progress: 3/8 done, 5 left, 1m20s elapsed, about 2m10s to go (plan x1.4)", or "..., time
  // to go unknown until a trial ends" while no estimate exists; the ETA is for trials run one
  // at a time.
  std::string Line(double now) const;

  // Seconds the trials not yet finished should take; none while a trial without an estimate
  // is left and none such has finished.
  std::optional<double> RemainingSeconds() const;

 private:
  std::vector<std::optional<double>> estimated_s_;
  std::vector<bool> done_;
  double started_at_;
  std::size_t finished_ = 0;
  double measured_s_ = 0, estimated_done_s_ = 0;
  double unestimated_s_ = 0;      // wall time of the finished trials without an estimate
  std::size_t unestimated_done_ = 0;
};

// "45s", "2m05s", "3h07m".
std::string ShortDuration(double seconds);

}  // namespace ditbench

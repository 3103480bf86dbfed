// The overnight progress line: trials done and left, time elapsed, and how long the rest
// should take. The estimate of the rest is the plan's (plan/sweep_plan.h) scaled by how far
// off the plan was for the trials already finished. Pure: the caller passes the clock.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ditbench {

class Progress {
 public:
  // `estimated_s`: the plan's wall-time estimate of each queued trial (0 for one that will
  // not run, such as an invalid trial recorded as skipped). `started_at`: seconds, any epoch.
  Progress(std::vector<double> estimated_s, double started_at);

  // Trial `index` (into estimated_s) ended after `wall_s` seconds.
  void Finished(std::size_t index, double wall_s);

  // "progress: 3/8 done, 5 left, 1m20s elapsed, about 2m10s to go (plan x1.4)"; the ETA is
  // for trials run one at a time.
  std::string Line(double now) const;

  // Seconds the trials not yet finished should take.
  double RemainingSeconds() const;

 private:
  std::vector<double> estimated_s_;
  std::vector<bool> done_;
  double started_at_;
  std::size_t finished_ = 0;
  double measured_s_ = 0, estimated_done_s_ = 0;
};

// "45s", "2m05s", "3h07m".
std::string ShortDuration(double seconds);

}  // namespace ditbench

#include "runner/progress.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ditbench {

std::string ShortDuration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

Progress::Progress(std::vector<std::optional<double>> estimated_s, double started_at)
    : estimated_s_(std::move(estimated_s)), done_(estimated_s_.size(), false),
      started_at_(started_at) {}

void Progress::Finished(std::size_t index, double wall_s) {
  if (index >= done_.size() || done_[index]) return;
  done_[index] = true;
  ++finished_;
  if (!estimated_s_[index]) {
    unestimated_s_ += wall_s;
    ++unestimated_done_;
  } else if (*estimated_s_[index] > 0) {
    estimated_done_s_ += *estimated_s_[index];
    measured_s_ += wall_s;
  }
}

std::optional<double> Progress::RemainingSeconds() const {
  // How far off the plan was so far; 1 until a trial with an estimate has finished.
  const double scale = estimated_done_s_ > 0 ? measured_s_ / estimated_done_s_ : 1.0;
  double remaining = 0;
  std::size_t unestimated_left = 0;
  for (std::size_t i = 0; i < estimated_s_.size(); ++i) {
    if (done_[i]) continue;
    if (estimated_s_[i]) remaining += *estimated_s_[i] * scale;
    else ++unestimated_left;
  }
  if (unestimated_left > 0) {
    if (unestimated_done_ == 0) return std::nullopt;
    remaining += static_cast<double>(unestimated_left) * unestimated_s_ /
                 static_cast<double>(unestimated_done_);
  }
  return remaining;
}

std::string Progress::Line(double now) const {
  std::string line = fmt::format("progress: {}/{} done, {} left, {} elapsed", finished_,
                                 done_.size(), done_.size() - finished_,
                                 ShortDuration(now - started_at_));
  if (finished_ < done_.size()) {
    const std::optional<double> remaining = RemainingSeconds();
    if (!remaining) return line + ", time to go unknown until a trial ends";
    line += fmt::format(", about {} to go", ShortDuration(*remaining));
    if (estimated_done_s_ > 0) line += fmt::format(" (plan x{:.2g})", measured_s_ / estimated_done_s_);
  }
  return line;
}

}  // namespace ditbench

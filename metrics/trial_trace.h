// A trial's profiler traces (`profile: trace`): each rank's trace file and its profile
// (metrics/trace_profile.h), and the slowest rank, whose compute / communication / idle shares
// are the trial's. A trace that could not be read keeps its error: the trial's timed numbers
// do not depend on it, so it never fails the trial. Stored as results.profile (JSON, version
// kTrialTraceVersion); pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/trace_profile.h"

namespace ditbench {

inline constexpr int kTrialTraceVersion = 1;

struct RankTrace {
  int rank = 0;
  std::string trace_file;  // a file name in the run folder; empty when the rank wrote none
  std::optional<TraceProfile> profile;
  std::string error;  // why there is no profile
  bool operator==(const RankTrace&) const = default;
};

struct TrialTrace {
  std::vector<RankTrace> ranks;  // in rank order
  // The rank with the longest total step time among those with a profile (the lowest rank on a
  // tie); nullptr when none has one.
  const RankTrace* Slowest() const;
  bool operator==(const TrialTrace&) const = default;
};

// {"version": 1, "slowest_rank": r or null, "ranks": [{"rank", "trace_file", "profile" (or
// null), "error"}]}. FromJson throws std::invalid_argument naming what is wrong, and refuses a
// newer version.
nlohmann::json TrialTraceJson(const TrialTrace& trace);
TrialTrace TrialTraceFromJson(const nlohmann::json& json);

}  // namespace ditbench

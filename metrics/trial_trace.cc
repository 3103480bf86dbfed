#include "metrics/trial_trace.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ditbench {

const RankTrace* TrialTrace::Slowest() const {
  const RankTrace* slowest = nullptr;
  for (const RankTrace& rank : ranks)
    if (rank.profile && (!slowest || rank.profile->total.step_ms > slowest->profile->total.step_ms))
      slowest = &rank;
  return slowest;
}

nlohmann::json TrialTraceJson(const TrialTrace& trace) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankTrace& r : trace.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"trace_file", r.trace_file},
                     {"profile", r.profile ? TraceProfileJson(*r.profile) : nlohmann::json()},
                     {"error", r.error}});
  const RankTrace* slowest = trace.Slowest();
  return {{"version", kTrialTraceVersion},
          {"slowest_rank", slowest ? nlohmann::json(slowest->rank) : nlohmann::json()},
          {"ranks", std::move(ranks)}};
}

TrialTrace TrialTraceFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("version") || !json["version"].is_number_integer())
    throw std::invalid_argument("trial profile: expected an object with an integer 'version'");
  if (json["version"].get<int>() > kTrialTraceVersion)
    throw std::invalid_argument(fmt::format(
        "trial profile: version {} is newer than this build reads ({})",
        json["version"].get<int>(), kTrialTraceVersion));
  if (!json.contains("ranks") || !json["ranks"].is_array())
    throw std::invalid_argument("trial profile: 'ranks': expected an array");
  TrialTrace trace;
  for (const nlohmann::json& r : json["ranks"]) {
    if (!r.is_object() || !r.contains("rank") || !r["rank"].is_number_integer())
      throw std::invalid_argument("trial profile: a rank needs an integer 'rank'");
    RankTrace rank;
    rank.rank = r["rank"].get<int>();
    rank.trace_file = r.value("trace_file", "");
    rank.error = r.value("error", "");
    if (r.contains("profile") && !r["profile"].is_null())
      rank.profile = TraceProfileFromJson(r["profile"]);
    trace.ranks.push_back(std::move(rank));
  }
  return trace;
}

}  // namespace ditbench

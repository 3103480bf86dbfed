#include "experiments/sweep_expand.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/constraint.h"
#include "experiments/trial_settings.h"

namespace ditbench {
namespace {

void Apply(TrialConfig& config, const Setting& setting) {
  std::string unused;
  ApplySetting(config, setting.key, setting.value, &unused);  // checked while parsing
}

// An `exclude` point as canonical values (custom axes under /custom): a trial matches when
// all of them are equal.
struct ExcludePattern {
  std::vector<std::pair<nlohmann::json::json_pointer, nlohmann::json>> values;
};

nlohmann::json::json_pointer PointerOf(const std::string& setting_key,
                                       const nlohmann::json& canonical) {
  const std::string key = CanonicalKeyOf(setting_key);
  if (canonical.contains(key)) return nlohmann::json::json_pointer("/" + key);
  return nlohmann::json::json_pointer("/custom/" + key);  // custom axis names need no escaping
}

ExcludePattern MakePattern(const SweepSpec& spec, const std::vector<Setting>& point) {
  TrialConfig scratch = spec.defaults;
  for (const auto& s : point) Apply(scratch, s);
  const nlohmann::json canonical = CanonicalJson(scratch);
  ExcludePattern pattern;
  for (const auto& s : point) {
    const auto pointer = PointerOf(s.key, canonical);
    pattern.values.emplace_back(pointer, canonical.at(pointer));
  }
  return pattern;
}

bool Matches(const ExcludePattern& pattern, const nlohmann::json& canonical) {
  for (const auto& [pointer, value] : pattern.values)
    if (!canonical.contains(pointer) || canonical.at(pointer) != value) return false;
  return true;
}

// A rate sweep's trial (ServeLoad::rate_points) as its capacity trial, then one trial per share
// of that capacity, in this order: the sweep loop launches a share once its capacity trial is
// recorded (runner/sweep_loop.cc). Every other trial as it is.
void ExpandRateSweeps(std::vector<TrialConfig>& trials) {
  const auto sweeps_rate = [](const TrialConfig& t) { return t.serve && t.serve->rate_points; };
  if (std::none_of(trials.begin(), trials.end(), sweeps_rate)) return;
  std::vector<TrialConfig> expanded;
  for (TrialConfig& trial : trials) {
    if (!sweeps_rate(trial)) {
      expanded.push_back(std::move(trial));
      continue;
    }
    ServeLoad share = *trial.serve;
    share.capacity_concurrency =
        share.concurrency > 0 ? share.concurrency : kCapacityConcurrencyPerReplica * trial.dp;
    share.concurrency = 0;
    const std::vector<double> shares = RateSweepShares(share.rate_points);
    share.rate_points = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
      share.of_capacity = std::round(shares[i] * 1e6) / 1e6;  // 0.3, not 0.30000000000000004
      TrialConfig t = trial;
      t.serve = share;
      if (i == 0) expanded.push_back(CapacityTrial(t));
      expanded.push_back(std::move(t));
    }
  }
  trials = std::move(expanded);
}

}  // namespace

namespace {

// The trials one trial of the sweep may become: a rate sweep's capacity trial and its points
// (the most points of any `serve` the sweep sets), else 1.
unsigned RateSweepFactor(const SweepSpec& spec) {
  std::int64_t most = spec.defaults.serve ? spec.defaults.serve->rate_points : 0;
  const auto look = [&](const Setting& s) {
    if (s.key != "serve" || !s.value.is_object()) return;
    const auto points = s.value.find("points");
    if (points != s.value.end() && points->is_number_integer())
      most =
          std::max(most, std::clamp<std::int64_t>(points->get<std::int64_t>(), 0, kMaxRatePoints));
  };
  for (const auto& axis : spec.matrix) std::for_each(axis.values.begin(), axis.values.end(), look);
  for (const auto& group : spec.zip)
    for (const auto& axis : group.axes) std::for_each(axis.values.begin(), axis.values.end(), look);
  for (const auto& point : spec.include) std::for_each(point.begin(), point.end(), look);
  return most > 0 ? static_cast<unsigned>(most) + 1 : 1;
}

// The matrix, zip and include sections' trial count in `Count`, saturating at its largest
// value: a saturated count is always above Count's largest value less one. A rate sweep counts
// as the trials it becomes.
template <typename Count>
Count SaturatingTrialCount(const SweepSpec& spec) {
  constexpr Count kMax = ~Count(0);  // Count is unsigned
  Count product = RateSweepFactor(spec);
  auto multiply = [&](Count n) { product = (n != 0 && product > kMax / n) ? kMax : product * n; };
  for (const auto& axis : spec.matrix) multiply(axis.values.size());
  for (const auto& group : spec.zip) multiply(group.size());
  if (spec.matrix.empty() && spec.zip.empty() && !spec.include.empty()) product = 0;
  const Count included = static_cast<Count>(spec.include.size()) * RateSweepFactor(spec);
  return product > kMax - included ? kMax : product + included;
}

}  // namespace

std::size_t UnfilteredTrialCount(const SweepSpec& spec) {
  return SaturatingTrialCount<std::size_t>(spec);
}

std::string UnfilteredTrialCountText(const SweepSpec& spec) {
  // In 128 bits: 2^64 exactly is a count like any other. Saturation (at 2^128 - 1) only
  // happens for a count above 2^127.
  using Wide = unsigned __int128;
  Wide count = SaturatingTrialCount<Wide>(spec);
  if (count == ~Wide(0)) return "more than 2^127";
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(count % 10)));
    count /= 10;
  } while (count != 0);
  return digits;
}

ExpandedSweep ExpandSweep(const SweepSpec& spec, int gpus) {
  ExpandedSweep out;
  // The crossed part. With neither matrix nor zip (and no includes) the sweep is one trial:
  // the defaults.
  std::vector<TrialConfig> trials;
  if (!spec.matrix.empty() || !spec.zip.empty() || spec.include.empty()) {
    trials.push_back(spec.defaults);
    auto cross = [&](std::size_t points, const auto& apply_point) {
      std::vector<TrialConfig> next;
      next.reserve(trials.size() * points);
      for (const auto& base : trials)
        for (std::size_t i = 0; i < points; ++i) apply_point(next.emplace_back(base), i);
      trials = std::move(next);
    };
    for (const auto& axis : spec.matrix)
      cross(axis.values.size(), [&](TrialConfig& t, std::size_t i) { Apply(t, axis.values[i]); });
    for (const auto& group : spec.zip)
      cross(group.size(), [&](TrialConfig& t, std::size_t i) {
        for (const auto& axis : group.axes) Apply(t, axis.values[i]);
      });
  }
  for (const auto& point : spec.include) {
    TrialConfig t = spec.defaults;
    for (const auto& s : point) Apply(t, s);
    trials.push_back(std::move(t));
  }

  std::vector<ExcludePattern> patterns;
  for (const auto& point : spec.exclude) patterns.push_back(MakePattern(spec, point));
  ConstraintSet constraints(spec.where);
  out.failed_where.assign(spec.where.size(), 0);
  // Filtered in place, in order (a sweep may expand to 100,000 trials of most of a kilobyte).
  std::erase_if(trials, [&](const TrialConfig& t) {
    if (!patterns.empty()) {
      const nlohmann::json canonical = CanonicalJson(t);
      bool excluded = false;
      for (const auto& p : patterns) excluded = excluded || Matches(p, canonical);
      if (excluded) {
        ++out.excluded;
        return true;
      }
    }
    if (int failing = constraints.FirstFailing(t, gpus); failing >= 0) {
      ++out.failed_where[failing];
      return true;
    }
    return false;
  });
  ExpandRateSweeps(trials);
  out.trials = std::move(trials);
  return out;
}

}  // namespace ditbench

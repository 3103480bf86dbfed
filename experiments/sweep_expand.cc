#include "experiments/sweep_expand.h"

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

}  // namespace

namespace {

// The matrix, zip and include sections' trial count in `Count`, saturating at its largest
// value: a saturated count is always above Count's largest value less one.
template <typename Count>
Count SaturatingTrialCount(const SweepSpec& spec) {
  constexpr Count kMax = ~Count(0);  // Count is unsigned
  Count product = 1;
  auto multiply = [&](Count n) { product = (n != 0 && product > kMax / n) ? kMax : product * n; };
  for (const auto& axis : spec.matrix) multiply(axis.values.size());
  for (const auto& group : spec.zip) multiply(group.size());
  if (spec.matrix.empty() && spec.zip.empty() && !spec.include.empty()) product = 0;
  return product > kMax - spec.include.size() ? kMax : product + spec.include.size();
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
  out.trials = std::move(trials);
  return out;
}

}  // namespace ditbench

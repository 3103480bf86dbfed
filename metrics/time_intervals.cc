#include "metrics/time_intervals.h"

#include <algorithm>

namespace ditbench {

IntervalSet::IntervalSet(std::vector<TimeInterval> intervals) {
  std::erase_if(intervals, [](const TimeInterval& i) { return !(i.end > i.begin); });
  std::sort(intervals.begin(), intervals.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.begin < b.begin; });
  for (const TimeInterval& i : intervals) {
    if (!intervals_.empty() && i.begin <= intervals_.back().end)
      intervals_.back().end = std::max(intervals_.back().end, i.end);
    else
      intervals_.push_back(i);
  }
}

double IntervalSet::Length() const {
  double total = 0;
  for (const TimeInterval& i : intervals_) total += i.end - i.begin;
  return total;
}

double IntervalSet::LengthWithin(double begin, double end) const {
  // The first interval that ends after `begin`, then every one that starts before `end`.
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), begin,
                             [](double t, const TimeInterval& i) { return t < i.end; });
  double total = 0;
  for (; it != intervals_.end() && it->begin < end; ++it)
    total += std::min(it->end, end) - std::max(it->begin, begin);
  return total;
}

bool IntervalSet::Contains(double begin, double end) const {
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), begin,
                             [](double t, const TimeInterval& i) { return t < i.begin; });
  if (it == intervals_.begin()) return false;
  --it;
  return it->begin <= begin && end <= it->end;
}

IntervalSet IntervalSet::Union(const IntervalSet& other) const {
  std::vector<TimeInterval> all = intervals_;
  all.insert(all.end(), other.intervals_.begin(), other.intervals_.end());
  return IntervalSet(std::move(all));
}

IntervalSet IntervalSet::Intersection(const IntervalSet& other) const {
  std::vector<TimeInterval> out;
  auto a = intervals_.begin();
  auto b = other.intervals_.begin();
  while (a != intervals_.end() && b != other.intervals_.end()) {
    const double begin = std::max(a->begin, b->begin);
    const double end = std::min(a->end, b->end);
    if (end > begin) out.push_back({begin, end});
    if (a->end < b->end) ++a;
    else ++b;
  }
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::Minus(const IntervalSet& other) const {
  std::vector<TimeInterval> out;
  auto b = other.intervals_.begin();
  for (const TimeInterval& a : intervals_) {
    double begin = a.begin;
    while (b != other.intervals_.end() && b->end <= begin) ++b;
    for (auto c = b; c != other.intervals_.end() && c->begin < a.end; ++c) {
      if (c->begin > begin) out.push_back({begin, c->begin});
      begin = std::max(begin, c->end);
    }
    if (begin < a.end) out.push_back({begin, a.end});
  }
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::Clip(double begin, double end) const {
  return Intersection(IntervalSet({{begin, end}}));
}

}  // namespace ditbench

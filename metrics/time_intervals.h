// Sets of time intervals as sorted, disjoint, half-open [begin, end) pairs: the arithmetic a
// profiler trace's timeline needs (busy time is a union, hidden communication an intersection).
// Pure; units are the caller's.
#pragma once

#include <vector>

namespace ditbench {

struct TimeInterval {
  double begin = 0;
  double end = 0;
  bool operator==(const TimeInterval&) const = default;
};

// A normalised set: sorted by begin, disjoint, no empty interval, touching ones merged.
class IntervalSet {
 public:
  IntervalSet() = default;
  // The union of `intervals`, in any order, overlapping or not; empty ones are dropped.
  explicit IntervalSet(std::vector<TimeInterval> intervals);

  const std::vector<TimeInterval>& intervals() const { return intervals_; }
  // The total length.
  double Length() const;
  // The length of the part of this set inside [begin, end).
  double LengthWithin(double begin, double end) const;
  // Whether [begin, end) lies inside one interval of the set.
  bool Contains(double begin, double end) const;

  IntervalSet Union(const IntervalSet& other) const;
  IntervalSet Intersection(const IntervalSet& other) const;
  IntervalSet Minus(const IntervalSet& other) const;
  // The part inside [begin, end).
  IntervalSet Clip(double begin, double end) const;

 private:
  std::vector<TimeInterval> intervals_;
};

}  // namespace ditbench

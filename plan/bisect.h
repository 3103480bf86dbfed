// `ditbench bisect`: which build introduced a slowdown of one trial, deciding only. Pure: the
// search state over an ordered list of builds, the next build to measure, how one measured
// build is judged from its two `compare` verdicts, and the answer. runner/bisect_run.h measures
// the builds this chooses (each one a campaign) and feeds the verdicts back.
//
// Builds are positions 0 .. count-1 in the order given (oldest first). The good end may sit
// before the list (position -1: a campaign whose build is not in the list) and the bad end
// after it (position `count`). The search keeps the last position known good and the first
// known bad; the first bad build lies in (good, bad]. A build that cannot be judged (it failed
// to build or to run, or its verdicts contradict each other) is skipped, as `git bisect skip`
// does: the search measures another build of the interval, and when only skipped builds are
// left between the ends the answer is a range, the skipped builds and the first bad one.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stats/change.h"

namespace ditbench {

// What one measured build is, from the `compare` verdicts of the trial against the good end
// (good -> build) and against the bad end (bad -> build).
enum class BuildJudgement { kGood, kBad, kUnclear, kFailed };
const char* BuildJudgementName(BuildJudgement judgement);  // "good", "bad", "unclear", "failed"

// The rule: evidence for good is `same` or `faster` against the good end, or `faster` against
// the bad end; evidence for bad is `slower` against the good end, or `same` or `slower`
// against the bad end. A build with evidence for one side only is that side; with both (same
// as both ends: the noise hides the difference; slower than good and faster than bad: a change
// of its own in between) or neither (inconclusive twice) it is unclear.
BuildJudgement JudgeBuild(Verdict against_good, Verdict against_bad);

// Where a search stands. REQUIRES: -1 <= good < bad <= count.
class BisectSearch {
 public:
  BisectSearch(int count, int good, int bad);

  // The build to measure next: among the positions strictly between the ends not yet skipped,
  // the one nearest the midpoint (the lower one on a tie). Empty when the search is done.
  std::optional<int> Next() const;

  // Records a measured build. REQUIRES: good() < position < bad(). Good moves the good end
  // there, bad the bad end; unclear and failed skip it.
  void Record(int position, BuildJudgement judgement);

  bool Done() const { return !Next().has_value(); }
  int good() const { return good_; }
  int bad() const { return bad_; }
  int count() const { return count_; }

  // When done: the builds the first bad one may be, in order: the skipped builds between the
  // ends and the bad end itself (just the bad end when nothing was skipped there). A position
  // equal to count() stands for the bad end after the list.
  std::vector<int> Suspects() const;

 private:
  int count_, good_, bad_;
  std::set<int> skipped_;
};

// The most builds a search over `count` builds between ends at `good` and `bad` measures when
// nothing is skipped: ceil(log2(bad - good)).
int MaxMeasurements(int good, int bad);

}  // namespace ditbench

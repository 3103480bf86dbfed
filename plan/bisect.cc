#include "plan/bisect.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace ditbench {

const char* BuildJudgementName(BuildJudgement judgement) {
  switch (judgement) {
    case BuildJudgement::kGood: return "good";
    case BuildJudgement::kBad: return "bad";
    case BuildJudgement::kUnclear: return "unclear";
    case BuildJudgement::kFailed: return "failed";
  }
  return "unclear";
}

BuildJudgement JudgeBuild(Verdict against_good, Verdict against_bad) {
  const bool good = against_good == Verdict::kSame || against_good == Verdict::kFaster ||
                    against_bad == Verdict::kFaster;
  const bool bad = against_good == Verdict::kSlower || against_bad == Verdict::kSame ||
                   against_bad == Verdict::kSlower;
  if (good && !bad) return BuildJudgement::kGood;
  if (bad && !good) return BuildJudgement::kBad;
  return BuildJudgement::kUnclear;
}

BisectSearch::BisectSearch(int count, int good, int bad) : count_(count), good_(good), bad_(bad) {
  if (!(-1 <= good && good < bad && bad <= count))
    throw std::invalid_argument(
        fmt::format("bisect: ends {} and {} out of order for {} builds", good, bad, count));
}

std::optional<int> BisectSearch::Next() const {
  // The lower midpoint: between builds 0 and 7 it is 3, so 3, 5, 4 find build 4 (0-based).
  const int mid = good_ + (bad_ - good_) / 2;
  std::optional<int> best;
  for (int p = good_ + 1; p < bad_; ++p) {
    if (skipped_.count(p)) continue;
    if (!best || std::abs(p - mid) < std::abs(*best - mid)) best = p;
  }
  return best;
}

void BisectSearch::Record(int position, BuildJudgement judgement) {
  if (!(good_ < position && position < bad_))
    throw std::invalid_argument(fmt::format("bisect: build {} is not between the ends {} and {}",
                                            position, good_, bad_));
  switch (judgement) {
    case BuildJudgement::kGood: good_ = position; break;
    case BuildJudgement::kBad: bad_ = position; break;
    case BuildJudgement::kUnclear:
    case BuildJudgement::kFailed: skipped_.insert(position); break;
  }
}

std::vector<int> BisectSearch::Suspects() const {
  std::vector<int> suspects;
  for (int p : skipped_)
    if (good_ < p && p < bad_) suspects.push_back(p);
  suspects.push_back(bad_);
  return suspects;
}

int MaxMeasurements(int good, int bad) {
  int measured = 0;
  for (int span = 1; span < bad - good; span *= 2) ++measured;
  return measured;
}

}  // namespace ditbench

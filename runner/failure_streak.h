// The first launches of a run all failing the same way: a broken setup (a module that does
// not import, a wrong path, a missing library) rather than as many bad configurations. `run`
// warns loudly when it sees one, and with --stop-after-failures N stops instead of failing
// every trial of an overnight sweep the same way. Pure.
#pragma once

#include <string>

#include "experiments/trial.h"

namespace ditbench {

// How a failure reads: the status and the last non-empty line of the error (where a log tail,
// its lines joined by " | ", ends with the exception), trimmed: "failed: ModuleNotFoundError:
// No module named 'x'".
std::string FailureSignature(TrialStatus status, const std::string& error);

// What tells two failures apart: FailureSignature with every run of digits read as one "N",
// so that "rank 0 exited 1" and "rank 1 exited 1" are the same failure.
std::string FailureKind(TrialStatus status, const std::string& error);

// Launches that warn without --stop-after-failures.
inline constexpr int kWarnAfterIdenticalFailures = 3;

class FailureStreak {
 public:
  // `length`: how many identical failures at the start of the run make a streak (>= 1).
  explicit FailureStreak(int length) : length_(length < 1 ? 1 : length) {}

  // Records the next launch of the run that ended. True exactly once: when the first
  // `length` launches all failed with the same FailureKind. An ok launch, or a different
  // failure, before that ends the watch for the run.
  bool Add(TrialStatus status, const std::string& error);

  int length() const { return length_; }
  // The first failure's FailureSignature.
  const std::string& signature() const { return signature_; }

 private:
  int length_;
  int count_ = 0;
  bool over_ = false;  // the streak was broken, or already reported
  std::string kind_, signature_;
};

}  // namespace ditbench

// How far a derived number can be taken at face value, carried to wherever it is shown.
//
// A speedup, an efficiency, a winner, a recommendation, a verdict or a change point inherits
// the doubts of the measurements it was computed from: a busy machine, a 1-rank baseline
// borrowed from another campaign or measured busy, a ratio above the world size, fewer
// launches than the sweep asked for, an output below the sweep's quality gates. Every output
// that shows the number shows its doubts beside it (the Summary cell, the chart point, the
// advise line, the query column), not only in a list of warnings further down.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

enum class Doubt : std::uint8_t {
  kBusy,              // measured while other work ran on the machine
  kBaselineBusy,      // its 1-rank baseline was
  kBorrowedBaseline,  // its 1-rank baseline is from another campaign
  kSuperlinear,       // a speedup above the world size: a slowed baseline, not parallelism
  kFewLaunches,       // fewer ok launches than the sweep asked for
  kBelowQuality,      // its output missed the sweep's quality gates
};

// One row per doubt: its short name (shown beside the number) and what it means.
struct DoubtInfo {
  Doubt doubt;
  std::string_view name;     // "busy", "borrowed baseline", ...
  std::string_view meaning;  // one clause, for a tooltip or a footnote
};
const DoubtInfo& InfoOf(Doubt doubt);

// A set of doubts; empty: the number is a plain answer.
class Trust {
 public:
  Trust& Add(Doubt doubt);
  Trust& Add(const Trust& other);
  bool Has(Doubt doubt) const;
  bool plain() const { return bits_ == 0; }
  // Its doubts in table order; empty when plain.
  std::vector<Doubt> doubts() const;
  // The short names in table order, joined by ", " ("busy, borrowed baseline"); "" when plain.
  std::string Names() const;
  // The meanings, joined by "; ", for a tooltip; "" when plain.
  std::string Meanings() const;

  bool operator==(const Trust&) const = default;

 private:
  std::uint32_t bits_ = 0;
};

// The doubts of one measurement on its own: busy, few launches, below quality.
Trust MeasurementTrust(const ResultRow& row);

}  // namespace ditbench

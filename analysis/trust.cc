#include "analysis/trust.h"

#include <array>

namespace ditbench {
namespace {

constexpr std::array<DoubtInfo, 6> kDoubts{{
    {Doubt::kBusy, "busy", "measured while other work ran on the machine"},
    {Doubt::kBaselineBusy, "busy baseline",
     "its 1-rank baseline was measured while other work ran on the machine"},
    {Doubt::kBorrowedBaseline, "borrowed baseline",
     "its 1-rank baseline was measured in another campaign"},
    {Doubt::kSuperlinear, "superlinear",
     "faster than world size x the 1-rank trial: usually a slowed baseline, not parallelism"},
    {Doubt::kFewLaunches, "few launches", "fewer ok launches than its sweep asked for"},
    {Doubt::kBelowQuality, "below quality", "its output missed the sweep's quality gates"},
}};

std::uint32_t Bit(Doubt doubt) { return 1u << static_cast<unsigned>(doubt); }

}  // namespace

const DoubtInfo& InfoOf(Doubt doubt) { return kDoubts[static_cast<std::size_t>(doubt)]; }

Trust& Trust::Add(Doubt doubt) {
  bits_ |= Bit(doubt);
  return *this;
}

Trust& Trust::Add(const Trust& other) {
  bits_ |= other.bits_;
  return *this;
}

bool Trust::Has(Doubt doubt) const { return (bits_ & Bit(doubt)) != 0; }

std::vector<Doubt> Trust::doubts() const {
  std::vector<Doubt> doubts;
  for (const DoubtInfo& info : kDoubts)
    if (Has(info.doubt)) doubts.push_back(info.doubt);
  return doubts;
}

std::string Trust::Names() const {
  std::string names;
  for (const DoubtInfo& info : kDoubts) {
    if (!Has(info.doubt)) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

std::string Trust::Meanings() const {
  std::string meanings;
  for (const DoubtInfo& info : kDoubts) {
    if (!Has(info.doubt)) continue;
    if (!meanings.empty()) meanings += "; ";
    meanings += info.meaning;
  }
  return meanings;
}

Trust MeasurementTrust(const ResultRow& row) {
  Trust trust;
  if (row.busy) trust.Add(Doubt::kBusy);
  if (row.replicates > 1 && row.launches < row.replicates) trust.Add(Doubt::kFewLaunches);
  if (row.below_quality()) trust.Add(Doubt::kBelowQuality);
  return trust;
}

}  // namespace ditbench

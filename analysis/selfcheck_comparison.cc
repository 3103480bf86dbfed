#include "analysis/selfcheck_comparison.h"

#include <algorithm>
#include <set>
#include <utility>

#include "storage/iso_time.h"

namespace ditbench {
namespace {

std::string RowText(const SelfcheckRow& row) {
  std::string text = VerdictName(row.verdict);
  if (!row.figure.empty()) text += ": " + row.figure;
  return text;
}

std::string CheckSummary(const SelfcheckRecord& check) {
  std::string text;
  for (const std::string& line : NotPassingLines(check.rows))
    text += (text.empty() ? "" : "; ") + line;
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

void AddRowDifferences(const std::string& device, const SelfcheckRecord& a,
                       const SelfcheckRecord& b, std::vector<SettingDifference>& out) {
  std::map<std::string, const SelfcheckRow*> a_rows, b_rows;
  std::vector<std::string> names;  // A's order, then B's rows A lacks
  for (const auto& row : a.rows)
    if (a_rows.emplace(row.name, &row).second) names.push_back(row.name);
  for (const auto& row : b.rows)
    if (b_rows.emplace(row.name, &row).second && a_rows.count(row.name) == 0)
      names.push_back(row.name);
  for (const std::string& name : names) {
    const auto ia = a_rows.find(name), ib = b_rows.find(name);
    const std::string va = ia == a_rows.end() ? "(none)" : RowText(*ia->second);
    const std::string vb = ib == b_rows.end() ? "(none)" : RowText(*ib->second);
    const bool same_verdict =
        ia != a_rows.end() && ib != b_rows.end() && ia->second->verdict == ib->second->verdict;
    if (!same_verdict) out.push_back({"selfcheck " + device + ": " + name, va, vb});
  }
}

}  // namespace

std::map<std::string, SelfcheckRecord> SideChecks(SelfcheckStore& store,
                                                  const std::vector<CampaignInfo>& campaigns,
                                                  const std::vector<ResultRow>& rows) {
  // The end of the side's newest campaign; empty (any time) while one is unfinished.
  std::string until;
  double newest_end = 0;
  bool unfinished = false;
  for (const CampaignInfo& c : campaigns) {
    if (!c.finished_at)
      unfinished = true;
    else
      newest_end = std::max(newest_end, *c.finished_at);
  }
  if (!unfinished && newest_end > 0) until = IsoUtc(newest_end);
  std::set<std::string> devices;
  for (const ResultRow& row : rows)
    if (!row.device.empty()) devices.insert(row.device);
  std::map<std::string, SelfcheckRecord> checks;
  for (const std::string& device : devices)
    if (auto check = store.LatestFor(device, until)) checks.emplace(device, std::move(*check));
  return checks;
}

std::vector<SettingDifference> SelfcheckDifferences(
    const std::map<std::string, SelfcheckRecord>& a,
    const std::map<std::string, SelfcheckRecord>& b) {
  std::vector<SettingDifference> out;
  if (a.size() == 1 && b.size() == 1) {
    const std::string device = a.begin()->first == b.begin()->first
                                   ? a.begin()->first
                                   : a.begin()->first + " | " + b.begin()->first;
    AddRowDifferences(device, a.begin()->second, b.begin()->second, out);
    return out;
  }
  std::set<std::string> devices;
  for (const auto& [device, check] : a) devices.insert(device);
  for (const auto& [device, check] : b) devices.insert(device);
  for (const std::string& device : devices) {
    const auto ia = a.find(device), ib = b.find(device);
    if (ia != a.end() && ib != b.end()) {
      AddRowDifferences(device, ia->second, ib->second, out);
    } else {
      out.push_back({"selfcheck " + device, ia == a.end() ? "(none)" : CheckSummary(ia->second),
                     ib == b.end() ? "(none)" : CheckSummary(ib->second)});
    }
  }
  return out;
}

}  // namespace ditbench

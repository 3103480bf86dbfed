#include "contract/selfcheck_row.h"

#include <algorithm>
#include <utility>

namespace ditbench {
namespace {

constexpr std::pair<SelfcheckVerdict, const char*> kVerdictNames[] = {
    {SelfcheckVerdict::kPass, "pass"}, {SelfcheckVerdict::kWarn, "warn"},
    {SelfcheckVerdict::kFail, "fail"}, {SelfcheckVerdict::kSkip, "skip"},
    {SelfcheckVerdict::kInfo, "info"},
};

std::string StoredText(const nlohmann::json& entry, const char* key) {
  const auto found = entry.find(key);
  if (found == entry.end() || !found->is_string()) return "";
  return found->get<std::string>().substr(0, 1000);
}

}  // namespace

const char* VerdictName(SelfcheckVerdict verdict) {
  for (const auto& [value, name] : kVerdictNames)
    if (value == verdict) return name;
  return "skip";
}

std::optional<SelfcheckVerdict> ParseVerdict(const std::string& name) {
  for (const auto& [value, text] : kVerdictNames)
    if (name == text) return value;
  return std::nullopt;
}

bool AnyFailed(const std::vector<SelfcheckRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const SelfcheckRow& row) {
    return row.verdict == SelfcheckVerdict::kFail;
  });
}

std::vector<std::string> NotPassingLines(const std::vector<SelfcheckRow>& rows) {
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    if (row.verdict == SelfcheckVerdict::kPass || row.verdict == SelfcheckVerdict::kInfo) continue;
    std::string line = row.name + ": " + VerdictName(row.verdict);
    if (!row.figure.empty()) line += ": " + row.figure;
    if (!row.reason.empty()) line += ": " + row.reason;
    lines.push_back(std::move(line));
  }
  if (lines.empty()) lines.push_back("all pass");
  return lines;
}

nlohmann::json RowsJson(const std::vector<SelfcheckRow>& rows) {
  nlohmann::json json = nlohmann::json::array();
  for (const auto& row : rows)
    json.push_back({{"name", row.name},
                    {"verdict", VerdictName(row.verdict)},
                    {"figure", row.figure},
                    {"reason", row.reason}});
  return json;
}

std::vector<SelfcheckRow> RowsFromJson(const nlohmann::json& json) {
  std::vector<SelfcheckRow> rows;
  if (!json.is_array()) return rows;
  for (const auto& entry : json) {
    if (!entry.is_object()) continue;
    const auto verdict = ParseVerdict(StoredText(entry, "verdict"));
    const std::string name = StoredText(entry, "name");
    if (!verdict || name.empty()) continue;
    rows.push_back({name, *verdict, StoredText(entry, "figure"), StoredText(entry, "reason")});
  }
  return rows;
}

}  // namespace ditbench

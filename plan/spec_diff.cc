#include "plan/spec_diff.h"

#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace ditbench {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string SpecDiff(const std::string& before, const std::string& after, int max_lines) {
  const auto a = Lines(before), b = Lines(after);
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..]. Sweep files are
  // small (tens of lines); the table is (|a|+1) x (|b|+1).
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> changes;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      changes.push_back("- " + a[i++]);
    } else {
      changes.push_back("+ " + b[j++]);
    }
  }
  std::string out;
  const int shown = std::min<int>(max_lines, static_cast<int>(changes.size()));
  for (int k = 0; k < shown; ++k) out += changes[k] + "\n";
  if (static_cast<int>(changes.size()) > shown)
    out += fmt::format("... {} more changed lines\n", changes.size() - shown);
  return out;
}

}  // namespace ditbench

// What changed between two versions of a sweep file, for the line `run` prints when a changed
// spec starts a new campaign. Pure.
#pragma once

#include <string>

namespace ditbench {

// A line diff of `before` and `after` (longest common subsequence): removed lines as
// "- line", added ones as "+ line", unchanged ones left out, at most `max_lines` lines (then
// "... N more changed lines"). Empty when the texts have the same lines.
std::string SpecDiff(const std::string& before, const std::string& after, int max_lines = 20);

}  // namespace ditbench

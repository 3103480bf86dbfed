// What a sweep file says, apart from how it is written: two files with the same meaning differ
// only in comments, blank lines, indentation, quoting or flow/block style. A campaign is one
// meaning, so a comment-only edit of the sweep file resumes its campaign. Pure.
#pragma once

#include <string>

namespace ditbench {

// The YAML document of `text` written out canonically: mappings as {key: value, ...} in the
// file's order, sequences as [...], scalars as their quoted values; comments and layout
// dropped. A text that is not YAML is its own meaning (returned as it is).
std::string SweepMeaning(const std::string& text);

// Whether two sweep texts say the same thing (SweepMeaning of both equal).
bool SameSweepMeaning(const std::string& a, const std::string& b);

}  // namespace ditbench

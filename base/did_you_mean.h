// "Did you mean": the likely intended word for a misspelled key, model or column name.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ditbench {

// Levenshtein distance: the fewest single-character insertions, deletions and substitutions
// that turn `a` into `b`.
std::size_t EditDistance(const std::string& a, const std::string& b);

// The candidate closest to `word` by edit distance, if close enough to be a likely misspelling
// (at most max(2, len/3) edits); otherwise empty.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ditbench

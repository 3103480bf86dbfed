// How readers take long texts out of the results database: cut in SQL, so that what a command
// holds grows with the rows it reads, not with what a worker (or a hand-edited database) wrote.
// An error text of a megabyte reaches a page as its first kShownTextChars characters and a
// note of its size: "... (cut: 1048576 bytes)". SQLite still reads each long value once, one
// row at a time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ditbench {

// The most characters of a stored free text (an error, a note, a run folder) that a reader
// takes; a longer one ends with kCutMark and its full size in bytes.
inline constexpr std::size_t kShownTextChars = 4096;
inline constexpr std::string_view kCutMark = " ... (cut: ";

// The largest stored JSON document (a campaign's environment) that a reader parses: a larger
// one reads as NULL, as a document that does not parse does.
inline constexpr std::size_t kMaxReadJsonBytes = 1 << 20;

// An SQL expression for text `expression` cut to kShownTextChars characters, with
// " ... (cut: N bytes)" after it when it was longer; NULL stays NULL.
std::string ShownTextSql(std::string_view expression);

// An SQL expression for `expression` when it holds at most kMaxReadJsonBytes bytes, else NULL.
std::string BoundedJsonSql(std::string_view expression);

}  // namespace ditbench

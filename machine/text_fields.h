// The small parsers text from /proc, /sys and other programs' output needs: a field without
// the blanks around it, and a small non-negative decimal number. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ditbench {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string TrimBlanks(std::string_view text);

// A decimal number of at most six digits ("0".."999999"); nullopt for anything else (a sign,
// blanks, "-1", "N/A", an empty field).
std::optional<int> SmallNumber(std::string_view text);

}  // namespace ditbench

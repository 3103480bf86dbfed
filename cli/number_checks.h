// Checks of numeric options, worded for people. CLI11's NonNegativeNumber and PositiveNumber
// name their range up to the largest double ("Value -1 not in range 0.000000 to 1797...", a
// 309-digit number); these say what is expected: "--last: expected a number of 0 or more, got
// -1".
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ditbench {

// A number of 0 or more.
inline CLI::Validator NonNegative() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value) || !(value >= 0))
          return "expected a number of 0 or more, got " + input;
        return "";
      },
      "", "NONNEGATIVE");
}

// A number above 0.
inline CLI::Validator Positive() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(input, value) || !(value > 0))
          return "expected a number above 0, got " + input;
        return "";
      },
      "", "POSITIVE");
}

}  // namespace ditbench

// An option's fixed set of values as one table: each value's name (what the user types, and
// the text stored wherever the value is recorded) and its help. Options are parsed once, at
// the CLI edge, into the enum; nothing below compares their names. A table's rows are
// Choice<E>, or any struct with the same `value`, `name` and `help` members and more of its
// own (launch/launchers.h adds how to make each launcher).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ditbench {

template <typename E>
struct Choice {
  E value;
  std::string_view name;
  std::string_view help;
};

// "a", "a or b", "a, b or c".
std::string NameList(const std::vector<std::string_view>& names);

// Throws UserError "OPTION 'TEXT': expected a, b or c" (the `names`).
[[noreturn]] void ThrowUnknownChoice(std::string_view option, std::string_view text,
                                     const std::vector<std::string_view>& names);

// The names of `choices`, in table order.
template <typename Row, std::size_t N>
std::vector<std::string_view> ChoiceNames(const std::array<Row, N>& choices) {
  std::vector<std::string_view> names;
  for (const Row& c : choices) names.push_back(c.name);
  return names;
}

// The value `text` names (exactly). Throws UserError, naming `option` and every valid name,
// for anything else.
template <typename Row, std::size_t N>
auto ParseChoice(const std::array<Row, N>& choices, std::string_view text, std::string_view option)
    -> decltype(Row::value) {
  for (const Row& c : choices)
    if (c.name == text) return c.value;
  ThrowUnknownChoice(option, text, ChoiceNames(choices));
}

// The name of `value`; empty for a value the table does not list (an option not given).
template <typename Row, std::size_t N>
std::string_view ChoiceName(const std::array<Row, N>& choices, decltype(Row::value) value) {
  for (const Row& c : choices)
    if (c.value == value) return c.name;
  return {};
}

// "a: help of a; b: help of b", for an option's --help.
template <typename Row, std::size_t N>
std::string ChoicesHelp(const std::array<Row, N>& choices) {
  std::string help;
  for (const Row& c : choices) {
    if (!help.empty()) help += "; ";
    help += std::string(c.name) + ": " + std::string(c.help);
  }
  return help;
}

}  // namespace ditbench

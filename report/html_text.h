// Text for the HTML report: escaping, numbers as the tables print them, JSON safe inside a
// <script> element, times. Pure functions; no HTML structure.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ditbench {

// `text` with &, <, >, " and ' replaced by character references, bytes that are not UTF-8 by
// U+FFFD, and control characters other than newline and tab shown as "\x1b" (untrusted text,
// base/terminal_text.h).
std::string HtmlEscape(const std::string& text);

// `value` with `format` (fmt syntax), or "-" when unset.
std::string Number(const std::optional<double>& value, const char* format = "{:.2f}");

// A fraction as a percentage with one decimal ("12.5%"), or "-" when unset.
std::string Percent(const std::optional<double>& fraction);

// Unix seconds as "2026-01-31 12:00:00 UTC".
std::string IsoTime(double unix_seconds);

// `json` dumped with no '<', '>' or '&' (escaped as \u003c...; they only occur in strings), so
// that it cannot close the <script> element it is embedded in.
std::string ScriptJson(const nlohmann::json& json);

}  // namespace ditbench

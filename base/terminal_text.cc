#include "base/terminal_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace ditbench {
namespace {

// The length of the well-formed UTF-8 sequence at `text[at]`, or 0 when it is ill-formed;
// then `*subpart` is the length of its maximal ill-formed subpart (at least 1), which is
// replaced by one U+FFFD (Unicode's "substitution of maximal subparts").
std::size_t SequenceAt(std::string_view text, std::size_t at, std::size_t* subpart) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  *subpart = 1;
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead == 0xe0) length = 3, low = 0xa0;
  else if (lead == 0xed) length = 3, high = 0x9f;  // no surrogates
  else if (lead >= 0xe1 && lead <= 0xef) length = 3;
  else if (lead == 0xf0) length = 4, low = 0x90;
  else if (lead == 0xf4) length = 4, high = 0x8f;  // nothing past U+10FFFF
  else if (lead >= 0xf1 && lead <= 0xf3) length = 4;
  else return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (at + k >= text.size()) return 0;
    const unsigned char next = byte(at + k);
    if (k == 1 ? (next < low || next > high) : (next < 0x80 || next > 0xbf)) return 0;
    *subpart = k + 1;
  }
  return length;
}

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

}  // namespace

std::string ValidUtf8(std::string_view text) {
  if (!FirstInvalidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t subpart = 0;
    const std::size_t length = SequenceAt(text, i, &subpart);
    if (length > 0) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += kReplacement;
      i += subpart;
    }
  }
  return out;
}

std::optional<std::size_t> FirstInvalidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t subpart = 0;
    const std::size_t length = SequenceAt(text, i, &subpart);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

std::string Capped(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return fmt::format("{} \xe2\x80\xa6 [{} more bytes cut]", text.substr(0, end),
                     text.size() - end);
}

std::string StoredText(std::string_view text, std::size_t max_bytes) {
  return Capped(StripTerminalControls(ValidUtf8(text)), max_bytes);
}

std::string ForTerminal(std::string_view text, std::size_t max_bytes) {
  // Printable ASCII within the cap is kept as it is: most of what a table prints (a plan's
  // 100,000 rows of numbers and names) is, and needs no walk one sequence at a time.
  if (text.size() <= max_bytes &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
    return std::string(text);
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(std::min(valid.size(), max_bytes) + 16);
  std::size_t i = 0;
  while (i < valid.size()) {
    std::size_t subpart = 0;
    const std::size_t length = SequenceAt(valid, i, &subpart);
    const std::string_view sequence(valid.data() + i, length);
    const auto ch = static_cast<unsigned char>(valid[i]);
    std::string piece;
    if (ch == '\n') piece = "\\n";
    else if (ch == '\r') piece = "\\r";
    else if (ch == '\t') piece = "\\t";
    else if (ch < 0x20 || ch == 0x7f) piece = fmt::format("\\x{:02x}", ch);
    else if (length == 2 && ch == 0xc2 && static_cast<unsigned char>(valid[i + 1]) <= 0x9f)
      piece = fmt::format("\\u{:04x}", static_cast<unsigned char>(valid[i + 1]));  // C1
    else if (length == 3 && ch == 0xe2) {
      const unsigned code = 0x2000 + ((static_cast<unsigned char>(valid[i + 1]) & 0x3f) << 6) +
                            (static_cast<unsigned char>(valid[i + 2]) & 0x3f);
      const bool bidi = (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
      piece = bidi ? fmt::format("\\u{:04x}", code) : std::string(sequence);
    } else {
      piece = std::string(sequence);
    }
    if (out.size() + piece.size() > max_bytes) {
      out += fmt::format(" \xe2\x80\xa6 [{} more bytes cut]", valid.size() - i);
      break;
    }
    out += piece;
    i += length;
  }
  return out;
}

std::string StripTerminalControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch == 0x1b) {  // ESC: drop the whole sequence
      ++i;
      if (i >= n) break;
      const char kind = text[i++];
      if (kind == '[') {  // CSI: parameters and intermediates up to a final byte 0x40..0x7e
        while (i < n && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
        if (i < n) ++i;
      } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^') {
        // OSC, DCS, APC, PM: strings ended by BEL or ST (ESC \)
        while (i < n && text[i] != '\a' && !(text[i] == 0x1b && i + 1 < n && text[i + 1] == '\\'))
          ++i;
        if (i < n) i += text[i] == '\a' ? 1 : 2;
      }
      continue;
    }
    if (ch == 0xc2 && i + 1 < n) {  // C1 controls, as UTF-8
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9f) {
        i += 2;
        continue;
      }
    }
    if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f) {
      ++i;
      continue;
    }
    out += static_cast<char>(ch);
    ++i;
  }
  return out;
}

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char ch : ValidUtf8(text)) {
    if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += static_cast<char>(ch);
  }
  return out;
}

}  // namespace ditbench

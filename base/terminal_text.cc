#include "base/terminal_text.h"

#include <fmt/format.h>

namespace ditbench {

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
  for (unsigned char ch : text) {
    if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += static_cast<char>(ch);
  }
  return out;
}

}  // namespace ditbench

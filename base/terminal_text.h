// Text that came from a worker (its result file's error, the last line of its log) is shown
// on terminals and stored in the database: terminal control sequences are taken out first,
// so that a worker cannot recolour, move the cursor of, retitle or clear the user's terminal,
// and no control character reaches a report.
#pragma once

#include <string>
#include <string_view>

namespace ditbench {

// `text` without escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, and
// two-byte `ESC x`), C0 control characters other than newline and tab, DEL, and the C1
// controls U+0080..U+009F (UTF-8 `C2 80`..`C2 9F`). Other bytes, UTF-8 included, are kept.
std::string StripTerminalControls(std::string_view text);

// `text` on one line, whatever it held (a file name, a YAML value, an exception's message):
// newline, carriage return and tab become "\n", "\r" and "\t", any other C0 control
// character and DEL "\xNN"; every other byte is kept. The one rule for putting outside text
// on one line of a diagnostic.
std::string OneLine(std::string_view text);

}  // namespace ditbench

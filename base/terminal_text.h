// Text from outside ditbench (a worker's result file and log, other processes' names, labels
// and values the user typed, a database someone else wrote) is untrusted text. One rule:
//   - stored and handed on as valid UTF-8: bytes that are not are replaced with U+FFFD
//     (ValidUtf8), or refused at the edge with a located message (FirstInvalidUtf8);
//   - capped in length where stored (StoredText, kStoredTextBytes) and printed (ForTerminal,
//     kConsoleTextBytes), with a marker saying how much was cut;
//   - control characters taken out before storing (StripTerminalControls) and escaped before
//     a terminal (ForTerminal), so that nobody can recolour, move the cursor of, retitle or
//     clear the user's terminal; pages HTML-escape it (report/html_text.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ditbench {

// The most of one untrusted text kept in the database (an error, a note): 64 KiB.
inline constexpr std::size_t kStoredTextBytes = 64 * 1024;
// The most of one untrusted text on a console line (a label, a build, a process name).
inline constexpr std::size_t kConsoleTextBytes = 300;
// The most of an error or a note on a console line (the full text is stored).
inline constexpr std::size_t kConsoleErrorBytes = 1000;

// `text` with every byte that does not begin or continue a well-formed UTF-8 sequence (a stray
// continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, a sequence cut
// short) replaced with U+FFFD, one per maximal ill-formed subpart; valid text is unchanged.
std::string ValidUtf8(std::string_view text);

// The byte offset of the first ill-formed UTF-8 sequence in `text`; nullopt when it is valid.
std::optional<std::size_t> FirstInvalidUtf8(std::string_view text);

// `text` cut to at most `max_bytes` at a character boundary, with " … [N more bytes cut]"
// appended when anything was cut. REQUIRES: `text` is valid UTF-8.
std::string Capped(std::string_view text, std::size_t max_bytes);

// Untrusted text as it is stored: valid UTF-8, terminal controls taken out (newline and tab
// kept), capped at `max_bytes`.
std::string StoredText(std::string_view text, std::size_t max_bytes = kStoredTextBytes);

// Untrusted text for one line of a terminal: valid UTF-8; C0 controls, DEL, the C1 controls
// U+0080..U+009F and the bidirectional overrides (U+202A..U+202E, U+2066..U+2069) escaped as
// "\n", "\x1b", "\u009b", ...; capped at `max_bytes` of output. Printable text is kept.
std::string ForTerminal(std::string_view text, std::size_t max_bytes = kConsoleTextBytes);

// `text` without escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, and
// two-byte `ESC x`), C0 control characters other than newline and tab, DEL, and the C1
// controls U+0080..U+009F (UTF-8 `C2 80`..`C2 9F`). Other bytes, UTF-8 included, are kept.
std::string StripTerminalControls(std::string_view text);

// `text` on one line, whatever it held (a file name, a YAML value, an exception's message):
// newline, carriage return and tab become "\n", "\r" and "\t", any other C0 control
// character and DEL "\xNN"; bytes that are not UTF-8 become U+FFFD; the rest is kept. The
// one rule for putting outside text on one line of a diagnostic.
std::string OneLine(std::string_view text);

}  // namespace ditbench

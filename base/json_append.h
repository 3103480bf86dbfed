// Writing many small JSON values into one string. nlohmann's dump() builds a serializer for
// every call (a 512-byte indent string, a zeroed 512-byte buffer and a locale query) and returns
// a new string; a plan of 100,000 trials wrote its trial keys' identity texts field by field and
// its JSON trials one by one, and paid for that some 40 times a trial.
#pragma once

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace ditbench {

// Appends values to `out` as dump() writes them, through one serializer. Borrows `out`, which
// must outlive it. Not thread-safe.
class JsonAppender {
 public:
  explicit JsonAppender(std::string& out)
      : out_(out), serializer_(nlohmann::detail::output_adapter<char>(out), ' ') {}
  JsonAppender(const JsonAppender&) = delete;
  JsonAppender& operator=(const JsonAppender&) = delete;

  // value.dump(): compact. Throws as dump() does on a string that is not UTF-8.
  void Compact(const nlohmann::json& value) { serializer_.dump(value, false, false, 0); }

  // value.dump(indent) as it reads nested `depth` spaces in: every line after the first
  // `depth` spaces further in (the first is where the caller left `out`). Objects, arrays and
  // plain strings (printable ASCII without a quote or a backslash) are laid out here, the
  // serializer's way byte for byte; numbers and every other string go through the serializer,
  // whose per-character escaping was an eighth of a 100,000-trial JSON plan.
  void Indented(const nlohmann::json& value, unsigned indent, unsigned depth) {
    if (value.is_object() || value.is_array()) return Container(value, indent, depth);
    if (value.is_string()) return String(value.get_ref<const std::string&>());
    serializer_.dump(value, false, false, 0);  // numbers, booleans, null: as the serializer does
  }

  // An object written member by member, as Indented lays out an object `depth` spaces in: the
  // caller writes '{', then Member for each member in key order (`first` for the first), then
  // CloseObject (with whether any member was written). For an object whose values come from
  // somewhere else than a JSON object (a trial's fields, experiments/trial_fields.h).
  void Member(const std::string& key, const nlohmann::json& value, unsigned indent, unsigned depth,
              bool first) {
    out_ += first ? "\n" : ",\n";
    out_.append(depth + indent, ' ');
    String(key);
    out_ += ": ";
    Indented(value, indent, depth + indent);
  }
  void CloseObject(unsigned depth, bool any) {
    if (any) {
      out_ += '\n';
      out_.append(depth, ' ');
    }
    out_ += '}';
  }

 private:
  // An object or an array as dump(indent) lays it out: "{}" or "[]" when empty, else one
  // element a line, `depth + indent` spaces in, an object's as "key": value.
  void Container(const nlohmann::json& value, unsigned indent, unsigned depth) {
    const bool object = value.is_object();
    if (value.empty()) {
      out_ += object ? "{}" : "[]";
      return;
    }
    if (object) {
      out_ += '{';
      for (auto it = value.begin(); it != value.end(); ++it)
        Member(it.key(), it.value(), indent, depth, it == value.begin());
      return CloseObject(depth, true);
    }
    out_ += "[\n";
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out_ += ",\n";
      out_.append(depth + indent, ' ');
      Indented(*it, indent, depth + indent);
    }
    out_ += '\n';
    out_.append(depth, ' ');
    out_ += ']';
  }

  // `text` as a JSON string: quoted as it is when plain, else escaped by the serializer.
  void String(const std::string& text) {
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
    if (!plain) return serializer_.dump(nlohmann::json(text), false, false, 0);
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

  std::string& out_;
  nlohmann::detail::serializer<nlohmann::json> serializer_;
};

}  // namespace ditbench

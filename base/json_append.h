// Writing many small JSON values into one string. nlohmann's dump() builds a serializer for
// every call (a 512-byte indent string, a zeroed 512-byte buffer and a locale query) and returns
// a new string; a plan of 100,000 trials wrote its trial keys' identity texts field by field and
// its JSON trials one by one, and paid for that some 40 times a trial.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ditbench {

// Appends values to `out` as dump() writes them, through one serializer. Borrows `out`, which
// must outlive it. Not thread-safe.
class JsonAppender {
 public:
  explicit JsonAppender(std::string& out)
      : serializer_(nlohmann::detail::output_adapter<char>(out), ' ') {}
  JsonAppender(const JsonAppender&) = delete;
  JsonAppender& operator=(const JsonAppender&) = delete;

  // value.dump(): compact. Throws as dump() does on a string that is not UTF-8.
  void Compact(const nlohmann::json& value) { serializer_.dump(value, false, false, 0); }

  // value.dump(indent) as it reads nested `depth` spaces in: every line after the first
  // `depth` spaces further in (the first is where the caller left `out`).
  void Indented(const nlohmann::json& value, unsigned indent, unsigned depth) {
    serializer_.dump(value, true, false, indent, depth);
  }

 private:
  nlohmann::detail::serializer<nlohmann::json> serializer_;
};

}  // namespace ditbench

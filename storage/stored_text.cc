#include "storage/stored_text.h"

#include <fmt/format.h>

namespace ditbench {

// length(CAST(x AS BLOB)) counts bytes; substr of text counts characters, so a cut never splits
// one. The size is said in bytes, what the database holds.
std::string ShownTextSql(std::string_view expression) {
  return fmt::format(
      "(CASE WHEN length(CAST({0} AS BLOB)) > {1} THEN substr({0}, 1, {1}) || '{2}' || "
      "length(CAST({0} AS BLOB)) || ' bytes)' ELSE {0} END)",
      expression, kShownTextChars, kCutMark);
}

std::string BoundedJsonSql(std::string_view expression) {
  return fmt::format("(CASE WHEN length(CAST({0} AS BLOB)) > {1} THEN NULL ELSE {0} END)",
                     expression, kMaxReadJsonBytes);
}

}  // namespace ditbench

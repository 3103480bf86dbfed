// Finding things in a rendered report page, for the report's tests.
#pragma once

#include <cstddef>
#include <string>

namespace ditbench::test {

// Where the section of the group titled `title...` begins (its <h2 id="group-N">), or npos.
inline std::size_t GroupHeading(const std::string& html, const std::string& title) {
  for (std::size_t at = html.find("<h2 id=\"group-"); at != std::string::npos;
       at = html.find("<h2 id=\"group-", at + 1)) {
    const std::size_t text = html.find("\">", at) + 2;
    if (html.compare(text, title.size(), title) == 0) return at;
  }
  return std::string::npos;
}

}  // namespace ditbench::test

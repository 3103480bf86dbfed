// The value rows of storage/result_rows.h.
#include "storage/result_rows.h"

#include <fmt/format.h>

namespace ditbench {

std::string ResultRow::resolution_label() const {
  std::string label = height == resolution || height == 0
                          ? fmt::format("{}px", resolution)
                          : fmt::format("{}x{}px", resolution, height);
  if (frames > 0) label += fmt::format(" {} frames", frames);
  return label;
}

}  // namespace ditbench

#include "model_zoo/shapes/parallel_degrees.h"

#include <fmt/format.h>

namespace ditbench {
namespace {

// The degrees above 1 by name, `separator` between them, each followed by "=value" when
// `with_value`.
std::string AboveOne(const ParallelDegrees& degrees, std::string_view separator, bool with_value) {
  std::string text;
  for (const DegreeInfo& d : kDegreeTable) {
    const int degree = degrees.*d.member;
    if (degree <= 1) continue;
    if (!text.empty()) text += separator;
    text += d.name;
    if (with_value) text += fmt::format("={}", degree);
  }
  return text;
}

}  // namespace

std::string ShortDegreesLabel(const ParallelDegrees& degrees) {
  std::string text;
  for (const DegreeInfo& d : kDegreeTable)
    if (Listed(d, degrees))
      text += fmt::format("{}{}{}", text.empty() ? "" : " ", d.short_label, degrees.*d.member);
  return text;
}

std::string DegreesAboveOne(const ParallelDegrees& degrees) {
  return AboveOne(degrees, " ", /*with_value=*/true);
}

std::string StrategyName(const ParallelDegrees& degrees) {
  return AboveOne(degrees, "+", /*with_value=*/false);
}

std::string LayoutProduct(const ParallelDegrees& degrees) {
  std::string text;
  for (auto d = kDegreeTable.rbegin(); d != kDegreeTable.rend(); ++d)
    if (Listed(*d, degrees))
      text += fmt::format("{}{} {}", text.empty() ? "" : " x ", d->name, degrees.*d->member);
  return text;
}

}  // namespace ditbench

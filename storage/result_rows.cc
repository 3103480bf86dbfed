// The value rows of storage/result_rows.h.
#include "storage/result_rows.h"

#include <fmt/format.h>

namespace ditbench {
namespace {

// The column metrics' members, by the metric's name.
struct RowColumn {
  std::string_view name;
  std::optional<double> ResultRow::*member;
};
constexpr RowColumn kRowColumns[] = {
    {"latency_ms", &ResultRow::latency_ms},
    {"ci_low_ms", &ResultRow::ci_low_ms},
    {"ci_high_ms", &ResultRow::ci_high_ms},
    {"rank0_ms", &ResultRow::rank0_ms},
    {"skew_ms", &ResultRow::skew_ms},
    {"cov", &ResultRow::cov},
    {"peak_mem_mb", &ResultRow::peak_mem_mb},
    {"tflops", &ResultRow::tflops},
    {"mfu", &ResultRow::mfu},
    {"images_per_s", &ResultRow::images_per_s},
    {"comm_mb_per_step", &ResultRow::comm_mb_per_step},
    {"energy_j", &ResultRow::energy_j},
    {"joules_per_image", &ResultRow::joules_per_image},
    {"output_error", &ResultRow::output_error},
    {"psnr", &ResultRow::psnr},
    {"ssim", &ResultRow::ssim},
};

}  // namespace

std::optional<double> ResultRow::*RowMemberOf(std::string_view metric) {
  for (const RowColumn& c : kRowColumns)
    if (c.name == metric) return c.member;
  return nullptr;
}

std::string ResultRow::resolution_label() const {
  std::string label = height == resolution || height == 0
                          ? fmt::format("{}px", resolution)
                          : fmt::format("{}x{}px", resolution, height);
  if (frames > 0) label += fmt::format(" {} frames", frames);
  return label;
}

}  // namespace ditbench

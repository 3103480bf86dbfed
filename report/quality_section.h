// What a group's parallel layouts do to the output, beside what they do to the speed
// (docs/measurement.md, "Output quality"):
//  * the image pair (scope `pipeline`): the 1-rank trial's decoded image and the worst
//    parallel one's (the lowest PSNR; without PSNR, the largest output error) side by side,
//    with their PSNR, SSIM and output error. The pictures are the PNGs the coordinator kept in
//    each run folder (runner/output_image.h), embedded as data: URIs so that the report stays
//    one self-contained file; a picture larger than kMaxEmbeddedImageBytes, or missing, is left
//    out and the page says so and where it is;
//  * the Pareto chart: speedup against the 1-rank trial (y) against PSNR (x; output error
//    when no row of the group has a PSNR), a point per configuration (folded over seeds), the
//    Pareto front marked, and a configuration below quality (experiments/quality_gate.h) marked.
// Only reads: the rows, and the run folders' PNG files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/result_rows.h"

namespace ditbench {

// The most bytes of one picture the page embeds (base64 makes it a third larger).
inline constexpr std::size_t kMaxEmbeddedImageBytes = 1 << 20;

// `bytes` as base64 (RFC 4648, padded): what a data: URI holds.
std::string Base64(const std::string& bytes);

// The image pair of a group, or "" when the group is not scope pipeline or has no parallel
// row with a PSNR or output error. REQUIRES: `rows` sorted as the group's table.
std::string RenderImagePair(const std::vector<ResultRow>& rows);

// One point of a Pareto chart: a quality (higher is better: PSNR, or minus the output error)
// and a speedup (higher is better).
struct ParetoPoint {
  double quality = 0, speedup = 0;
};
// Whether each point is on the Pareto front: no other point is at least as good in both and
// better in one. Equal points are all on it.
std::vector<bool> ParetoFront(const std::vector<ParetoPoint>& points);

// Null when fewer than two configurations, or none but the reference, have both a speedup (a
// 1-rank baseline) and a quality; the 1-rank trial itself is a point (speedup 1, exact
// output). Each point's speedup is the row's one speedup (analysis/speedup.h SpeedupOf), over
// the trial its quality is measured against, with its reference and doubts; a row with a step
// cache is never exact by position.
nlohmann::json ParetoChart(const std::string& id, const std::string& title,
                           const std::vector<ResultRow>& rows);

}  // namespace ditbench

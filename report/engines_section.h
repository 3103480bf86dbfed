// The report's answer for engines (`workload: engine`, docs/engines.md): which engine, at which
// layout, serves a shape best. Per shape (the image's or video's size, frames and steps: an
// engine's model is a label, so the shape is what two engines share), a table with a row per
// engine and layout, ditbench's own model at the same shape beside them:
//  * latency (one request at a time; its 95% interval), p95 under each load it served (with the
//    load's rate), the cold start (`ready_s`) and the first request (`first_request_ms`);
//  * the output against its reference (PSNR, SSIM, the quality verdict) and the restart band
//    the engine was measured against (`restart_psnr`; "exact" when every restart gave the same
//    image), so that a difference inside the band reads as one;
//  * a busy trial's figures marked in doubt, as everywhere in the report.
// An engine is its sweep's name and the version its server gave (the campaign's
// worker.engine_version). Where several campaigns ran the same engine and layout, the newest
// one's trials are shown. Only reads the rows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/result_rows.h"

namespace ditbench {

// The section's HTML; "" when no row is an engine trial. `engine_versions`: each campaign's
// engine version, where its server gave one.
std::string RenderEnginesSection(const std::vector<ResultRow>& rows,
                                 const std::map<std::int64_t, std::string>& engine_versions);

}  // namespace ditbench

// The report's answer for serving trials (`serve`, docs/measurement.md "Serving under load"):
// which parallel layout serves a load best.
//  * the chart: per load (the same model, shape, precision, scope and load apart from its rate),
//    the latency against the offered rate, one curve per layout (p50 solid, p95 dashed; a p95
//    the requests could not bound is left out), so that the knee where a layout's queue starts
//    to grow shows where its capacity ends;
//  * the table: per load and rate, every layout's p50, p95, throughput, queue wait and SLO
//    attainment, the best layout (the lowest p95, else p50, among those of the highest SLO
//    attainment) marked, a busy trial's figures marked in doubt, with how many of its requests
//    a busy stretch touched where that was judged ("12 of 80 requests busy": busy_requests),
//    and what ingest noted of each (a mix's figures per shape, an early stop, a replica that
//    fell behind).
// Only reads the rows; open-loop trials at a rate are charted, closed loops and traces are in
// the table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/result_rows.h"

namespace ditbench {

// One serving trial as the section reads it: its load without the rate (what a chart and a
// table group by), the rate (0 for a closed loop or a trace), its layout and figures.
struct ServedTrial {
  std::string load;  // model, shape and the load's settings but its rate: "pixart-alpha-tiny ..."
  double rate = 0;   // offered requests a second (open loop), else 0
  // A share of capacity (`rate: sweep`): its share and the capacity it is of (requests/s).
  std::optional<double> of_capacity, capacity_per_s;
  std::string layout;  // ConfigurationLabel: "ulysses=2", "dp=2 vae_parallel=2", "1 rank"
  std::string color;   // its strategy's colour (report/chart_style.h)
  double p50_ms = 0;
  std::optional<double> p95_ms;  // unset when its requests could not bound it
  std::optional<double> requests_per_s, slo_attainment, queue_ms;
  bool busy = false;
  // What ingest said of its figures (ResultRow::metrics_note): each request shape's figures,
  // an early stop, an unbounded tail, a replica that fell behind; "" when nothing.
  std::string note;
  // The timed requests (its iterations, over every launch) and how many of them a busy stretch
  // of the machine touched; unset when that was not judged (metrics/busy_requests.h).
  std::int64_t requests = 0;
  std::optional<double> busy_requests;
  // "12 of 80 requests busy" when some were, else "".
  std::string BusyRequestsText() const;
};

// The serving trials among `rows` (ok rows whose computation has a `serve`), in row order.
std::vector<ServedTrial> ServedTrials(const std::vector<ResultRow>& rows);

// The section's HTML (its heading, a chart per load with a rate, the table), appending its
// charts (kind "serving") to `charts`; "" without serving trials.
std::string RenderServingSection(const std::vector<ResultRow>& rows, nlohmann::json& charts);

}  // namespace ditbench

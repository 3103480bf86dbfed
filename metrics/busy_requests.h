// Serving under load (issue 39): which of a serving trial's requests the machine's busy
// stretches touched. While a trial runs the coordinator samples the machine's health and keeps
// the stretches it judged busy, on the host's monotonic clock (machine/machine_health.h:
// TrialHealth::BusyWindows); a serving rank says when its load started on the same clock
// (RankResult::serve_start_monotonic_s), and its requests' times count from there. A request is
// busy when its span, arrival to end, overlaps a busy stretch: its latency, queue wait included,
// may hold someone else's work. A trial is busy as a whole when any sample is; this says which
// of its requests were.
//
// Only meaningful when the rank and the coordinator read one monotonic clock, that is share a
// host: the caller gives stretches only then (runner/sweep_loop.cc, Launcher::RanksShareHost).
// Pure; torch-free.
#pragma once

#include <vector>

#include "contract/measurement_records.h"
#include "metrics/time_intervals.h"

namespace ditbench {

// Marks busy each of `records` whose [arrival_ms, end_ms], placed at `load_start_s` (seconds of
// the host's monotonic clock; the records' times are ms from it), overlaps `busy_s` (stretches
// of the same clock, seconds) by more than nothing; leaves the others as they were.
void MarkBusyRequests(const IntervalSet& busy_s, double load_start_s,
                      std::vector<RequestRecord>& records);

}  // namespace ditbench

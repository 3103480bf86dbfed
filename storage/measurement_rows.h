#pragma once
// The rows one measured launch adds beside its trial (storage/campaign_writer.cc writes the trial
// and launch rows and calls these inside the launch's transaction): its samples, the trial's
// metrics, its profiles and what each step ran.

#include <cstdint>
#include <vector>

#include <sqlite3.h>

#include "contract/measurement_records.h"
#include "metrics/trial_trace.h"

namespace ditbench {

// Every sample of launch `launch` of the trial.
void InsertSamples(sqlite3* db, std::int64_t trial_id, int launch,
                   const std::vector<Sample>& samples);

// The trial's summary row and its metric values (storage/metric_values.h).
void InsertMetrics(sqlite3* db, std::int64_t trial_id, const TrialMetrics& m);

// A trial's profiles (`profile: trace`) beside its metrics: every rank's as JSON, and the
// slowest rank's shares of its step time.
void InsertTrace(sqlite3* db, std::int64_t trial_id, const TrialTrace& trace);

// What each step of the trial ran (contract/measurement_records.h), beside its metrics: the
// steps as JSON, and the attention kernels of all its steps, distinct, joined by '+'.
void InsertSteps(sqlite3* db, std::int64_t trial_id, const std::vector<StepKernels>& steps);

}  // namespace ditbench

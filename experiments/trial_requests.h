// Where a served trial's requests come from before its trial file exists: generated from its
// load, or read from its trace. The coordinator materializes them once into the trial's file
// (MaterializeRequests, contract/worker_contract.h's TrialFile::requests); at run time the
// worker ranks and ingest read them from there and never call these. Validity and the plan,
// which run before any trial file is written, compute them here.
#pragma once

#include <vector>

#include "experiments/serve_load.h"
#include "experiments/trial.h"

namespace ditbench {

// The shapes a served trial's requests ask for, which Request::shape indexes: the resolved mix,
// or the distinct shapes of its trace in order of first use. Throws UserError for a trace that
// cannot be read (naming its line) or whose bytes are not those of its trace_sha256.
// REQUIRES: config.serve.
std::vector<RequestShape> TrialShapes(const TrialConfig& config);
// Its requests in arrival order: generated from the load, or read from its trace. Throws
// UserError for a trace as TrialShapes, std::invalid_argument for an invalid load.
std::vector<Request> TrialRequests(const TrialConfig& config);
// Both at once (a trace read once): what the coordinator writes into the trial's file. Throws
// as TrialRequests.
RequestList MaterializeRequests(const TrialConfig& config);

}  // namespace ditbench

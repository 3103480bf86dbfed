// What a serving trial's rank files say of its load (`serve`, experiments/serve_load.h),
// checked before anything is derived from it: every request of the load served once, as the
// load made it, within the trial's time, and timed as its leader's samples say. Pure, no I/O.
#pragma once

#include <optional>
#include <vector>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "metrics/trial_metrics.h"

namespace ditbench {

// Why a serving trial's ranks' requests (RankResult::requests) are not the load's requests each
// served once, or nothing. Only a replica's leader (its rank of every coordinate but dp 0)
// records requests, each of its own replica; every request of TrialRequests(config) is served
// exactly once (an early stop: the load's first K); an open loop's arrival is the generated one
// (within a microsecond); no request starts before it arrives, ends before it starts, or ends
// after the trial's timeout (its load starts within the trial); at least one request is past
// the warm-up ones ("no timed request: all 5 requests were warm-up"). A leader's own samples
// of its requests (metrics/serve_loop.h: stage "iteration" the latency, "queue" the wait,
// "service" the service) must be what its requests' times say, one latency for each request
// and none for a request it did not serve: the first contradiction is named with the
// request's index, the field and both values. A trace that cannot be read is a problem of
// rank 0.
std::optional<RankProblem> ServedRequestsProblem(const TrialConfig& config,
                                                 const std::vector<RankResult>& ranks);

}  // namespace ditbench

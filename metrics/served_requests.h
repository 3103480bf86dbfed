// What a serving trial's rank files say of its load (`serve`, experiments/serve_load.h),
// checked before anything is derived from it: every request of the load served once, as the
// load made it, within the trial's time, and timed as its leader's samples say. Pure, no I/O.
#pragma once

#include <optional>
#include <vector>

#include "contract/worker_contract.h"
#include "experiments/trial.h"
#include "metrics/time_intervals.h"
#include "metrics/trial_metrics.h"

namespace ditbench {

// Why a serving trial's ranks' requests (RankResult::requests) are not the load's requests each
// served once, or nothing. Only a replica's leader (its rank of every coordinate but dp 0)
// records requests, each of its own replica; every request of `load` (the trial file's,
// contract/worker_contract.h's TrialFile::requests) is served
// exactly once (an early stop: the load's first K); an open loop's arrival is the generated one
// (within a microsecond); no request starts before it arrives, ends before it starts, or ends
// after the trial's timeout (its load starts within the trial); at least one request is past
// the warm-up ones ("no timed request: all 5 requests were warm-up"). A leader's own samples
// of its requests (metrics/serve_loop.h: stage "iteration" the latency, "queue" the wait,
// "service" the service) must be what its requests' times say, one latency for each request
// and none for a request it did not serve: the first contradiction is named with the
// request's index, the field and both values. REQUIRES: config.serve.
std::optional<RankProblem> ServedRequestsProblem(const TrialConfig& config, const RequestList& load,
                                                 const std::vector<RankResult>& ranks);

// A served trial's figures (metrics/serving.h) over ComputeTrialMetrics's, from its replicas'
// leaders' requests past the warm-up ones: the latency's interval from order statistics, the
// tail percentiles a count of requests bounds, queue wait, throughput (per GPU over the trial's
// ranks), SLO attainment and goodput, each shape's figures of a mix (from `load`'s shapes), an
// early stop against the requests `load` offered; with `busy_s`, the requests a busy stretch
// touched (metrics/busy_requests.h). Throughput replaces images_per_s; TFLOPS and MFU, which
// would count waits as work, are left unset. REQUIRES: ServedRequestsProblem found nothing;
// throws std::invalid_argument for an empty `load`.
void AddServedMetrics(const TrialConfig& config, const RequestList& load,
                      const std::vector<RankResult>& ranks, const IntervalSet* busy_s,
                      TrialMetrics& m);

}  // namespace ditbench

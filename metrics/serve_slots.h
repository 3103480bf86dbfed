// A serving load (experiments/serve_load.h) sent by one process through N client slots: how an
// engine's client (runner/engine_trial.h) drives a server that has its own queue. Each slot is
// a thread running the serving loop of metrics/serve_loop.h as a replica's leader, the slots
// sharing an in-process queue, so that the arrivals, the closed loop, the early stop and the
// records are the loop's own, not a copy of it. A slot sends one request at a time: an open
// loop's request is sent at its arrival while a slot is free, and waits for one otherwise (that
// wait is the record's queue time, the client's; the server's own queueing is inside the
// service time, which the client cannot see apart).
//
// Every record is the one replica's (replica 0): the client does not know which of the
// server's replicas answered.
#pragma once

#include <functional>

#include "metrics/serve_loop.h"

namespace ditbench {

// How one request went: answered; answered with an error (its record is flagged failed); or
// failed so that the load cannot go on (the server is gone): flagged, and no request is sent
// after it, so the records are the requests sent until then. A load stopped early
// (ServeLoad::stop_percentile) likewise sends nothing more.
enum class SlotOutcome { kServed, kFailed, kStopLoad };

// One request of `shape` sent through slot `slot`. May throw: the load stops, every slot
// ends, and ServeFromSlots rethrows the first error (what was served is lost).
using SlotWork = std::function<SlotOutcome(int slot, int shape)>;

// Serves options.requests through `slots` threads (1 or more; a closed loop of concurrency c
// needs at least c). REQUIRES: options.isolated_ms measured for every shape (step 1 of the
// loop is the caller's: it times its server alone). The records are sorted by request index.
ServedRequests ServeFromSlots(const ServeRankOptions& options, int slots, HostClock& host,
                              const SlotWork& work);

}  // namespace ditbench

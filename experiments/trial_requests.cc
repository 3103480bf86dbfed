#include "experiments/trial_requests.h"

#include <fmt/format.h>

#include "base/terminal_text.h"
#include "base/user_error.h"
#include "experiments/arrivals.h"

namespace ditbench {
namespace {

// A trace load's trace, refused when its bytes are no longer those the trial's key was made
// from (ServeLoad::trace_sha256): the trial would be measured on another load than it names.
ArrivalTrace TraceOfLoad(const ServeLoad& load) {
  ArrivalTrace trace = ReadArrivalTrace(load.trace);
  if (!load.trace_sha256.empty() && trace.sha256 != load.trace_sha256)
    throw UserError(fmt::format("{}: has changed since the sweep was read (its SHA-256 is {}, "
                                "the trial's {}); expected the trace the trial's key was made "
                                "from (read the sweep again)",
                                OneLine(load.trace.string()), trace.sha256.substr(0, 16),
                                load.trace_sha256.substr(0, 16)),
                    {load.trace.string(), 0, "serve.trace"});
  return trace;
}

}  // namespace

std::vector<RequestShape> TrialShapes(const TrialConfig& config) {
  const ServeLoad load = TrialServeLoad(config);
  if (load.arrivals != ArrivalKind::kTrace) return load.mix;
  return TraceOfLoad(load).shapes;
}

std::vector<Request> TrialRequests(const TrialConfig& config) {
  const ServeLoad load = TrialServeLoad(config);
  if (load.arrivals != ArrivalKind::kTrace) return GenerateArrivals(load);
  return TraceOfLoad(load).requests;
}

RequestList MaterializeRequests(const TrialConfig& config) {
  const ServeLoad load = TrialServeLoad(config);
  if (load.arrivals != ArrivalKind::kTrace) return {load.mix, GenerateArrivals(load)};
  ArrivalTrace trace = TraceOfLoad(load);
  return {std::move(trace.shapes), std::move(trace.requests)};
}

}  // namespace ditbench

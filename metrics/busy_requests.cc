#include "metrics/busy_requests.h"

namespace ditbench {

void MarkBusyRequests(const IntervalSet& busy_s, double load_start_s,
                      std::vector<RequestRecord>& records) {
  for (RequestRecord& q : records) {
    const double arrival_s = load_start_s + q.arrival_ms / 1000;
    const double end_s = load_start_s + q.end_ms / 1000;
    if (busy_s.LengthWithin(arrival_s, end_s) > 0) q.busy = true;
  }
}

}  // namespace ditbench

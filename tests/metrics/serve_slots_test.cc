// A load served through client slots (metrics/serve_slots.h): threads running the serving loop
// on one in-process queue. What is checked is structure, never timing: every request served once
// in arrival order's records, an open loop's arrivals as generated, a closed loop's as
// completions, and a failing request ending every slot with its error.
#include "metrics/serve_slots.h"

#include <atomic>
#include <set>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "experiments/arrivals.h"

namespace ditbench::serve_slots_test {
namespace {

ServeRankOptions Options(const ServeLoad& load) {
  ServeRankOptions options;
  options.load = load;
  options.requests = GenerateArrivals(load);
  options.isolated_ms = {5};
  return options;
}

ServeLoad OpenLoop(int requests) {
  ServeLoad load;
  load.arrivals = ArrivalKind::kConstant;
  load.rate_per_s = 2000;
  load.requests = requests;
  load.warmup_requests = 2;
  load.mix = {RequestShape{}};
  return load;
}

ServeLoad ClosedLoop(int concurrency, int requests) {
  ServeLoad load;
  load.concurrency = concurrency;
  load.requests = requests;
  load.mix = {RequestShape{}};
  return load;
}

TEST(ServeSlotsTest, AnOpenLoopIsServedOnceEachAtItsArrival) {
  const ServeRankOptions options = Options(OpenLoop(30));
  SteadyHostClock host;
  std::atomic<int> calls{0};
  const ServedRequests served = ServeFromSlots(options, 8, host, [&](int slot, int shape) {
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, 8);
    EXPECT_EQ(shape, 0);
    ++calls;
    return SlotOutcome::kServed;
  });
  EXPECT_EQ(calls.load(), 32);  // the 2 warm-up requests and 30
  ASSERT_EQ(served.records.size(), 32u);
  for (std::size_t i = 0; i < served.records.size(); ++i) {
    const RequestRecord& r = served.records[i];
    EXPECT_EQ(r.index, static_cast<int>(i));
    EXPECT_EQ(r.replica, 0);  // the client cannot tell the server's replicas apart
    EXPECT_DOUBLE_EQ(r.arrival_ms, options.requests[i].arrival_s * 1000);
    EXPECT_GE(r.start_ms, r.arrival_ms);
    EXPECT_GE(r.end_ms, r.start_ms);
    EXPECT_EQ(r.isolated_ms, 5);
  }
  RankResult result;
  RecordServed(served, options.load.warmup_requests, true, result);
  EXPECT_EQ(result.requests.size(), 32u);
  EXPECT_EQ(result.samples.size(), 3u * 32u);  // latency, queue and service of each
  EXPECT_EQ(result.stop_reason, "served");
}

TEST(ServeSlotsTest, AClosedLoopIssuesEachRequestAtACompletion) {
  const ServeRankOptions options = Options(ClosedLoop(3, 20));
  SteadyHostClock host;
  const ServedRequests served =
      ServeFromSlots(options, 3, host, [](int, int) { return SlotOutcome::kServed; });
  ASSERT_EQ(served.records.size(), 20u);
  std::multiset<double> ends;
  for (const RequestRecord& r : served.records) ends.insert(r.end_ms);
  for (const RequestRecord& r : served.records) {
    if (r.index < 3)
      EXPECT_EQ(r.arrival_ms, 0);
    else
      EXPECT_TRUE(ends.contains(r.arrival_ms)) << "request " << r.index;
  }
}

TEST(ServeSlotsTest, AFailingRequestEndsEverySlotWithItsError) {
  for (const ServeLoad& load : {OpenLoop(40), ClosedLoop(2, 40)}) {
    SteadyHostClock host;
    std::atomic<int> calls{0};
    EXPECT_THAT(
        [&] {
          (void)ServeFromSlots(Options(load), 4, host, [&](int, int) {
            if (++calls == 5) throw std::runtime_error("request 5: HTTP 500");
            return SlotOutcome::kServed;
          });
        },
        ::testing::ThrowsMessage<std::runtime_error>("request 5: HTTP 500"));
    EXPECT_LT(calls.load(), 42);  // the load stopped
  }
}

// A request answered with an error is flagged failed and the load goes on; one that cannot go on
// (the server gone) stops it: the records are the requests taken until then.
TEST(ServeSlotsTest, FailedRequestsAreFlaggedAndAStopEndsTheLoad) {
  SteadyHostClock host;
  std::atomic<int> calls{0};
  const ServedRequests flagged = ServeFromSlots(Options(ClosedLoop(1, 10)), 1, host, [&](int, int) {
    return ++calls % 3 == 0 ? SlotOutcome::kFailed : SlotOutcome::kServed;
  });
  ASSERT_EQ(flagged.records.size(), 10u);
  for (const RequestRecord& r : flagged.records) EXPECT_EQ(r.failed, (r.index + 1) % 3 == 0);
  RankResult result;
  RecordServed(flagged, 0, true, result);
  EXPECT_EQ(result.samples.size(), 3u * 7u);  // no latency of a failed request

  calls = 0;
  const ServedRequests stopped = ServeFromSlots(Options(ClosedLoop(1, 10)), 1, host, [&](int, int) {
    return ++calls == 4 ? SlotOutcome::kStopLoad : SlotOutcome::kServed;
  });
  ASSERT_EQ(stopped.records.size(), 4u);
  EXPECT_TRUE(stopped.records.back().failed);
}

TEST(ServeSlotsTest, FewerSlotsThanTheClosedLoopsConcurrencyAreRefused) {
  SteadyHostClock host;
  EXPECT_THROW((void)ServeFromSlots(Options(ClosedLoop(4, 8)), 2, host,
                                    [](int, int) { return SlotOutcome::kServed; }),
               std::invalid_argument);
}

}  // namespace
}  // namespace ditbench::serve_slots_test

// Which served requests a busy stretch of the machine touched (metrics/busy_requests.h).
#include "metrics/busy_requests.h"

#include <gtest/gtest.h>

namespace ditbench::busy_requests_test {
namespace {

// A request of the load that arrived at `arrival_ms`, started at `start_ms` and ended at
// `end_ms` (ms from the load's start).
RequestRecord Served(int index, double arrival_ms, double start_ms, double end_ms) {
  RequestRecord q;
  q.index = index;
  q.arrival_ms = arrival_ms;
  q.start_ms = start_ms;
  q.end_ms = end_ms;
  q.isolated_ms = 100;
  return q;
}

std::vector<bool> BusyFlags(const std::vector<RequestRecord>& records) {
  std::vector<bool> busy;
  for (const RequestRecord& q : records) busy.push_back(q.busy);
  return busy;
}

// The load started at 1000.0 s of the host's clock; the machine was busy from 1000.5 s to
// 1000.75 s (a quarter-second sample) and from 1003.0 s to 1003.5 s.
TEST(BusyRequestsTest, ARequestIsBusyWhenItsSpanFromArrivalToEndOverlapsABusyStretch) {
  const IntervalSet busy({{1000.5, 1000.75}, {1003.0, 1003.5}});
  std::vector<RequestRecord> records = {
      Served(0, 0, 0, 400),         // 1000.0 - 1000.4: before the first stretch
      Served(1, 300, 400, 800),     // 1000.3 - 1000.8: served through it
      Served(2, 600, 800, 1200),    // 1000.6 - 1001.2: waited in the queue through it
      Served(3, 1500, 1500, 1900),  // 1001.5 - 1001.9: between the two
      Served(4, 2900, 2900, 3000),  // 1002.9 - 1003.0: ends as the second begins
      Served(5, 3400, 3400, 3800),  // 1003.4 - 1003.8: begins inside the second
      Served(6, 3500, 3500, 3900),  // 1003.5 - 1003.9: begins as the second ends
  };
  MarkBusyRequests(busy, 1000.0, records);
  EXPECT_EQ(BusyFlags(records), (std::vector<bool>{false, true, true, false, false, true, false}));
}

// The stretches are placed by the load's start: of two requests, the first is busy in a load
// that started at 1000 s (1000.3 - 1000.8 s), the second in one that started at 1001.5 s
// (1003.0 - 1003.4 s).
TEST(BusyRequestsTest, TheLoadsStartPlacesTheRequestsOnTheHostsClock) {
  const IntervalSet busy({{1000.5, 1000.75}, {1003.0, 1003.5}});
  const std::vector<RequestRecord> load = {Served(0, 300, 400, 800), Served(1, 1500, 1500, 1900)};
  std::vector<RequestRecord> records = load;
  MarkBusyRequests(busy, 1000.0, records);
  EXPECT_EQ(BusyFlags(records), (std::vector<bool>{true, false}));
  records = load;
  MarkBusyRequests(busy, 1001.5, records);
  EXPECT_EQ(BusyFlags(records), (std::vector<bool>{false, true}));
}

TEST(BusyRequestsTest, NoStretchMarksNothingAndAMarkIsNeverTakenBack) {
  std::vector<RequestRecord> records = {Served(0, 0, 0, 400), Served(1, 300, 400, 800)};
  records[1].busy = true;
  MarkBusyRequests(IntervalSet(), 1000.0, records);
  EXPECT_EQ(BusyFlags(records), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace ditbench::busy_requests_test

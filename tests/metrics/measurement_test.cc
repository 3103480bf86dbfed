#include "metrics/measurement.h"

#include <map>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/fakes.h"

namespace ditbench::measurement_test {
namespace {

using test::FakeClock;
using test::FakeEnergyCounter;
using test::ThreadRankGroups;

// Work with `stages` stages; stage s of iteration i takes stage_ms(i, s) on `clock`.
Work StagedWork(FakeClock& clock, int stages, std::function<double(int, int)> stage_ms) {
  return [&clock, stages, stage_ms](Stages& marks) {
    for (int s = 0; s < stages; ++s) {
      marks.Begin("step:" + std::to_string(s));
      clock.Advance(stage_ms(clock.iteration(), s));
      marks.End();
    }
  };
}

std::vector<Sample> IterationSamples(const Measurement& m) {
  std::vector<Sample> out;
  for (const auto& s : m.samples)
    if (s.stage == "iteration") out.push_back(s);
  return out;
}

TEST(MeasurementTest, WarmupIterationsAreKeptAndFlagged) {
  FakeClock clock;
  auto stage_ms = [](int iteration, int) { return iteration < 2 ? 100.0 : 10.0; };
  SingleRankGroup group;
  MeasureOptions options;
  options.warmup = 2;
  options.repeats = {3, 3, 0, 0};
  Measurement m = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
  auto iterations = IterationSamples(m);
  ASSERT_EQ(iterations.size(), 5u);
  EXPECT_TRUE(iterations[0].warmup);
  EXPECT_TRUE(iterations[1].warmup);
  EXPECT_DOUBLE_EQ(iterations[0].ms, 100.0);
  for (int i = 2; i < 5; ++i) {
    EXPECT_FALSE(iterations[i].warmup);
    EXPECT_DOUBLE_EQ(iterations[i].ms, 10.0);
  }
  // The slow warm-up never reaches the timed series.
  EXPECT_EQ(m.slowest_ms, (std::vector<double>{10.0, 10.0, 10.0}));
  EXPECT_EQ(m.timed_iterations, 3);
  EXPECT_EQ(m.stop_reason, "max");
}

TEST(MeasurementTest, StageTimesAreRecordedPerStep) {
  FakeClock clock;
  auto stage_ms = [](int, int stage) { return 1.0 + stage; };  // 1, 2, 3 ms
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {1, 1, 0, 0};
  Measurement m = Measure(options, group, clock, StagedWork(clock, 3, stage_ms));
  ASSERT_EQ(m.samples.size(), 4u);
  EXPECT_EQ(m.samples[0].stage, "iteration");
  EXPECT_DOUBLE_EQ(m.samples[0].ms, 6.0);
  EXPECT_EQ(m.samples[1].stage, "step:0");
  EXPECT_DOUBLE_EQ(m.samples[1].ms, 1.0);
  EXPECT_EQ(m.samples[3].stage, "step:2");
  EXPECT_DOUBLE_EQ(m.samples[3].ms, 3.0);
  EXPECT_EQ(clock.synchronized(), 1);
}

TEST(MeasurementTest, NestedStagesTimeEachBlockAndTheWholeStep) {
  FakeClock clock;
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {1, 1, 0, 0};
  Measurement m = Measure(options, group, clock, [&](Stages& stages) {
    clock.Advance(5);  // before any step: counted in the iteration only
    stages.Begin("step:0");
    clock.Advance(1);  // embedding, outside the blocks
    for (int b = 0; b < 2; ++b) {
      stages.Begin("block:" + std::to_string(b));
      clock.Advance(10.0 * (b + 1));
      stages.End();
    }
    clock.Advance(2);  // final layer and sampler
    stages.End();
  });
  std::map<std::string, double> ms;
  for (const auto& s : m.samples) ms[s.stage] = s.ms;
  EXPECT_DOUBLE_EQ(ms.at("iteration"), 38);
  EXPECT_DOUBLE_EQ(ms.at("step:0"), 33);
  EXPECT_DOUBLE_EQ(ms.at("step:0/block:0"), 10);
  EXPECT_DOUBLE_EQ(ms.at("step:0/block:1"), 20);
}

TEST(MeasurementTest, StopsWhenConfidenceIntervalIsTightButNeverBeforeMin) {
  FakeClock clock;
  auto stage_ms = [](int, int) { return 10.0; };  // perfectly stable
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {7, 100, 0.01, 0};
  Measurement m = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
  EXPECT_EQ(m.timed_iterations, 7);
  EXPECT_EQ(m.stop_reason, "target_rel_ci");
}

TEST(MeasurementTest, NoisyWorkRunsToMax) {
  FakeClock clock;
  auto stage_ms = [](int iteration, int) { return iteration % 2 ? 5.0 : 50.0; };
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {3, 12, 0.001, 0};
  Measurement m = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
  EXPECT_EQ(m.timed_iterations, 12);
  EXPECT_EQ(m.stop_reason, "max");
}

TEST(MeasurementTest, TimeBudgetStopsAfterMin) {
  FakeClock clock;
  auto stage_ms = [](int, int) { return 400.0; };
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {2, 100, 0, 1.0};  // 1 s budget: 3 iterations of 400 ms
  Measurement m = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
  EXPECT_EQ(m.timed_iterations, 3);
  EXPECT_EQ(m.stop_reason, "max_seconds");
}

TEST(MeasurementTest, SlowRankSetsEveryRanksSeriesAndTheyStopTogether) {
  ThreadRankGroups shared(2);
  std::vector<Measurement> results(2);
  std::vector<int> barriers(2);
  auto run = [&](int rank) {
    ThreadRankGroups::Group group(&shared, rank);
    // Rank 1 is 3x slower; the target CI would stop a stable rank early, but both must agree.
    FakeClock clock;
    auto stage_ms = [rank](int iteration, int) { return rank == 1 ? 30.0 + iteration % 3 : 10.0; };
    MeasureOptions options;
    options.warmup = 1;
    options.repeats = {4, 9, 0.05, 0};
    results[rank] = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
    barriers[rank] = group.barriers();
  };
  std::thread t0(run, 0), t1(run, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(results[0].timed_iterations, results[1].timed_iterations);
  EXPECT_EQ(results[0].slowest_ms, results[1].slowest_ms);
  for (double ms : results[0].slowest_ms) EXPECT_GE(ms, 30.0);
  // One barrier before every iteration, warm-up included.
  EXPECT_EQ(barriers[0], results[0].timed_iterations + 1);
}

TEST(MeasurementTest, EnergyCoversExactlyTheTimedIterations) {
  FakeClock clock;
  // Warm-up iterations of 100 ms, timed ones of 10 ms; a 300 W board.
  auto stage_ms = [](int iteration, int) { return iteration < 2 ? 100.0 : 10.0; };
  FakeEnergyCounter counter(clock, 300);
  counter.SetBase(5e6);  // a counter that has run for a while
  SingleRankGroup group;
  MeasureOptions options;
  options.warmup = 2;
  options.repeats = {3, 3, 0, 0};
  options.energy = &counter;
  Measurement m = Measure(options, group, clock, StagedWork(clock, 1, stage_ms));
  ASSERT_TRUE(m.energy.has_value()) << m.energy_unavailable;
  EXPECT_EQ(counter.reads(), 2);  // the two edges, nothing per iteration
  // 3 timed iterations x 10 ms at 300 W = 9 J; the 200 ms of warm-up left out.
  EXPECT_DOUBLE_EQ(m.energy->joules, 9.0);
  EXPECT_DOUBLE_EQ(m.energy->window_ms, 30.0);
  EXPECT_TRUE(m.energy_unavailable.empty());
}

TEST(MeasurementTest, EnergyWithoutWarmupStartsAtTheFirstIteration) {
  FakeClock clock;
  FakeEnergyCounter counter(clock, 100);
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {4, 4, 0, 0};
  options.energy = &counter;
  Measurement m =
      Measure(options, group, clock, StagedWork(clock, 2, [](int, int) { return 5.0; }));
  ASSERT_TRUE(m.energy.has_value()) << m.energy_unavailable;
  EXPECT_DOUBLE_EQ(m.energy->joules, 4.0);  // 4 iterations x 10 ms x 100 W
}

TEST(MeasurementTest, WithoutACounterThereIsNoEnergyAndNoReason) {
  FakeClock clock;
  SingleRankGroup group;
  MeasureOptions options;
  options.repeats = {2, 2, 0, 0};
  Measurement m =
      Measure(options, group, clock, StagedWork(clock, 1, [](int, int) { return 1.0; }));
  EXPECT_FALSE(m.energy.has_value());
  EXPECT_TRUE(m.energy_unavailable.empty());
}

TEST(MeasurementTest, AFailingEnergyReadLeavesTheEnergyUnsetWithItsReason) {
  for (int failing_read : {0, 1}) {  // the start's read, or the end's
    FakeClock clock;
    FakeEnergyCounter counter(clock, 300);
    counter.FailFromRead(failing_read);
    SingleRankGroup group;
    MeasureOptions options;
    options.warmup = 1;
    options.repeats = {3, 3, 0, 0};
    options.energy = &counter;
    Measurement m =
        Measure(options, group, clock, StagedWork(clock, 1, [](int, int) { return 2.0; }));
    EXPECT_FALSE(m.energy.has_value()) << failing_read;
    EXPECT_EQ(m.energy_unavailable, "the fake counter fails") << failing_read;
    EXPECT_EQ(m.timed_iterations, 3) << "the timing goes on without energy";
  }
}

TEST(EnergyBetweenTest, ACounterThatWentBackIsRefusedWithItsValues) {
  std::string why;
  EXPECT_FALSE(EnergyBetween({5000, 10}, {4000, 20}, &why).has_value());
  EXPECT_NE(why.find("went back from 5000 to 4000 mJ"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(EnergyBetween({5000, 10}, {6000, 10}, &why).has_value());
  EXPECT_NE(why.find("no length"), std::string::npos) << why;
  auto window = EnergyBetween({5000, 10}, {7500, 510}, &why);
  ASSERT_TRUE(window.has_value());
  EXPECT_DOUBLE_EQ(window->joules, 2.5);
  EXPECT_DOUBLE_EQ(window->window_ms, 500.0);
}

TEST(EnergyCounterTest, ACpuRankHasNoCounterAndNothingToSay) {
  bool opened = false;
  const EnergyCounterOpener open = [&](const std::string&, std::string*) {
    opened = true;
    return std::unique_ptr<EnergyCounter>();
  };
  std::string why;
  EXPECT_EQ(RankEnergyCounter(/*gpu=*/false, "", &why, open), nullptr);
  EXPECT_FALSE(opened);
  EXPECT_EQ(why, "");
}

TEST(EnergyCounterTest, AGpuRankOpensItsOwnBoardsCounterOrSaysWhyNot) {
  FakeClock clock;
  std::string asked;
  const EnergyCounterOpener open = [&](const std::string& bus_id, std::string*) {
    asked = bus_id;
    return std::unique_ptr<EnergyCounter>(std::make_unique<FakeEnergyCounter>(clock, 100));
  };
  std::string why;
  EXPECT_NE(RankEnergyCounter(true, "0000:3B:00.0", &why, open), nullptr);
  EXPECT_EQ(asked, "0000:3B:00.0");
  EXPECT_EQ(why, "");
  asked.clear();
  EXPECT_EQ(RankEnergyCounter(true, "", &why, open), nullptr);
  EXPECT_EQ(asked, "") << "no bus id: nothing to open";
  EXPECT_NE(why.find("PCI bus id is unknown"), std::string::npos) << why;
  const EnergyCounterOpener fails = [](const std::string&, std::string* why_not) {
    *why_not = "no counter on this board";
    return std::unique_ptr<EnergyCounter>();
  };
  why.clear();
  EXPECT_EQ(RankEnergyCounter(true, "0000:3B:00.0", &why, fails), nullptr);
  EXPECT_EQ(why, "no counter on this board");
}

TEST(EnergyCounterTest, MissingNvmlLibraryGivesNoCounterAndAClearReason) {
  std::string why;
  EXPECT_EQ(OpenNvmlEnergyCounter("0000:3B:00.0", &why, "libditbench-no-such-nvml.so.1"),
            nullptr);
  EXPECT_NE(why.find("libditbench-no-such-nvml.so.1 cannot be loaded"), std::string::npos)
      << why;
}

TEST(EnergyCounterTest, ALibraryWithoutTheEnergyFunctionGivesNoCounter) {
  std::string why;  // libc loads, and has no NVML function
  EXPECT_EQ(OpenNvmlEnergyCounter("0000:3B:00.0", &why, "libc.so.6"), nullptr);
  EXPECT_NE(why.find("lacks nvmlDeviceGetTotalEnergyConsumption"), std::string::npos) << why;
}

}  // namespace
}  // namespace ditbench::measurement_test

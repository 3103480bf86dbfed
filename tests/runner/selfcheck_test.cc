// `ditbench selfcheck`'s run (runner/selfcheck.h) through its seams: a fake launcher that
// "runs" the worker by writing its file, a fake NVML state probe and a fake energy counter. What
// the coordinator observes while the worker runs reaches the rules (throttled clocks under
// load warn, a stuck counter fails), and a worker's trouble is a failed row, not an exception.
#include "runner/selfcheck.h"

#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench::selfcheck_test {
namespace {

using ::testing::HasSubstr;

// Finishes the selfcheck's launch after `waits` empty waits, having written `file_text` (if
// any) to the file the worker was asked for; the `--describe` launch after it at once, with
// `describe` as its outcome.
class FakeSelfcheckLauncher final : public Launcher {
 public:
  std::string file_text;
  LaunchOutcome outcome;
  LaunchOutcome describe;
  int waits = 2;
  std::vector<LaunchRequest> started;

  LaunchHandle Start(const LaunchRequest& request) override {
    started.push_back(request);
    if (request.args.at(0) == "--describe") return 2;
    if (!file_text.empty()) std::ofstream(request.args.at(1)) << file_text;
    return 1;
  }
  std::optional<FinishedTrial> Wait(std::chrono::milliseconds) override {
    if (started.back().args.at(0) == "--describe") return FinishedTrial{2, describe};
    if (waits-- > 0) return std::nullopt;
    return FinishedTrial{1, outcome};
  }
  void Cancel(LaunchHandle) override {}
  int InFlight() const override { return 0; }
};

// Returns its states in turn (the last one again when it runs out).
class FakeGpuState final : public GpuStateProbe {
 public:
  std::vector<GpuState> states;
  std::size_t next = 0;
  std::optional<GpuState> Read(std::string*) override {
    const GpuState state = states.at(std::min(next, states.size() - 1));
    ++next;
    return state;
  }
};

class FakeEnergy final : public EnergyCounter {
 public:
  std::vector<std::uint64_t> millijoules;
  std::size_t next = 0;
  std::optional<EnergyReading> Read(std::string*) override {
    const auto value = millijoules.at(std::min(next, millijoules.size() - 1));
    const double at = 10'000.0 * static_cast<double>(next++);  // 10 s apart
    return EnergyReading{value, at};
  }
};

GpuState State(unsigned sm_mhz, double power_w, std::uint64_t reasons) {
  GpuState s;
  s.sm_mhz = sm_mhz;
  s.sm_max_mhz = 1980;
  s.memory_mhz = s.memory_max_mhz = 2619;
  s.throttle_reasons = reasons;
  s.persistence = true;
  s.mig = false;
  s.power_w = power_w;
  s.power_limit_w = 700;
  return s;
}

const SelfcheckRow& Row(const SelfcheckResult& result, const std::string& name) {
  for (const auto& row : result.rows)
    if (row.name == name) return row;
  throw std::runtime_error("no row " + name);
}

class SelfcheckRunTest : public ::testing::Test {
 protected:
  SelfcheckRunTest() {
    request_.worker = "ditbench-worker";
    request_.run_dir = dir_ / "selfcheck";
    request_.devices = {"0"};
    request_.gpu_uuids = {"GPU-1"};
    SelfcheckMeasurements m;
    m.device = "cuda:0";
    m.device_name = "NVIDIA H100 80GB HBM3";
    m.timing = SelfcheckTiming{10, 10, 5, 5};
    launcher_.file_text = SelfcheckJson(m).dump();
    launcher_.outcome.ranks = {RankExit{true, 0, 0, false}};
    launcher_.outcome.wall_s = 12;
    launcher_.describe.ranks = {RankExit{true, 0, 0, false}};
    launcher_.describe.wall_s = 0.45;
    // Idle, then under load: one sample throttled at the heaviest draw.
    state_.states = {State(345, 70, kThrottleGpuIdle), State(1980, 500, 0),
                     State(1500, 690, kThrottleHwThermal), State(1900, 400, 0)};
    energy_.millijoules = {1'000'000, 5'000'000};
  }

  SelfcheckResult Run() {
    SelfcheckEffects effects{launcher_};
    effects.gpu_state = &state_;
    effects.energy = &energy_;
    return RunSelfcheck(request_, effects);
  }

  test::TempDir dir_;
  SelfcheckRequest request_;
  FakeSelfcheckLauncher launcher_;
  FakeGpuState state_;
  FakeEnergy energy_;
};

TEST_F(SelfcheckRunTest, TheWorkerIsAskedForItsFileOnTheDevicesWithTheTimeout) {
  request_.timeout_s = kSelfcheckTimeoutGpuS;
  request_.world_size = 2;
  request_.devices = {"0", "1"};
  const auto result = Run();
  ASSERT_EQ(launcher_.started.size(), 2u);
  EXPECT_EQ(launcher_.started[0].args,
            (std::vector<std::string>{"--selfcheck", SelfcheckFile(request_.run_dir).string()}));
  // Then one rank's `--describe` on the first device: the planner's start-up.
  EXPECT_EQ(launcher_.started[1].args, std::vector<std::string>{"--describe"});
  EXPECT_EQ(launcher_.started[1].world_size, 1);
  EXPECT_EQ(launcher_.started[1].devices, std::vector<std::string>{"0"});
  ASSERT_TRUE(result.observations.describe_wall_s);
  EXPECT_DOUBLE_EQ(*result.observations.describe_wall_s, 0.45);
  EXPECT_EQ(launcher_.started[0].devices, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(launcher_.started[0].timeout_s, 180);
  EXPECT_EQ(Row(result, "worker").verdict, SelfcheckVerdict::kPass);
  EXPECT_EQ(Row(result, "timing fidelity").verdict, SelfcheckVerdict::kPass);
}

TEST_F(SelfcheckRunTest, AFailedDescribeLaunchLeavesNoStartUpAndJudgesNothing) {
  launcher_.describe.ranks = {RankExit{true, 3, 0, false}};
  const auto result = Run();
  EXPECT_FALSE(result.observations.describe_wall_s);
  EXPECT_EQ(Row(result, "worker").verdict, SelfcheckVerdict::kPass);
}

TEST_F(SelfcheckRunTest, TheHeaviestSampleUnderLoadIsJudgedSoAThrottledMomentWarns) {
  launcher_.waits = 3;  // three samples while it runs
  const auto result = Run();
  EXPECT_EQ(Row(result, "clocks").verdict, SelfcheckVerdict::kWarn);
  EXPECT_THAT(Row(result, "clocks").reason, HasSubstr("hw thermal"));
  EXPECT_EQ(Row(result, "energy").verdict, SelfcheckVerdict::kPass);
}

TEST_F(SelfcheckRunTest, AnUnthrottledLoadPasses) {
  state_.states = {State(345, 70, kThrottleGpuIdle), State(1980, 650, 0)};
  EXPECT_EQ(Row(Run(), "clocks").verdict, SelfcheckVerdict::kPass);
}

TEST_F(SelfcheckRunTest, AStuckEnergyCounterFails) {
  energy_.millijoules = {1'000'000, 1'000'000};
  const auto result = Run();
  EXPECT_EQ(Row(result, "energy").verdict, SelfcheckVerdict::kFail);
  EXPECT_TRUE(AnyFailed(result.rows));
}

TEST_F(SelfcheckRunTest, AFidelityErrorFails) {
  SelfcheckMeasurements m;
  m.device = "cuda:0";
  m.timing = SelfcheckTiming{10.8, 10, 5, 5};
  launcher_.file_text = SelfcheckJson(m).dump();
  EXPECT_EQ(Row(Run(), "timing fidelity").verdict, SelfcheckVerdict::kFail);
}

TEST_F(SelfcheckRunTest, ATimedOutWorkerIsAFailedRowAndTheGpuRowsStillJudge) {
  launcher_.file_text.clear();
  launcher_.outcome.timed_out = true;
  request_.timeout_s = 180;
  const auto result = Run();
  EXPECT_EQ(Row(result, "worker").verdict, SelfcheckVerdict::kFail);
  EXPECT_THAT(Row(result, "worker").reason, HasSubstr("timed out after 180 s"));
  EXPECT_EQ(Row(result, "energy").verdict, SelfcheckVerdict::kPass);
}

TEST_F(SelfcheckRunTest, AFailingWorkerGivesItsExitAndLastLogLine) {
  launcher_.file_text.clear();
  launcher_.outcome.ranks = {RankExit{true, 1, 0, false}};
  std::filesystem::create_directories(request_.run_dir);
  std::ofstream(request_.run_dir / "rank0.log") << "loading\nCUDA error: out of memory\n\n";
  const auto result = Run();
  EXPECT_EQ(Row(result, "worker").reason, "exited with code 1: CUDA error: out of memory");
}

TEST_F(SelfcheckRunTest, ABadFileIsAFailedRowNamingIt) {
  launcher_.file_text = "{\"format\": \"ditbench-selfcheck\", \"version\": 99}";
  const auto result = Run();
  EXPECT_EQ(Row(result, "worker").verdict, SelfcheckVerdict::kFail);
  EXPECT_THAT(Row(result, "worker").reason, HasSubstr("version"));
}

// A worker reporting a forward of 1e-300 ms was stored with its worker row `pass`, and `plan`
// took it as its calibration (issue 49). Its row fails, naming the figure.
TEST_F(SelfcheckRunTest, AWorkerReportingAnImplausibleFigureFailsNamingIt) {
  SelfcheckMeasurements m;
  m.device = "cuda:0";
  m.timing = SelfcheckTiming{10, 10, 1e-300, 1e-300};
  launcher_.file_text = SelfcheckJson(m).dump();
  const auto result = Run();
  EXPECT_EQ(Row(result, "worker").verdict, SelfcheckVerdict::kFail);
  EXPECT_THAT(Row(result, "worker").reason, HasSubstr("timing.forward_ms 1e-300 ms"));
  EXPECT_FALSE(result.observations.measurements);
}

TEST_F(SelfcheckRunTest, AStaleFileFromAnEarlierRunIsNotRead) {
  std::filesystem::create_directories(request_.run_dir);
  std::ofstream(SelfcheckFile(request_.run_dir)) << launcher_.file_text;
  launcher_.file_text.clear();  // this run's worker writes nothing
  EXPECT_EQ(Row(Run(), "worker").verdict, SelfcheckVerdict::kFail);
}

}  // namespace
}  // namespace ditbench::selfcheck_test

// The verdicts of `ditbench selfcheck` (runner/selfcheck_rules.h), row by row, from fake
// observations: every GPU row passes, warns and fails (or skips) as docs/selfcheck.md says.
#include "runner/selfcheck_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ditbench::selfcheck_rules_test {
namespace {

using ::testing::HasSubstr;

// A healthy H100 and a worker that measured everything.
SelfcheckObservations HealthyGpu() {
  SelfcheckObservations o;
  o.gpu = true;
  SelfcheckMeasurements m;
  m.device = "cuda:0";
  m.device_name = "NVIDIA H100 80GB HBM3";
  m.torch = "2.11.0";
  m.timing = SelfcheckTiming{10.02, 10.0, 5.0, 5.01};
  m.cuda_graph = SelfcheckGraph{0.0, 2.0, 1.5};
  m.numerics = SelfcheckNumerics{0.004, 0.02};
  m.throughput = SelfcheckThroughput{
      8192, {{"bf16", 700}, {"fp32", 50}}, 2800.0, {{"flash", 400}, {"math", 100}}};
  o.measurements = m;
  GpuState idle;
  idle.sm_mhz = 345;
  idle.sm_max_mhz = 1980;
  idle.memory_mhz = 2619;
  idle.memory_max_mhz = 2619;
  idle.throttle_reasons = kThrottleGpuIdle;
  idle.persistence = true;
  idle.ecc = true;
  idle.mig = false;
  idle.power_w = 70;
  idle.power_limit_w = 700;
  o.idle = idle;
  GpuState load = idle;
  load.sm_mhz = 1980;
  load.throttle_reasons = 0;
  load.power_w = 650;
  o.load = load;
  o.energy = EnergyWindow{20000, 50000};  // 400 W over 50 s
  MachineHealth health;
  health.cores = 16;
  o.health = health;
  o.cpu_governors = {{"performance", 16}};
  return o;
}

const SelfcheckRow& Row(const std::vector<SelfcheckRow>& rows, const std::string& name) {
  for (const auto& row : rows)
    if (row.name == name) return row;
  static const SelfcheckRow none{"(missing)", SelfcheckVerdict::kSkip, "", "no such row"};
  ADD_FAILURE() << "no row " << name;
  return none;
}

SelfcheckVerdict VerdictOf(const SelfcheckObservations& o, const std::string& name) {
  return Row(JudgeSelfcheck(o), name).verdict;
}

// Every row that is judged passes; the figures nothing is judged against are info, never pass.
TEST(SelfcheckRulesTest, AHealthyGpuPassesEveryJudgedRow) {
  const auto rows = JudgeSelfcheck(HealthyGpu());
  for (const auto& row : rows) {
    const bool shown = row.name == "memory bandwidth" || row.name.starts_with("attention (");
    EXPECT_EQ(row.verdict, shown ? SelfcheckVerdict::kInfo : SelfcheckVerdict::kPass)
        << row.name << ": " << row.reason;
  }
  EXPECT_FALSE(AnyFailed(rows));
  EXPECT_EQ(NotPassingLines(rows), std::vector<std::string>{"all pass"});
  EXPECT_EQ(Row(rows, "attention (flash)").figure, "400.00 TFLOP/s");
  EXPECT_THAT(Row(rows, "matmul").figure, HasSubstr("% of"));
}

TEST(SelfcheckRulesTest, TimingFidelityWarnsPastOnePercentAndFailsPastThree) {
  auto o = HealthyGpu();
  o.measurements->timing->gemm_ms = 10.2;  // 2% off
  EXPECT_EQ(VerdictOf(o, "timing fidelity"), SelfcheckVerdict::kWarn);
  o.measurements->timing->gemm_ms = 10.5;  // 5% off
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "timing fidelity").verdict, SelfcheckVerdict::kFail);
  EXPECT_THAT(Row(rows, "timing fidelity").reason, HasSubstr("raw CUDA events"));
  EXPECT_TRUE(AnyFailed(rows));
}

// A gap between the clocks no larger than one clock's own two halves apart is the machine's
// noise, not the clock's error: a warning that says so, never a failure.
TEST(SelfcheckRulesTest, ATimingGapWithinTheMachinesOwnNoiseIsInconclusiveNotAFailure) {
  auto o = HealthyGpu();
  o.measurements->timing->forward_ms = o.measurements->timing->forward_reference_ms * 1.12;
  o.measurements->timing->forward_aa_pct = 15;  // the same clock's halves 15% apart
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "timing fidelity").verdict, SelfcheckVerdict::kWarn);
  EXPECT_THAT(Row(rows, "timing fidelity").reason, HasSubstr("inconclusive"));
  // On a steady machine the same gap fails.
  o.measurements->timing->forward_aa_pct = 0.5;
  EXPECT_EQ(VerdictOf(o, "timing fidelity"), SelfcheckVerdict::kFail);
}

TEST(SelfcheckRulesTest, CudaGraphsFailWhenReplayDiffersFromEager) {
  auto o = HealthyGpu();
  o.measurements->cuda_graph->max_abs_diff = 1e-3;
  EXPECT_EQ(VerdictOf(o, "cuda graphs"), SelfcheckVerdict::kFail);
  o.gpu = false;
  EXPECT_EQ(VerdictOf(o, "cuda graphs"), SelfcheckVerdict::kSkip);
}

TEST(SelfcheckRulesTest, NumericsFailPastTheBound) {
  auto o = HealthyGpu();
  o.measurements->numerics->bf16_rel_error = 0.05;
  EXPECT_EQ(VerdictOf(o, "numerics"), SelfcheckVerdict::kFail);
}

TEST(SelfcheckRulesTest, ThrottledOrCappedClocksWarn) {
  auto o = HealthyGpu();
  o.load->throttle_reasons = kThrottleHwThermal | kThrottleSwPowerCap;
  auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "clocks").verdict, SelfcheckVerdict::kWarn);
  EXPECT_THAT(Row(rows, "clocks").reason, HasSubstr("hw thermal"));
  EXPECT_THAT(Row(rows, "clocks").reason, ::testing::Not(HasSubstr("sw power cap")));

  o = HealthyGpu();
  o.load->sm_mhz = 1410;  // 71% of its maximum
  o.load->throttle_reasons = kThrottleApplicationClocks;
  rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "clocks").verdict, SelfcheckVerdict::kWarn);
  EXPECT_THAT(Row(rows, "clocks").reason, HasSubstr("application clocks"));
  EXPECT_EQ(Row(rows, "clocks").figure, "SM 1410 of 1980 MHz, memory 2619 of 2619 MHz");

  o = HealthyGpu();
  o.load->memory_mhz = 1593;
  EXPECT_EQ(VerdictOf(o, "clocks"), SelfcheckVerdict::kWarn);
}

TEST(SelfcheckRulesTest, ClocksSkipWithTheReasonWhenNvmlCannotTell) {
  auto o = HealthyGpu();
  o.load.reset();
  o.idle.reset();
  o.gpu_state_why_not = "libnvidia-ml.so.1 cannot be loaded";
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "clocks").verdict, SelfcheckVerdict::kSkip);
  EXPECT_EQ(Row(rows, "clocks").reason, "libnvidia-ml.so.1 cannot be loaded");
  EXPECT_EQ(Row(rows, "gpu mode").verdict, SelfcheckVerdict::kSkip);
}

TEST(SelfcheckRulesTest, MigOrPersistenceOffWarns) {
  auto o = HealthyGpu();
  o.load->mig = true;
  EXPECT_EQ(VerdictOf(o, "gpu mode"), SelfcheckVerdict::kWarn);
  o = HealthyGpu();
  o.load->persistence = false;
  EXPECT_EQ(VerdictOf(o, "gpu mode"), SelfcheckVerdict::kWarn);
}

TEST(SelfcheckRulesTest, AStuckEnergyCounterFails) {
  auto o = HealthyGpu();
  o.energy = EnergyWindow{0, 50000};
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "energy").verdict, SelfcheckVerdict::kFail);
  EXPECT_THAT(Row(rows, "energy").reason, HasSubstr("did not advance"));
}

TEST(SelfcheckRulesTest, EnergyOutsideIdleToLimitWarns) {
  auto o = HealthyGpu();
  o.energy = EnergyWindow{50000, 50000};  // 1000 W against a 700 W limit
  EXPECT_EQ(VerdictOf(o, "energy"), SelfcheckVerdict::kWarn);
  o.energy = EnergyWindow{1000, 50000};  // 20 W, below the 70 W idle
  EXPECT_EQ(VerdictOf(o, "energy"), SelfcheckVerdict::kWarn);
}

TEST(SelfcheckRulesTest, MatmulFarBelowTheDensePeakWarnsOnGpuButNotOnCpu) {
  auto o = HealthyGpu();
  o.measurements->throughput->matmul_tflops["bf16"] = 100;  // about 10% of an H100's peak
  EXPECT_EQ(VerdictOf(o, "matmul"), SelfcheckVerdict::kWarn);
  o.gpu = false;  // no peak to judge a CPU's matmul against: shown, not passed
  EXPECT_EQ(VerdictOf(o, "matmul"), SelfcheckVerdict::kInfo);
}

TEST(SelfcheckRulesTest, AMatmulOnAGpuWithNoKnownPeakIsInfoWithTheReason) {
  auto o = HealthyGpu();
  o.measurements->device_name = "a GPU no table names";
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "matmul").verdict, SelfcheckVerdict::kInfo);
  EXPECT_THAT(Row(rows, "matmul").reason, HasSubstr("no known bf16 dense peak"));
}

TEST(SelfcheckRulesTest, AnInfoRowIsStoredAndReadBackAsInfo) {
  const std::vector<SelfcheckRow> rows = {
      {"memory bandwidth", SelfcheckVerdict::kInfo, "900 GB/s", "no table of memory peaks"}};
  const auto back = RowsFromJson(RowsJson(rows));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].verdict, SelfcheckVerdict::kInfo);
  EXPECT_EQ(RowsJson(rows).at(0).at("verdict"), "info");
}

TEST(SelfcheckRulesTest, AMissingMeasurementSkipsWithTheWorkersReason) {
  auto o = HealthyGpu();
  o.measurements->cuda_graph.reset();
  o.measurements->skipped["cuda_graph"] = "cudaGraph capture unsupported by this build";
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "cuda graphs").verdict, SelfcheckVerdict::kSkip);
  EXPECT_EQ(Row(rows, "cuda graphs").reason, "cudaGraph capture unsupported by this build");
}

TEST(SelfcheckRulesTest, ABackendTheWorkerSkippedIsASkipRowWithItsReason) {
  auto o = HealthyGpu();
  o.measurements->skipped["attention.cudnn"] = "cuDNN attention is not available in this build";
  o.measurements->skipped["attention."] = "no backend name: ignored";
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "attention (flash)").verdict, SelfcheckVerdict::kInfo);
  EXPECT_EQ(Row(rows, "attention (cudnn)").verdict, SelfcheckVerdict::kSkip);
  EXPECT_EQ(Row(rows, "attention (cudnn)").reason,
            "cuDNN attention is not available in this build");
  EXPECT_TRUE(std::none_of(rows.begin(), rows.end(),
                           [](const SelfcheckRow& r) { return r.name == "attention ()"; }));
}

TEST(SelfcheckRulesTest, CommunicationIsARowOnlyWithSeveralRanksOrASkipReason) {
  auto o = HealthyGpu();
  auto rows = JudgeSelfcheck(o);
  EXPECT_TRUE(std::none_of(rows.begin(), rows.end(),
                           [](const SelfcheckRow& r) { return r.name == "communication"; }));
  o.measurements->comm = SelfcheckComm{2, 150, 140, 12};
  EXPECT_EQ(VerdictOf(o, "communication"), SelfcheckVerdict::kInfo);
}

TEST(SelfcheckRulesTest, AWorkerWithoutMeasurementsFailsAndTheHostRowsStillJudge) {
  auto o = HealthyGpu();
  o.measurements.reset();
  o.worker_error = "timed out after 180 s (killed)";
  const auto rows = JudgeSelfcheck(o);
  EXPECT_EQ(Row(rows, "worker").verdict, SelfcheckVerdict::kFail);
  EXPECT_EQ(Row(rows, "worker").reason, "timed out after 180 s (killed)");
  EXPECT_EQ(Row(rows, "timing fidelity").verdict, SelfcheckVerdict::kSkip);
  EXPECT_EQ(Row(rows, "timing fidelity").reason, "no measurements (the worker failed)");
  EXPECT_EQ(Row(rows, "clocks").verdict, SelfcheckVerdict::kPass);
  EXPECT_EQ(Row(rows, "cpu governor").verdict, SelfcheckVerdict::kPass);
}

TEST(SelfcheckRulesTest, WorkerErrorsFailTheWorkerRow) {
  auto o = HealthyGpu();
  o.measurements->errors = {"attention (flash): CUDA error"};
  EXPECT_EQ(VerdictOf(o, "worker"), SelfcheckVerdict::kFail);
}

TEST(SelfcheckRulesTest, ABusyHostOrAPowersaveGovernorWarns) {
  auto o = HealthyGpu();
  o.health->busy = true;
  o.health->other_cores = 3;
  EXPECT_EQ(VerdictOf(o, "host load"), SelfcheckVerdict::kWarn);
  o = HealthyGpu();
  o.health->gpu_others = {{"GPU-1", 77, "python3", 20480}};
  o.gpu_uuids = {"GPU-1"};
  EXPECT_EQ(VerdictOf(o, "host load"), SelfcheckVerdict::kWarn);
  o = HealthyGpu();
  o.cpu_governors = {{"performance", 8}, {"powersave", 8}};
  EXPECT_EQ(VerdictOf(o, "cpu governor"), SelfcheckVerdict::kWarn);
  o.cpu_governors.clear();
  EXPECT_EQ(VerdictOf(o, "cpu governor"), SelfcheckVerdict::kSkip);
}

TEST(SelfcheckRulesTest, OnCpuTheGpuRowsSkipAndNothingFails) {
  auto o = HealthyGpu();
  o.gpu = false;
  o.idle.reset();
  o.load.reset();
  o.energy.reset();
  o.measurements->cuda_graph.reset();
  const auto rows = JudgeSelfcheck(o);
  for (const char* name : {"cuda graphs", "clocks", "gpu mode", "energy"})
    EXPECT_EQ(Row(rows, name).verdict, SelfcheckVerdict::kSkip) << name;
  EXPECT_FALSE(AnyFailed(rows));
}

}  // namespace
}  // namespace ditbench::selfcheck_rules_test

// What each denoising step of a trial ran (worker/dit_trial.h): the attention kernels and the
// linear layers' form, recorded from the first iteration, with a per-step schedule's
// high-precision steps running `auto`.
#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench::dit_trial_steps_test {
namespace {

RankResult RunOnCpu(const TrialConfig& config) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto parallel = BuildParallelContext(config, 0, store, [](const auto& s, int r, int n) {
    return CreateBackend(s, r, n, /*cuda=*/false);
  });
  RankResult result;
  RunDitTrial(config, parallel, torch::kCPU, result);
  return result;
}

TrialConfig Tiny() {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.precision = Precision::kFp32;
  config.steps = 4;
  config.warmup = 1;
  config.repeats.min = config.repeats.max = 2;
  return config;
}

TEST(DitTrialStepsTest, EveryStepSaysWhatItRanOnce) {
  TrialConfig config = Tiny();
  config.attention = AttentionBackend::kMath;
  const RankResult result = RunOnCpu(config);
  ASSERT_EQ(result.steps.size(), 4u) << "one entry per step, from one iteration of three";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(result.steps[i], (StepKernels{i, "math", "fp32"}));
}

TEST(DitTrialStepsTest, AScheduleRunsItsFirstAndLastStepsWithSdpasOwnKernel) {
  TrialConfig config = Tiny();
  config.attention = AttentionBackend::kMath;
  config.schedule = {1, 1};
  const RankResult result = RunOnCpu(config);
  ASSERT_EQ(result.steps.size(), 4u);
  // `auto` on CPU: SDPA's dispatcher picks its flash kernel for these shapes.
  EXPECT_EQ(result.steps[0], (StepKernels{0, "flash", "fp32"}));
  EXPECT_EQ(result.steps[1], (StepKernels{1, "math", "fp32"}));
  EXPECT_EQ(result.steps[2], (StepKernels{2, "math", "fp32"}));
  EXPECT_EQ(result.steps[3], (StepKernels{3, "flash", "fp32"}));
}

// Wan 2.2 A14B: every step says which expert ran it. The expectation is diffusers' own: its
// WanPipeline's 6 UniPC timesteps at shift 3 are 999 937 | 856 749 599 374 against the boundary
// 875 (tests/reference/data/wan_experts, where the latents equal ditbench's step for step).
TEST(DitTrialStepsTest, AModelOfExpertsRecordsTheExpertOfEveryStep) {
  TrialConfig config = Tiny();
  config.model = "wan2.2-t2v-a14b-tiny";
  config.resolution = 64;
  config.frames = 5;
  config.steps = 6;
  config.attention = AttentionBackend::kMath;
  const RankResult result = RunOnCpu(config);
  ASSERT_EQ(result.steps.size(), 6u);
  std::vector<int> experts;
  for (const StepKernels& step : result.steps) experts.push_back(step.expert);
  EXPECT_EQ(experts, (std::vector<int>{0, 0, 1, 1, 1, 1}));
  // A model of one transformer records no expert.
  config.model = "wan2.1-t2v-tiny";
  for (const StepKernels& step : RunOnCpu(config).steps) EXPECT_EQ(step.expert, 0);
}

}  // namespace
}  // namespace ditbench::dit_trial_steps_test

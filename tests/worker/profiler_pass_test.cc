// `profile: trace` on a rank (worker/profiler_pass.h): the profiled iterations run after
// Measure() and outside its timed region, and leave a trace the coordinator reads.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "metrics/trace_profile.h"
#include "worker/dit_trial.h"
#include "worker/profiler_pass.h"
#include "worker/torch_runtime.h"

namespace ditbench::profiler_pass_test {
namespace {

// A scratch folder removed with POSIX calls: in a binary linked with libtorch,
// std::filesystem::remove_all resolves to libtorch's copy and crashes (no test::TempDir).
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/tmp/ditbench-profile-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    ::unlink((path_ / "rank0.trace.json.gz").c_str());
    ::rmdir(path_.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(ProfilerPassTest, TheProfiledIterationsAreOutsideTheTimedRegionAndLeaveATrace) {
  for (const bool profiled : {false, true}) {
    ScratchDir dir;
    TrialConfig config;
    config.model = "pixart-alpha-tiny";
    config.resolution = 256;
    config.precision = Precision::kFp32;
    config.steps = 3;
    config.warmup = 1;
    config.repeats.min = config.repeats.max = 2;
    config.profile_trace = profiled;
    auto store = c10::make_intrusive<c10d::HashStore>();
    auto parallel = BuildParallelContext(config, 0, store, [](const auto& s, int r, int n) {
      return CreateBackend(s, r, n, /*cuda=*/false);
    });
    RankResult result;
    int in_timed_region = 0;  // calls from inside Measure's region: warm-up and timed
    TrialHooks hooks;
    hooks.in_timed_region = [&](int) { ++in_timed_region; };
    RunDitTrial(config, parallel, torch::kCPU, result, hooks, {}, dir.path());
    EXPECT_EQ(in_timed_region, 3) << "profiled: " << profiled;
    int iterations = 0;
    for (const Sample& s : result.samples) iterations += s.stage == kIterationStage;
    EXPECT_EQ(iterations, 3) << "profiled: " << profiled;
    if (!profiled) {
      EXPECT_EQ(result.trace_file, "");
      continue;
    }
    ASSERT_EQ(result.trace_file, "rank0.trace.json.gz");
    const TraceProfile profile = ReadTraceProfile(dir.path() / result.trace_file);
    EXPECT_EQ(profile.timeline, "host");
    ASSERT_EQ(profile.steps.size(), 3u);
    for (const StepProfile& step : profile.steps) {
      EXPECT_EQ(step.occurrences, kProfiledIterations);
      EXPECT_GT(step.compute_ms, 0);
      EXPECT_GT(step.attention_ms, 0);
    }
  }
}

}  // namespace
}  // namespace ditbench::profiler_pass_test

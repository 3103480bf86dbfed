// First-Block-Cache (model_zoo/families/step_cache.h): threshold 0 is the uncached forward,
// reuse adds the cached residual, and ranks whose own statistics disagree still run the same
// blocks (nothing hangs).
#include "model_zoo/families/step_cache.h"

#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "model_zoo/shapes/model_config.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

struct Inputs {
  std::unique_ptr<DitModel> model;
  torch::Tensor x, t;
  Conditioning conditioning;
};

Inputs TinyPixArt() {
  torch::manual_seed(0);
  Inputs in;
  in.model = MakeDitModel(*FindModelPreset("pixart-alpha-tiny"));
  in.x = torch::randn({1, in.model->config().in_channels, 8, 8});
  in.t = torch::full({1}, 500.0);
  in.conditioning = in.model->MakeConditioning(1, ImageShape{64, 64, 0});
  return in;
}

TEST(StepCacheTest, ThresholdZeroIsTheUncachedForwardAtEveryStep) {
  c10::InferenceMode inference;
  Inputs in = TinyPixArt();
  ParallelContext single;
  FirstBlockCache cache(0.0, 0, 4, single.world());
  for (int step = 0; step < 4; ++step) {
    const auto x = in.x * (1 + 0.01 * step);
    const auto cached = cache.Forward(*in.model, x, in.t, in.conditioning, single, {}, step);
    EXPECT_FALSE(cache.reused()) << step;
    EXPECT_TRUE(torch::equal(cached, in.model->Forward(x, in.t, in.conditioning, single)));
  }
}

// An unchanged input reuses at once (change 0 < threshold) after the warm-up, never at the
// last step, and the reused output is the computed one (the residual of the same blocks).
TEST(StepCacheTest, AnUnchangedInputReusesTheOtherBlocksBetweenWarmUpAndTheLastStep) {
  c10::InferenceMode inference;
  Inputs in = TinyPixArt();
  ParallelContext single;
  FirstBlockCache cache(0.05, 1, 5, single.world());
  const auto computed = in.model->Forward(in.x, in.t, in.conditioning, single);
  std::string reused;
  for (int step = 0; step < 5; ++step) {
    const auto out = cache.Forward(*in.model, in.x, in.t, in.conditioning, single, {}, step);
    reused += cache.reused() ? 'R' : 'C';
    EXPECT_TRUE(torch::allclose(out, computed, 1e-5, 1e-6)) << step;
  }
  EXPECT_EQ(reused, "CRRRC") << "step 0 the warm-up, then reuse, and the last step computes";
}

// Two ranks in threads whose own statistics differ wildly (one would reuse, one would not):
// the vote makes both compute, every step, and no rank waits for a collective the other
// skipped.
TEST(StepCacheTest, RanksThatDisagreeStillRunTheSameBlocks) {
  TrialConfig config;
  config.model = "pixart-alpha-tiny";
  config.resolution = 256;
  config.precision = Precision::kFp32;
  config.ulysses = 2;
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> decisions(2), errors(2);
  auto run = [&](int rank) {
    try {
      c10::InferenceMode inference;
      auto parallel = BuildParallelContext(config, rank, store, [](const auto& s, int r, int n) {
        return CreateBackend(s, r, n, /*cuda=*/false);
      });
      // LibTorch's generator is process-wide: the ranks draw one after the other (the same
      // weights and latent on both, as after loading a checkpoint).
      static std::mutex draw;
      std::unique_lock<std::mutex> lock(draw);
      Inputs in = TinyPixArt();
      torch::manual_seed(1);
      auto x = torch::randn({1, in.model->config().in_channels, 32, 32});
      lock.unlock();
      FirstBlockCache cache(0.5, 0, 6, parallel.world());
      // Rank 0 says nothing changed; rank 1 that everything did.
      cache.set_statistic_hook([rank](double, double) {
        return rank == 0 ? std::pair{0.0, 1.0} : std::pair{1e9, 1.0};
      });
      for (int step = 0; step < 6; ++step) {
        cache.Forward(*in.model, x, in.t, in.conditioning, parallel, {}, step);
        decisions[rank] += cache.reused() ? 'R' : 'C';
      }
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(decisions[0], decisions[1]);
  EXPECT_EQ(decisions[0], "CCCCCC");
}

}  // namespace
}  // namespace ditbench

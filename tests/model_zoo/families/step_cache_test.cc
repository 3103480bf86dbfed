// The step caches (model_zoo/families/step_cache.h), First-Block-Cache and TeaCache: threshold
// 0 is the uncached forward, reuse adds the cached residual, and ranks whose own statistics
// disagree still run the same blocks (nothing hangs).
#include "model_zoo/families/step_cache.h"

#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/teacache_polynomials.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench::step_cache_test {
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

// A tiny model of `name` with one latent (a 64 x 64 image; 5 frames of video) and its inputs.
Inputs Tiny(const std::string& name) {
  torch::manual_seed(0);
  Inputs in;
  in.model = MakeDitModel(*FindModelPreset(name));
  const ModelConfig& c = in.model->config();
  const bool video = c.video();
  in.x = video ? torch::randn({1, c.in_channels, 2, 8, 8}) : torch::randn({1, c.in_channels, 8, 8});
  in.t = torch::full({1}, 500.0);
  in.conditioning = in.model->MakeConditioning(1, ImageShape{64, 64, video ? 5 : 0});
  if (in.model->guidance() == Guidance::kDistilled)
    in.conditioning.guidance = torch::full({1}, in.model->guidance_scale());
  return in;
}

std::vector<double> Polynomial(const std::string& model) {
  return PublishedTeaCachePolynomial(model).value().coefficients;
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

TEST(StepCacheTest, TeaCacheAtThresholdZeroIsTheUncachedForwardForEveryPublishedFamily) {
  c10::InferenceMode inference;
  for (const char* name : {"flux-dev-tiny", "wan2.1-t2v-tiny", "hunyuanvideo-tiny"}) {
    Inputs in = Tiny(name);
    ParallelContext single;
    TeaCache cache(Polynomial(name), 0.0, 0, 4, single.world());
    for (int step = 0; step < 4; ++step) {
      const auto x = in.x * (1 + 0.01 * step);
      const auto cached = cache.Forward(*in.model, x, in.t, in.conditioning, single, {}, step);
      EXPECT_FALSE(cache.reused()) << name << " step " << step;
      EXPECT_TRUE(torch::equal(cached, in.model->Forward(x, in.t, in.conditioning, single)))
          << name << " step " << step;
    }
  }
}

// An unchanged input has relative change 0, which Flux's polynomial rescales to its constant
// term, 0.264: with threshold 0.5 one step is skipped (0.264), the next computes (0.528) and
// resets the sum; the warm-up step and the last step compute. The reused output is the
// computed one: the same blocks' residual.
TEST(StepCacheTest, TeaCacheAccumulatesTheRescaledChangeAndResetsWhenItComputes) {
  c10::InferenceMode inference;
  Inputs in = Tiny("flux-dev-tiny");
  ParallelContext single;
  TeaCache cache(Polynomial("flux-dev-tiny"), 0.5, 1, 6, single.world());
  const auto computed = in.model->Forward(in.x, in.t, in.conditioning, single);
  std::string reused;
  for (int step = 0; step < 6; ++step) {
    const auto out = cache.Forward(*in.model, in.x, in.t, in.conditioning, single, {}, step);
    reused += cache.reused() ? 'R' : 'C';
    EXPECT_TRUE(torch::allclose(out, computed, 1e-5, 1e-6)) << step;
    if (step == 1) {
      EXPECT_NEAR(cache.change(), 2.64230861e-01, 1e-9);
    }
    if (step == 2) {
      EXPECT_NEAR(cache.change(), 2 * 2.64230861e-01, 1e-9);
    }
  }
  EXPECT_EQ(reused, "CRCRCC");
  EXPECT_EQ(cache.reuses(), 2);
  EXPECT_EQ(cache.forwards(), 6);
}

// The published polynomial is evaluated as numpy.poly1d does (highest degree first).
TEST(StepCacheTest, PolynomialsAreEvaluatedHighestDegreeFirst) {
  EXPECT_DOUBLE_EQ(EvaluatePolynomial({2, 3, 4}, 10), 234);
  const auto flux = Polynomial("flux-dev");
  EXPECT_NEAR(EvaluatePolynomial(flux, 0.1),
              498.651651e-4 - 283.781631e-3 + 55.8554382e-2 - 3.82021401e-1 + 0.264230861, 1e-9);
  EXPECT_FALSE(PublishedTeaCachePolynomial("pixart-alpha"));
  EXPECT_FALSE(PublishedTeaCachePolynomial("sd3-medium"));
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
void RanksThatDisagreeRunTheSameBlocks(const std::string& model, bool tea) {
  TrialConfig config;
  config.model = model;
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
      Inputs in = Tiny(model);
      auto x = in.x;
      lock.unlock();
      std::unique_ptr<StepCacheForward> cache;
      if (tea)
        cache = std::make_unique<TeaCache>(Polynomial(model), 0.5, 0, 6, parallel.world());
      else
        cache = std::make_unique<FirstBlockCache>(0.5, 0, 6, parallel.world());
      // Rank 0 says nothing changed; rank 1 that everything did.
      cache->set_statistic_hook([rank](double, double) {
        return rank == 0 ? std::pair{0.0, 1.0} : std::pair{1e9, 1.0};
      });
      for (int step = 0; step < 6; ++step) {
        cache->Forward(*in.model, x, in.t, in.conditioning, parallel, {}, step);
        decisions[rank] += cache->reused() ? 'R' : 'C';
      }
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  EXPECT_EQ(errors[0], "") << model;
  EXPECT_EQ(errors[1], "") << model;
  EXPECT_EQ(decisions[0], decisions[1]) << model;
  EXPECT_EQ(decisions[0], "CCCCCC") << model;
}

TEST(StepCacheTest, RanksThatDisagreeStillRunTheSameBlocks) {
  RanksThatDisagreeRunTheSameBlocks("pixart-alpha-tiny", /*tea=*/false);
  RanksThatDisagreeRunTheSameBlocks("flux-dev-tiny", /*tea=*/false);
}

TEST(StepCacheTest, TeaCacheRanksThatDisagreeStillRunTheSameBlocks) {
  RanksThatDisagreeRunTheSameBlocks("flux-dev-tiny", /*tea=*/true);
  RanksThatDisagreeRunTheSameBlocks("wan2.1-t2v-tiny", /*tea=*/true);
}

}  // namespace
}  // namespace ditbench::step_cache_test

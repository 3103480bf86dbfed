// The cost model and the advisor against a synthetic campaign: trials whose latency follows a
// known law (the model's own terms with chosen coefficients) plus 1% noise.
#include "plan/cost_model.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include <gtest/gtest.h>

#include "machine/rank_sharing.h"
#include "model_zoo/shapes/model_config.h"
#include "plan/advisor.h"
#include "plan/comm_volume.h"
#include "plan/fitted_model.h"
#include "plan/halving.h"
#include "plan/sweep_plan.h"
#include "tests/support/cost_law.h"
#include "tests/support/sweeps.h"

namespace ditbench::cost_model_test {
namespace {

using test::CostLawMs;
using test::kCostLaw;
using test::kCostLawSweep;

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PlanAssumptions host;
    host.cpu_cores = 16;  // every layout's ranks fit the cores: nothing time-shares
    plan_ = PlanSweep(test::ParseValidSweep(kCostLawSweep), {16, false}, host);
    std::uint32_t state = 12345;
    for (const PlannedTrial& t : plan_.trials) {
      ASSERT_FALSE(t.invalid_reason) << t.key << ": " << *t.invalid_reason;
      CostObservation o;
      o.trial_key = t.key;
      o.config = t.config;
      o.latency_ms = CostLawMs(t.config) * (1 + test::CostLawNoise(state));
      o.startup_s = 1.5 + 0.25 * t.config.world_size() + test::CostLawNoise(state);
      all_.push_back(o);
    }
  }

  // The best trial of each group by the law (no noise).
  std::map<std::string, std::string> TrueBest() const {
    std::map<std::string, std::pair<double, std::string>> best;
    for (const PlannedTrial& t : plan_.trials) {
      auto& b = best[HalvingGroup(t.config)];
      const double ms = CostLawMs(t.config);
      if (b.second.empty() || ms < b.first) b = {ms, t.key};
    }
    std::map<std::string, std::string> keys;
    for (const auto& [group, b] : best) keys[group] = b.second;
    return keys;
  }

  SweepPlan plan_;
  std::vector<CostObservation> all_;
};

TEST_F(CostModelTest, RecoversTheLawsTermsWithinTheirIntervals) {
  const auto model = CostModel::Fit(all_);
  ASSERT_TRUE(model);
  EXPECT_FALSE(model->reduced());
  std::size_t active = 0;
  for (std::size_t j = 0; j < kCostLaw.size(); ++j) {
    const CostModel::Term term = model->Terms()[j];
    if (!term.active) continue;
    ++active;
    EXPECT_LE(term.coefficient.low, kCostLaw[j]) << term.name;
    EXPECT_GE(term.coefficient.high, kCostLaw[j]) << term.name;
  }
  EXPECT_GE(active, 6u);
  // Every trial's interval holds its noiseless latency; the leave-one-out error is small.
  for (const CostObservation& o : all_) {
    const auto p = model->Iteration(o.config);
    ASSERT_TRUE(p);
    EXPECT_LE(p->low, CostLawMs(o.config)) << o.trial_key;
    EXPECT_GE(p->high, CostLawMs(o.config)) << o.trial_key;
  }
  const LooReport loo = LeaveOneOut(all_);
  EXPECT_EQ(loo.predicted, all_.size());
  EXPECT_LT(loo.median_abs_error, 0.05);
  EXPECT_TRUE(model->Startup(all_.front().config));
}

// The same campaign run on a host of 4 cores: its 8- and 16-rank layouts time-share the cores
// (sharing 2 and 4), and the law stretches their compute, block calls and collectives. The
// fit learns how much from the sharing factor each observation carries.
TEST_F(CostModelTest, RanksThatOutnumberTheCoresAreFittedThroughTheirSharingFactor) {
  constexpr int kHostCores = 4;
  std::vector<CostObservation> shared = all_;
  std::uint32_t state = 777;
  std::size_t oversubscribed = 0;
  for (CostObservation& o : shared) {
    o.sharing = UnpinnedCpuSharing(o.config.world_size(), kHostCores);
    o.latency_ms = CostLawMs(o.config, o.sharing) * (1 + test::CostLawNoise(state));
    oversubscribed += o.sharing > 1;
  }
  ASSERT_GE(oversubscribed, 6u);
  const auto model = CostModel::Fit(shared);
  ASSERT_TRUE(model);
  const std::vector<CostModel::Term> terms = model->Terms();
  const std::size_t first = 16, last = 18;  // time-sharing's three terms
  for (std::size_t j = first; j <= last; ++j) {
    ASSERT_TRUE(terms[j].name.starts_with("oversubscribed_")) << terms[j].name;
    if (!terms[j].active) continue;
    EXPECT_LE(terms[j].coefficient.low, kCostLaw[j]) << terms[j].name;
    EXPECT_GE(terms[j].coefficient.high, kCostLaw[j]) << terms[j].name;
  }
  EXPECT_TRUE(terms[last].active);  // the collectives' stretch, the law's largest
  const LooReport loo = LeaveOneOut(shared);
  EXPECT_EQ(loo.predicted, shared.size());
  EXPECT_LT(loo.median_abs_error, 0.05);
  EXPECT_LT(loo.max_abs_error, 0.15);
  // The widest layout predicted where it shares 4 ways, and where its ranks fit the cores.
  const CostObservation& widest = *std::max_element(
      shared.begin(), shared.end(),
      [](const auto& a, const auto& b) { return a.config.world_size() < b.config.world_size(); });
  ASSERT_EQ(widest.sharing, 4.0);
  const auto there = model->Iteration(widest.config, {}, widest.sharing);
  const auto alone = model->Iteration(widest.config, {}, 1);
  ASSERT_TRUE(there && alone);
  EXPECT_LE(there->low, CostLawMs(widest.config, 4));
  EXPECT_GE(there->high, CostLawMs(widest.config, 4));
  EXPECT_LT(alone->value, there->value / 2);
}

// A measured trial's sharing factor comes from what the database recorded where it ran (its
// placement, the cores of its host), not from the machine that plans.
TEST_F(CostModelTest, ObservationsTakeTheSharingFactorFromTheirRecord) {
  PlannerHistory::ObservedTrial four;
  four.trial_key = all_.front().trial_key;
  TrialConfig config = all_.front().config;
  config.ulysses = 4;
  config.ring = config.cfg = 1;
  four.config = CanonicalJson(config);
  four.latency_ms = 10;
  four.placement = {{"concurrent_trials", 0}, {"slots", {0, 1, 2, 3}}};
  four.cpu_cores = 2;
  PlannerHistory::ObservedTrial pinned = four;
  pinned.placement = {{"slots", {0, 1, 2, 3}}, {"cpus", {"0-1", "2-3", "4-5", "6-7"}}};
  PlannerHistory::ObservedTrial unknown = four;
  unknown.placement = nullptr;
  unknown.cpu_cores.reset();
  const auto observations = ToObservations({four, pinned, unknown});
  ASSERT_EQ(observations.size(), 3u);
  EXPECT_EQ(observations[0].sharing, 2.0);  // 4 ranks of one thread on 2 cores
  EXPECT_EQ(observations[1].sharing, 1.0);  // 2 cores of its own per rank
  EXPECT_EQ(observations[2].sharing, 1.0);  // nothing recorded: assumed not shared
}

// Leave-one-out predicts a trial from a fit without it and without its seed twins: a twin is
// the same configuration measured again, and keeping it would flatter the error.
TEST_F(CostModelTest, LeaveOneOutLeavesTheSeedTwinsOfATrialOut) {
  std::vector<CostObservation> observations = all_;
  // One configuration 50% slower than the law, measured under two seeds.
  observations[5].latency_ms *= 1.5;
  const CostObservation odd = observations[5];
  CostObservation twin = odd;
  twin.config.seed = 1;
  twin.trial_key = TrialKey(twin.config);
  ASSERT_NE(twin.trial_key, odd.trial_key);
  observations.push_back(twin);
  const LooReport loo = LeaveOneOut(observations);
  ASSERT_TRUE(loo.entries[5].predicted);
  std::vector<CostObservation> others;
  for (std::size_t i = 0; i < observations.size(); ++i)
    if (i != 5 && i + 1 != observations.size()) others.push_back(observations[i]);
  const auto without_both = CostModel::Fit(others)->Iteration(odd.config);
  ASSERT_TRUE(without_both);
  EXPECT_NEAR(loo.entries[5].predicted->value, without_both->value, 1e-6 * without_both->value);
  EXPECT_NEAR(loo.entries.back().predicted->value, without_both->value,
              1e-6 * without_both->value);
  EXPECT_GT(std::abs(loo.entries[5].relative_error()), 0.25);  // the twin does not hide it
}

// An all-to-all among U Ulysses ranks is U - 1 messages from each: its latency term counts
// them, not the calls.
TEST_F(CostModelTest, AnAllToAllsLatencyCountsAMessagePerPeer) {
  const std::vector<std::string>& names = CostTermNames();
  const std::size_t messages = std::size_t(
      std::find(names.begin(), names.end(), "all_to_all_ms_per_message") - names.begin());
  ASSERT_LT(messages, names.size());
  std::map<int, double> per_call;
  for (const CostObservation& o : all_) {
    if (o.config.ring != 1 || o.config.cfg != 1 || o.config.resolution != 256) continue;
    std::string unused;
    const auto model = ResolveModel(o.config.model, o.config.model_overrides, &unused);
    const auto comm = CommByKindPerStep(*model, o.config);
    const double calls = o.config.steps * comm->calls[std::size_t(Collective::kAllToAll)];
    per_call[o.config.ulysses] = calls > 0 ? CostFeatures(o.config)->at(messages) / calls : 0;
  }
  ASSERT_EQ(per_call.size(), 3u);
  EXPECT_EQ(per_call[1], 0.0);
  EXPECT_EQ(per_call[2], 1.0);
  EXPECT_EQ(per_call[4], 3.0);
}

// Tensor parallelism's all-reduces are terms of their own: calls and MiB per iteration, from the
// same count as `plan`'s (plan/comm_volume.h), and no other collective's.
TEST(CostModelTensorParallelTest, AllReducesArePricedPerCallAndPerMib) {
  const std::vector<std::string>& names = CostTermNames();
  const auto at = [&](const char* name) {
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return std::size_t(it - names.begin());
  };
  TrialConfig c;
  c.model = "pixart-alpha";
  c.resolution = 1024;
  c.steps = 10;
  c.tp = 2;
  const auto x = CostFeatures(c);
  ASSERT_TRUE(x);
  const auto comm = CommByKindPerStep(*FindModelPreset("pixart-alpha"), c);
  EXPECT_DOUBLE_EQ(x->at(at("all_reduce_ms_per_call")), 10.0 * 3 * 28);
  EXPECT_DOUBLE_EQ(x->at(at("all_reduce_ms_per_mib")),
                   10.0 * comm->bytes[std::size_t(Collective::kAllReduce)] / 1048576.0);
  EXPECT_EQ(x->at(at("all_to_all_ms_per_mib")), 0.0);
  c.tp = 1;
  EXPECT_EQ(CostFeatures(c)->at(at("all_reduce_ms_per_call")), 0.0);
}

// Two families whose time per FLOP differs: the narrow PixArt with 16-wide heads pays for its
// attention scores and activations (model_zoo/shapes/memory_traffic.h) more per FLOP than SD3.
// A law with those terms is recovered, and leave-one-out predicts both families; priced by
// FLOPs alone, one family's trials would be predicted from the other's efficiency.
TEST(CostModelElementsTest, ElementsReadAndWrittenBeyondTheFlopsAreFittedAcrossFamilies) {
  PlanAssumptions host;
  host.cpu_cores = 16;
  const SweepPlan plan = PlanSweep(test::ParseValidSweep(R"(name: families
defaults: {steps: 4, warmup: 1, repeats: 3}
matrix:
  model: [pixart-alpha-tiny, sd3-medium-tiny]
  resolution: [256, 512]
  ulysses: [1, 2, 4]
  ring: [1, 2]
)"),
                                   {16, false}, host);
  // overhead, GFLOP per rank, scores and activations per rank (millions), collectives.
  std::vector<double> law(CostTermNames().size(), 0.0);
  const auto set = [&](const std::string& name, double value) {
    const auto it = std::find(CostTermNames().begin(), CostTermNames().end(), name);
    ASSERT_NE(it, CostTermNames().end()) << name;
    law[std::size_t(it - CostTermNames().begin())] = value;
  };
  set("overhead_ms", 2.0);
  set("rank_compute_ms_per_gflop", 2.0);
  set("rank_scores_ms_per_million", 0.5);
  set("rank_activations_ms_per_million", 20.0);
  set("all_to_all_ms_per_message", 0.3);
  set("all_to_all_ms_per_mib", 4.0);
  set("ring_ms_per_call", 0.5);
  set("ring_ms_per_mib", 5.0);
  set("gather_ms_per_call", 0.2);
  set("gather_ms_per_mib", 3.0);
  const auto law_ms = [&](const TrialConfig& c) {
    const auto x = CostFeatures(c).value();
    double ms = 0;
    for (std::size_t j = 0; j < x.size(); ++j) ms += law[j] * x[j];
    return ms;
  };
  std::vector<CostObservation> observations;
  std::uint32_t state = 4242;
  std::map<std::string, std::vector<double>> ms_per_gflop;  // of one rank, per family
  for (const PlannedTrial& t : plan.trials) {
    ASSERT_FALSE(t.invalid_reason) << t.key << ": " << *t.invalid_reason;
    CostObservation o;
    o.trial_key = t.key;
    o.config = t.config;
    o.latency_ms = law_ms(t.config) * (1 + test::CostLawNoise(state));
    observations.push_back(o);
    if (t.config.world_size() == 1)
      ms_per_gflop[t.config.model].push_back(law_ms(t.config) / CostFeatures(t.config)->at(1));
  }
  // The law makes the families differ per FLOP by more than the goal's 40%.
  ASSERT_EQ(ms_per_gflop.size(), 2u);
  EXPECT_GT(ms_per_gflop["pixart-alpha-tiny"].back(), 1.4 * ms_per_gflop["sd3-medium-tiny"].back());

  const auto model = CostModel::Fit(observations);
  ASSERT_TRUE(model);
  ASSERT_FALSE(model->reduced());
  // The law's element terms are found within their intervals, and every trial's interval holds
  // its noiseless latency.
  const std::vector<CostModel::Term> terms = model->Terms();
  for (std::size_t j = 0; j < terms.size(); ++j) {
    const CostModel::Term& term = terms[j];
    if (term.name.find("scores") == std::string::npos &&
        term.name.find("activations") == std::string::npos)
      continue;
    if (law[j] > 0) {
      EXPECT_TRUE(term.active) << term.name;
      EXPECT_LE(term.coefficient.low, law[j]) << term.name;
      EXPECT_GE(term.coefficient.high, law[j]) << term.name;
    }
  }
  for (const CostObservation& o : observations) {
    const auto p = model->Iteration(o.config);
    ASSERT_TRUE(p);
    EXPECT_LE(p->low, law_ms(o.config)) << o.trial_key;
    EXPECT_GE(p->high, law_ms(o.config)) << o.trial_key;
  }
  const LooReport loo = LeaveOneOut(observations);
  EXPECT_EQ(loo.predicted, observations.size());
  EXPECT_LT(loo.median_abs_error, 0.05);
  EXPECT_LT(loo.max_abs_error, 0.15);
}

// FP8 layers take their GEMMs' GFLOP out of the compute terms into one of their own, in the
// steps a schedule leaves to them; a forced kernel's scores add a term of that kernel's.
TEST(CostModelKnobsTest, Fp8AndForcedKernelsHaveTermsOfTheirOwn) {
  const std::vector<std::string>& names = CostTermNames();
  auto index = [&](const std::string& name) {
    return std::size_t(std::find(names.begin(), names.end(), name) - names.begin());
  };
  TrialConfig base;
  base.model = "pixart-alpha";
  base.ulysses = 2;
  const auto x = CostFeatures(base).value();
  TrialConfig fp8 = base;
  fp8.quant = Quantization::kFp8Rowwise;
  const auto x8 = CostFeatures(fp8).value();
  const std::size_t rank = index("rank_compute_ms_per_gflop"),
                    own = index("fp8_compute_ms_per_gflop");
  EXPECT_EQ(x[own], 0.0);
  // At 1024 px PixArt's block projections are three quarters of its FLOPs (the rest: the
  // attention matmuls and the layers kept in bf16).
  EXPECT_GT(x8[own], 0.7 * x[rank]);
  EXPECT_LT(x8[own], 0.8 * x[rank]);
  EXPECT_NEAR(x8[rank] + x8[own], x[rank], 1e-9 * x[rank]);
  fp8.schedule = {5, 5};  // 10 of 20 steps keep every layer in bf16
  EXPECT_NEAR(CostFeatures(fp8).value()[own], x8[own] / 2, 1e-9 * x8[own]);

  TrialConfig math = base;
  math.attention = AttentionBackend::kMath;
  const auto xm = CostFeatures(math).value();
  const std::size_t scores = index("rank_scores_ms_per_million");
  EXPECT_EQ(xm[index("math_extra_ms_per_million_scores")], xm[scores]);
  EXPECT_EQ(xm[scores], x[scores]) << "its scores still cost what auto's do, plus the extra";
  for (const char* other :
       {"flash_extra_ms_per_million_scores", "cudnn_extra_ms_per_million_scores",
        "efficient_extra_ms_per_million_scores"})
    EXPECT_EQ(xm[index(other)], 0.0) << other;
}

// A campaign where `math` costs a known extra per million scores: the fit recovers it.
TEST(CostModelKnobsTest, AForcedKernelsExtraIsFittedFromItsTrials) {
  PlanAssumptions host;
  host.cpu_cores = 16;
  const SweepPlan plan = PlanSweep(test::ParseValidSweep(R"(name: kernels
defaults: {model: pixart-alpha-tiny, steps: 4, warmup: 1, repeats: 3}
matrix:
  resolution: [256, 512]
  ulysses: [1, 2, 4]
  ring: [1, 2]
  attention: [auto, math]
)"),
                                   {16, false}, host);
  std::vector<double> law = test::kCostLaw;
  const std::vector<std::string>& names = CostTermNames();
  const std::size_t math =
      std::find(names.begin(), names.end(), "math_extra_ms_per_million_scores") - names.begin();
  law[math] = 0.8;
  std::uint32_t state = 7;
  std::vector<CostObservation> observations;
  for (const PlannedTrial& t : plan.trials) {
    const auto x = CostFeatures(t.config).value();
    double ms = 0;
    for (std::size_t j = 0; j < x.size(); ++j) ms += law[j] * x[j];
    CostObservation o;
    o.trial_key = t.key;
    o.config = t.config;
    o.latency_ms = ms * (1 + test::CostLawNoise(state));
    observations.push_back(o);
  }
  const auto model = CostModel::Fit(observations);
  ASSERT_TRUE(model);
  const CostModel::Term term = model->Terms()[math];
  EXPECT_EQ(term.name, "math_extra_ms_per_million_scores");
  EXPECT_LE(term.coefficient.low, 0.8);
  EXPECT_GE(term.coefficient.high, 0.8);
  EXPECT_LT(LeaveOneOut(observations).median_abs_error, 0.05);
}

TEST_F(CostModelTest, TooFewTrialsKeepTheAnalyticEstimate) {
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations.assign(all_.begin(), all_.begin() + kMinimumTrialsToFit - 1);
  fitted.model = CostModel::Fit(fitted.observations);
  EXPECT_FALSE(fitted.model);
  EXPECT_NE(fitted.Explain().find("analytic estimate: 7 ok trial(s) of 'cpu'"), std::string::npos)
      << fitted.Explain();
  EXPECT_EQ(fitted.Explain().find("busy"), std::string::npos);
  // A campaign measured on a busy machine is why: the line says so and how to measure again.
  fitted.busy_left_out = 40;
  EXPECT_NE(fitted.Explain().find("40 more measured only on a busy machine, left out "
                                  "(`ditbench run SWEEP --rerun busy --require-idle 600`"),
            std::string::npos)
      << fitted.Explain();
}

// Advise and the report look every planned trial up in the index; it answers as Observed,
// the first observation of a key included.
TEST_F(CostModelTest, ObservationIndexFindsWhatObservedFinds) {
  FittedModel fitted;
  fitted.observations = all_;
  CostObservation second = all_.front();
  second.latency_ms *= 2;
  fitted.observations.push_back(second);  // a key twice: the first stands
  const ObservationIndex index(fitted.observations);
  for (const CostObservation& o : fitted.observations)
    EXPECT_EQ(index.Find(o.trial_key), fitted.Observed(o.trial_key)) << o.trial_key;
  EXPECT_EQ(index.Find(all_.front().trial_key), &fitted.observations.front());
  EXPECT_EQ(index.Find("not-a-key"), nullptr);
  EXPECT_EQ(fitted.Observed("not-a-key"), nullptr);
}

TEST_F(CostModelTest, AdviseRecommendsTheTrueBestLayoutOfEveryGroup) {
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations = all_;
  fitted.model = CostModel::Fit(all_);
  const Advice advice = Advise(plan_, fitted, {});
  const auto best = TrueBest();
  ASSERT_EQ(advice.groups.size(), 2u);
  for (const GroupAdvice& g : advice.groups) {
    ASSERT_FALSE(g.ranked.empty());
    EXPECT_EQ(g.ranked.front().trial->key, best.at(g.group)) << g.group;
    EXPECT_TRUE(g.ranked.front().measured);
    ASSERT_TRUE(g.regret);
    EXPECT_EQ(*g.regret, 0.0);
    EXPECT_TRUE(g.decided);
  }
}

// A sweep's quality gates: a measured layout that misses one is never recommended, however
// fast; it is listed as excluded with the gate it missed.
TEST_F(CostModelTest, AdviseNeverRecommendsALayoutBelowTheSweepsQualityGates) {
  const auto best = TrueBest();
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations = all_;
  for (CostObservation& o : fitted.observations) {
    const bool is_best = o.trial_key == best.at(HalvingGroup(o.config));
    o.output_error = is_best && o.config.world_size() > 1 ? 0.01 : 1e-6;
  }
  fitted.model = CostModel::Fit(fitted.observations);
  for (PlannedTrial& t : plan_.trials) t.config.quality.max_output_error = 1e-3;
  const Advice advice = Advise(plan_, fitted, {});
  std::size_t excluded = 0;
  for (const GroupAdvice& g : advice.groups) {
    ASSERT_FALSE(g.ranked.empty());
    for (const AdvisedTrial& t : g.ranked) EXPECT_FALSE(IsBelowQuality(t.quality)) << g.group;
    for (const AdvisedTrial& t : g.excluded) {
      ++excluded;
      EXPECT_EQ(t.trial->key, best.at(g.group));
      EXPECT_EQ(t.quality, "below: output error 0.01 > 0.001");
    }
    if (!g.excluded.empty()) {
      EXPECT_NE(g.ranked.front().trial->key, best.at(g.group));
    }
  }
  EXPECT_EQ(excluded, advice.groups.size());  // every group's true best is parallel
  // Without the gate the same observations recommend it again.
  for (PlannedTrial& t : plan_.trials) t.config.quality = {};
  for (const GroupAdvice& g : Advise(plan_, fitted, {}).groups) {
    EXPECT_TRUE(g.excluded.empty());
    EXPECT_EQ(g.ranked.front().trial->key, best.at(g.group));
  }
}

// A step cache trades quality for speed: under the sweep's gates a cache setting not yet
// measured is never recommended on its predicted latency (excluded, "unchecked"); without
// gates it is ranked like any layout.
TEST_F(CostModelTest, AdviseRecommendsNoCacheSettingWhoseQualityIsUnchecked) {
  FittedModel fitted;
  fitted.device = "cpu";
  fitted.observations = all_;
  fitted.model = CostModel::Fit(all_);
  const std::size_t uncached = plan_.trials.size();
  for (std::size_t i = 0; i < uncached; ++i) {
    PlannedTrial cached = plan_.trials[i];
    cached.config.cache = {StepCache::Kind::kFbCache, 0.1, 1};
    cached.key = TrialKey(cached.config);
    plan_.trials.push_back(cached);
  }
  for (PlannedTrial& t : plan_.trials) t.config.quality.min_psnr = 30;
  std::size_t excluded = 0;
  for (const GroupAdvice& g : Advise(plan_, fitted, {}).groups) {
    for (const AdvisedTrial& t : g.ranked) EXPECT_TRUE(t.trial->config.cache.empty()) << g.group;
    for (const AdvisedTrial& t : g.excluded) {
      ++excluded;
      EXPECT_FALSE(t.trial->config.cache.empty());
      EXPECT_EQ(t.quality, "unchecked: cache: not measured, its quality unknown");
    }
  }
  EXPECT_GT(excluded, 0u);
  for (PlannedTrial& t : plan_.trials) t.config.quality = {};
  for (const GroupAdvice& g : Advise(plan_, fitted, {}).groups) EXPECT_TRUE(g.excluded.empty());
}

TEST_F(CostModelTest, WithHalfTheTrialsMissingItNamesTheTrialsThatDecideBetweenTheLeaders) {
  // Every other trial of each group, in the law's order, is left unmeasured: the true best
  // among them.
  std::map<std::string, std::vector<const CostObservation*>> by_group;
  for (const CostObservation& o : all_) by_group[HalvingGroup(o.config)].push_back(&o);
  FittedModel fitted;
  fitted.device = "cpu";
  for (auto& [group, members] : by_group) {
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return CostLawMs(a->config) < CostLawMs(b->config);
    });
    for (std::size_t i = 1; i < members.size(); i += 2) fitted.observations.push_back(*members[i]);
  }
  fitted.model = CostModel::Fit(fitted.observations);
  ASSERT_TRUE(fitted.model) << fitted.Explain();
  const Advice advice = Advise(plan_, fitted, {});
  const auto best = TrueBest();
  for (const GroupAdvice& g : advice.groups) {
    EXPECT_FALSE(g.decided) << g.group;
    std::vector<std::string> named;
    for (std::size_t i : g.to_measure) named.push_back(g.ranked[i].trial->key);
    // The true best was not measured: it is one of the trials to measure next, and each named
    // trial is unmeasured.
    EXPECT_NE(std::find(named.begin(), named.end(), best.at(g.group)), named.end()) << g.group;
    for (std::size_t i : g.to_measure) EXPECT_FALSE(g.ranked[i].measured);
  }
}

}  // namespace
}  // namespace ditbench::cost_model_test

#include "analysis/configuration_group.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/seed_folding.h"
#include "analysis/speedup.h"
#include "experiments/serve_load.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::configuration_group_test {
namespace {

// Rows as the report reads them: recorded in a real database, read back with Results().
class ConfigurationGroupTest : public ::testing::Test {
 protected:
  std::int64_t NewCampaign() {
    return Db().writer().ResumeOrCreateCampaign(test::MakeCampaign("sweep"), /*fresh=*/true);
  }
  void Record(std::int64_t campaign, const TrialConfig& config, double latency_ms) {
    Db().writer().RecordTrial(campaign, test::MakeTrial(config, TrialStatus::kOk, latency_ms));
  }
  std::vector<ResultRow> Rows() {
    std::vector<std::int64_t> ids;
    for (const CampaignInfo& c : Db().reader().Campaigns()) ids.push_back(c.id);
    return Db().reader().Results(ids);
  }
  const ResultRow& RowOf(const std::vector<ResultRow>& rows, std::int64_t campaign,
                         const TrialConfig& config) {
    for (const ResultRow& row : rows)
      if (row.campaign == campaign && row.trial_key == TrialKey(config)) return row;
    ADD_FAILURE() << "no row for " << TrialKey(config);
    return rows.front();
  }
  static TrialConfig Tiled(int ulysses, int tile, std::int64_t seed = 0) {
    TrialConfig c = test::MakeConfig(ulysses);
    c.scope = Scope::kPipeline;
    c.vae_tile = tile;
    c.seed = seed;
    return c;
  }

  ResultsDb& Db() {
    if (!db_) db_ = ResultsDb::Open(dir_.path() / "results.db");
    return *db_;
  }

  test::TempDir dir_;
  std::unique_ptr<ResultsDb> db_;
};

TEST_F(ConfigurationGroupTest, ResultsCarryTheStoredComputation) {
  const std::int64_t c = NewCampaign();
  Record(c, Tiled(1, 128), 10);
  const std::vector<ResultRow> rows = Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(RowIdentity(rows[0]).value("vae_tile", 0), 128);
}

TEST_F(ConfigurationGroupTest, TrialsDifferingOnlyInSeedShareAConfigurationAndNothingElseDoes) {
  const std::int64_t c = NewCampaign();
  Record(c, Tiled(1, 0, 1), 10);
  Record(c, Tiled(1, 0, 2), 11);
  Record(c, Tiled(1, 128, 1), 12);
  const std::vector<ResultRow> rows = Rows();
  EXPECT_EQ(ConfigurationOf(RowOf(rows, c, Tiled(1, 0, 1))),
            ConfigurationOf(RowOf(rows, c, Tiled(1, 0, 2))));
  EXPECT_NE(ConfigurationOf(RowOf(rows, c, Tiled(1, 0, 1))),
            ConfigurationOf(RowOf(rows, c, Tiled(1, 128, 1))));
  // So seed folding makes two rows of three trials, the tiled one alone.
  const std::vector<ResultRow> folded = FoldSeeds(rows);
  ASSERT_EQ(folded.size(), 2u);
  for (const ResultRow& row : folded)
    EXPECT_EQ(row.folded, SettingsLabel(row).empty() ? 2 : 1) << ConfigurationLabel(row);
}

TEST_F(ConfigurationGroupTest, LabelNamesEverySettingThatIsNotAtItsDefault) {
  const std::int64_t c = NewCampaign();
  TrialConfig pf = test::MakeConfig(1);
  pf.pipefusion = 2;
  pf.pipefusion_patches = 4;
  pf.pipefusion_warmup_steps = 2;
  Record(c, pf, 10);
  Record(c, Tiled(2, 64), 10);
  const std::vector<ResultRow> rows = Rows();
  EXPECT_EQ(ConfigurationLabel(RowOf(rows, c, pf)),
            "pipefusion=2 pipefusion_patches=4 pipefusion_warmup_steps=2");
  EXPECT_EQ(ConfigurationLabel(RowOf(rows, c, Tiled(2, 64))), "ulysses=2 vae_tile=64");
}

TEST_F(ConfigurationGroupTest, BaselineMatchesEverythingButDegreesAndPrefersTheRowsCampaign) {
  const std::int64_t first = NewCampaign();
  Record(first, Tiled(1, 0), 100);
  Record(first, Tiled(1, 128), 120);
  const std::int64_t second = NewCampaign();
  Record(second, Tiled(1, 128), 130);
  Record(second, Tiled(2, 0), 30);
  Record(second, Tiled(2, 128), 40);
  const std::vector<ResultRow> rows = Rows();
  const OneRankBaselines baselines(rows);
  const ResultRow* tiled = baselines.For(RowOf(rows, second, Tiled(2, 128)));
  ASSERT_NE(tiled, nullptr);
  EXPECT_EQ(tiled->campaign, second);  // its own campaign's, with its own vae_tile
  EXPECT_EQ(*tiled->latency_ms, 130);
  const ResultRow* plain = baselines.For(RowOf(rows, second, Tiled(2, 0)));
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->campaign, first);  // none in its campaign: the newest that has one
  EXPECT_EQ(*plain->latency_ms, 100);
}

// vae_parallel only says how the decode is split: a 2-rank trial that splits it has the 1-rank
// trial (which cannot) as its baseline, and its decode's speed-up is over that trial's decode,
// its efficiency over the 2 ranks that split it; the configuration label names it.
TEST_F(ConfigurationGroupTest, ASplitDecodeIsMeasuredAgainstTheOneRankTrialsDecode) {
  const std::int64_t campaign = NewCampaign();
  auto record = [&](int ulysses, int vae_parallel, double latency_ms, double decode_ms) {
    TrialConfig c = Tiled(ulysses, 0);
    c.vae_parallel = vae_parallel;
    TrialRecord trial = test::MakeTrial(c, TrialStatus::kOk, latency_ms);
    trial.metrics->extra["decode_ms"] = decode_ms;
    Db().writer().RecordTrial(campaign, trial);
    return c;
  };
  const TrialConfig one = record(1, 1, 100, 80);
  const TrialConfig whole = record(2, 1, 90, 80);
  const TrialConfig split = record(2, 2, 50, 40);
  const std::vector<ResultRow> rows = Rows();
  const OneRankBaselines baselines(rows);
  const ResultRow& split_row = RowOf(rows, campaign, split);
  const ResultRow* baseline = baselines.For(split_row);
  ASSERT_NE(baseline, nullptr);
  EXPECT_EQ(baseline->trial_key, TrialKey(one));
  EXPECT_EQ(VaeParallelOf(split_row), 2);
  EXPECT_EQ(VaeParallelOf(RowOf(rows, campaign, whole)), 1);
  EXPECT_EQ(ConfigurationLabel(split_row), "ulysses=2 vae_parallel=2");
  const auto decode = DecodeSpeedupOf(baselines, split_row);
  ASSERT_TRUE(decode);
  EXPECT_DOUBLE_EQ(decode->value, 2.0);
  EXPECT_DOUBLE_EQ(decode->efficiency, 1.0);
  EXPECT_DOUBLE_EQ(decode->baseline_ms, 80);
  EXPECT_TRUE(decode->trust.plain());
  // Every rank decoding alone: no faster than one rank.
  EXPECT_DOUBLE_EQ(DecodeSpeedupOf(baselines, RowOf(rows, campaign, whole))->value, 1.0);
}

// One speedup per trial, against its reference: the 1-rank trial of the exact computation,
// the one its output error is measured against (tests/runner/output_error_test.cc pins it). A
// cached 2-rank trial is measured against the uncached 1-rank trial, never the cached one (the
// report gave it 2.5x in its Pareto chart and 1.5x in its table), an attention kernel's trial
// against the default kernel's (it had none), and each names its reference.
TEST_F(ConfigurationGroupTest, EachTrialHasOneSpeedupAgainstItsOutputErrorReference) {
  const std::int64_t c = NewCampaign();
  TrialConfig cached_one = Tiled(1, 0), cached_two = Tiled(2, 0), math = Tiled(2, 0);
  cached_one.cache = cached_two.cache = {StepCache::Kind::kFbCache, 0.2, 1};
  math.attention = AttentionBackend::kMath;
  math.quant = Quantization::kFp8Rowwise;
  Record(c, Tiled(1, 0), 100);
  Record(c, cached_one, 60);
  Record(c, cached_two, 40);
  Record(c, math, 80);
  const std::vector<ResultRow> rows = Rows();
  const OneRankBaselines baselines(rows);
  const std::map<TrialId, Speedup> speedups = TrialSpeedups(rows);  // query's and advise's
  for (const TrialConfig& config : {cached_one, cached_two, math}) {
    const ResultRow& row = RowOf(rows, c, config);
    const std::optional<Speedup> speedup = SpeedupOf(baselines, row);
    ASSERT_TRUE(speedup) << row.trial_key;
    EXPECT_EQ(speedup->baseline_key, TrialKey(Tiled(1, 0)));
    EXPECT_DOUBLE_EQ(speedup->value, 100 / *row.latency_ms);
    EXPECT_DOUBLE_EQ(speedups.at({c, row.trial_key}).value, speedup->value);
  }
  const ResultRow& cached = RowOf(rows, c, cached_two);
  EXPECT_EQ(SpeedupOf(baselines, cached)->ReferenceText(), "1 rank without cache");
  EXPECT_EQ(SpeedupOf(baselines, RowOf(rows, c, math))->ReferenceText(),
            "1 rank without attention, quant");
  EXPECT_EQ(SpeedupOf(baselines, RowOf(rows, c, Tiled(1, 0)))->ReferenceText(), "1 rank");
  // A cache that skipped steps may beat its world size; that is what it is for.
  EXPECT_FALSE(SpeedupOf(baselines, cached)->trust.Has(Doubt::kSuperlinear));
}

// A step cache that skipped no step computed what the uncached trial did: a speedup above its
// world size is then noise (the report showed 4.7x on 2 ranks unmarked), doubted superlinear.
TEST_F(ConfigurationGroupTest, ACacheThatSkippedNoStepIsDoubtedAboveItsWorldSize) {
  const std::int64_t c = NewCampaign();
  Record(c, Tiled(1, 0), 100);
  auto cached = [&](double skipped, double threshold) {
    TrialConfig config = Tiled(2, 0);
    config.cache = {StepCache::Kind::kFbCache, threshold, 1};
    TrialRecord trial = test::MakeTrial(config, TrialStatus::kOk, 21);
    trial.metrics->extra["skipped_steps"] = skipped;
    Db().writer().RecordTrial(c, trial);
    return config;
  };
  const TrialConfig none_skipped = cached(0, 0.1), some_skipped = cached(6, 0.3);
  const std::vector<ResultRow> rows = Rows();
  const OneRankBaselines baselines(rows);
  const std::optional<Speedup> noise = SpeedupOf(baselines, RowOf(rows, c, none_skipped));
  ASSERT_TRUE(noise);
  EXPECT_NEAR(noise->value, 4.76, 0.01);
  EXPECT_TRUE(noise->trust.Has(Doubt::kSuperlinear));
  EXPECT_FALSE(SpeedupOf(baselines, RowOf(rows, c, some_skipped))->trust.Has(Doubt::kSuperlinear));
}

// Where the group has no trial of the exact computation (every trial runs `attention: math`),
// the reference is the 1-rank trial of the row's own computation, named plainly "1 rank".
TEST_F(ConfigurationGroupTest, WithoutTheExactTrialTheReferenceIsTheRowsOwnComputation) {
  const std::int64_t c = NewCampaign();
  TrialConfig one = Tiled(1, 0), two = Tiled(2, 0);
  one.attention = two.attention = AttentionBackend::kMath;
  Record(c, one, 100);
  Record(c, two, 60);
  const std::vector<ResultRow> rows = Rows();
  const std::optional<Speedup> speedup = SpeedupOf(OneRankBaselines(rows), RowOf(rows, c, two));
  ASSERT_TRUE(speedup);
  EXPECT_EQ(speedup->baseline_key, TrialKey(one));
  EXPECT_EQ(speedup->ReferenceText(), "1 rank");
}

// Served trials are ranked only against served trials of the same offered load: never against
// timed ones, nor at another rate (the summary's "fastest" was a rate-2 served trial).
TEST_F(ConfigurationGroupTest, ServedTrialsShareAGroupOnlyAtTheSameLoad) {
  const std::int64_t c = NewCampaign();
  auto served = [](int ulysses, double rate) {
    TrialConfig config = Tiled(ulysses, 0);
    config.serve = ServeLoad{};
    config.serve->rate_per_s = rate;
    config.serve->requests = 8;
    return config;
  };
  const TrialConfig timed = Tiled(1, 0), slow = served(1, 1), fast = served(2, 2);
  Record(c, timed, 100);
  Record(c, slow, 300);
  Record(c, fast, 90);
  Record(c, served(1, 2), 250);
  const std::vector<ResultRow> rows = Rows();
  const ReportGroup timed_group = ReportGroupOf(RowOf(rows, c, timed));
  const ReportGroup slow_group = ReportGroupOf(RowOf(rows, c, slow));
  const ReportGroup fast_group = ReportGroupOf(RowOf(rows, c, fast));
  EXPECT_EQ(timed_group.load, "");
  EXPECT_NE(timed_group, slow_group);
  EXPECT_NE(slow_group, fast_group);
  EXPECT_NE(slow_group.Text(), fast_group.Text());
  EXPECT_EQ(fast_group, ReportGroupOf(RowOf(rows, c, served(1, 2))));
  EXPECT_EQ(fast_group, ReportGroupOf(fast));  // a planned trial groups as its row
  EXPECT_THAT(fast_group.Label(), ::testing::HasSubstr(" · served at "));
  EXPECT_THAT(fast_group.Label(), ::testing::HasSubstr("rate=2"));
  // The load is the group's: the configuration label names only the layout.
  EXPECT_EQ(ConfigurationLabel(RowOf(rows, c, fast)), "ulysses=2");
  // Where no group heads the list (plan's table, run's status line, query's settings column),
  // the settings label names the load, so served trials at two rates read apart.
  EXPECT_THAT(SettingsLabel(slow, {}), ::testing::HasSubstr("served at "));
  EXPECT_THAT(SettingsLabel(slow, {}), ::testing::HasSubstr("rate=1"));
  EXPECT_NE(SettingsLabel(slow, {}), SettingsLabel(served(1, 2), {}));
  EXPECT_EQ(SettingsLabel(slow, {"serve"}), "");
  EXPECT_EQ(SettingsLabel(timed, {}), "");
  EXPECT_EQ(SettingsAndLoadLabel(RowOf(rows, c, slow)), SettingsLabel(slow, {}));
  EXPECT_EQ(SettingsAndLoadLabel(RowOf(rows, c, timed)), "");
  // The served 2-rank trial's speedup is over the served 1-rank trial at its own load.
  const std::map<TrialId, Speedup> speedups = TrialSpeedups(rows);
  EXPECT_EQ(speedups.at({c, TrialKey(fast)}).baseline_key, TrialKey(served(1, 2)));
}

TEST_F(ConfigurationGroupTest, AConfigAndItsStoredRowHaveOneReportGroupAsHalvingRanksIt) {
  const std::int64_t c = NewCampaign();
  TrialConfig tiny = Tiled(2, 64);
  tiny.model_overrides = {{"depth", 8}};
  tiny.profile_blocks = true;
  Record(c, tiny, 10);
  Record(c, Tiled(1, 0), 10);
  const std::vector<ResultRow> rows = Rows();
  for (const TrialConfig& config : {tiny, Tiled(1, 0)})
    EXPECT_EQ(ReportGroupOf(config), ReportGroupOf(RowOf(rows, c, config)));
  EXPECT_EQ(ReportGroupOf(tiny).model, "pixart-alpha{depth:8}");
  EXPECT_NE(ReportGroupOf(tiny), ReportGroupOf(Tiled(1, 0)));
  EXPECT_EQ(ReportGroupOf(Tiled(1, 0)), ReportGroupOf(Tiled(4, 128, 3)));
}

// A report group names a clip with its frames and a non-square image with both sides; image
// groups' text stays as it was (halving ranks by it).
TEST_F(ConfigurationGroupTest, ClipsAndNonSquareImagesAreGroupsOfTheirOwn) {
  const std::int64_t c = NewCampaign();
  TrialConfig square = test::MakeConfig(1);
  TrialConfig wide = square;
  wide.height = wide.resolution / 2;
  TrialConfig clip = square;
  clip.model = "wan2.1-t2v-tiny";
  clip.resolution = 832;
  clip.height = 480;
  clip.frames = 5;
  TrialConfig longer = clip;
  longer.frames = 9;
  for (const TrialConfig& config : {square, wide, clip, longer}) Record(c, config, 10);
  const std::vector<ResultRow> rows = Rows();
  for (const TrialConfig& config : {square, wide, clip, longer})
    EXPECT_EQ(ReportGroupOf(config), ReportGroupOf(RowOf(rows, c, config)));
  EXPECT_NE(ReportGroupOf(square), ReportGroupOf(wide));
  EXPECT_NE(ReportGroupOf(clip), ReportGroupOf(longer));
  EXPECT_EQ(ReportGroupOf(square).ResolutionLabel(), fmt::format("{} px", square.resolution));
  EXPECT_EQ(ReportGroupOf(square).Text().find("height"), std::string::npos);
  EXPECT_EQ(ReportGroupOf(wide).ResolutionLabel(),
            fmt::format("{}x{} px", wide.resolution, wide.height));
  EXPECT_EQ(ReportGroupOf(clip).ResolutionLabel(), "832x480 px · 5 frames");
  EXPECT_EQ(ReportGroupOf(longer).Text().substr(ReportGroupOf(longer).Text().size() - 20),
            "|height=480|frames=9");
}

// Tokens per rank, shown beside the speedup: a sample's tokens over ring x ulysses.
TEST_F(ConfigurationGroupTest, TokensPerRankSplitTheSampleOverTheSequenceGroup) {
  const std::int64_t c = NewCampaign();
  TrialConfig clip = test::MakeConfig(2);
  clip.model = "wan2.1-t2v-tiny";
  clip.resolution = 832;
  clip.height = 480;
  clip.frames = 5;  // 2 latent frames x 30 x 52 patches = 3,120 tokens
  TrialConfig ring = clip;
  ring.ring = 2;
  TrialConfig image = test::MakeConfig(1);
  image.model = "pixart-alpha";
  image.resolution = 1024;  // 64 x 64 patches
  image.model_overrides = {{"depth", 2}};
  for (const TrialConfig& config : {clip, ring, image}) Record(c, config, 10);
  const std::vector<ResultRow> rows = Rows();
  EXPECT_EQ(TokensPerRank(RowOf(rows, c, clip)), 1560);
  EXPECT_EQ(TokensPerRank(RowOf(rows, c, ring)), 780);
  EXPECT_EQ(TokensPerRank(RowOf(rows, c, image)), 4096);
  ResultRow command = RowOf(rows, c, image);
  command.workload = Workload::kCommand;  // its model is only a label
  EXPECT_EQ(TokensPerRank(command), std::nullopt);
}

}  // namespace
}  // namespace ditbench::configuration_group_test

#include "analysis/configuration_group.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/seed_folding.h"
#include "analysis/speedup.h"
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

// Output error end to end through the real database: .npy files in run folders, the reference
// found by key in whichever order the trials finish.
#include "runner/output_error.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/configuration_group.h"
#include "contract/worker_contract.h"
#include "experiments/trial_fields.h"
#include "storage/results_db.h"
#include "tests/support/sample_results.h"
#include "tests/support/temp_dir.h"

namespace ditbench::output_error_test {
namespace {

class OutputErrorTest : public ::testing::Test {
 protected:
  // Records an ok trial of `config` whose output is `values`, as the coordinator does.
  TrialRecord Record(ResultsDb& db, std::int64_t campaign, const TrialConfig& config,
                     const std::vector<float>& values, std::vector<std::int64_t> shape = {}) {
    TrialRecord record = test::MakeTrial(config, TrialStatus::kOk, 10);
    const auto run_dir = dir_ / record.trial_key;
    std::filesystem::create_directories(run_dir);
    if (shape.empty()) shape = {1, static_cast<std::int64_t>(values.size())};
    WriteNpy(run_dir / kOutputFileName, shape, values.data());
    record.run_dir = run_dir.string();
    AttachOutputReference(record, config);
    db.writer().RecordTrial(campaign, record);
    UpdateOutputErrors(db.output_errors(), record);
    return record;
  }
  std::optional<double> Error(ResultsDb& db, std::int64_t campaign, const std::string& key,
                              std::string* note = nullptr,
                              const std::string& column = "output_error") {
    ResultsQuery query;
    query.columns = {column, "output_error_note"};
    query.conditions = {{"trial_key", "=", key}};
    query.campaign = campaign;
    ResultTable table = db.console().QueryResults(query);
    EXPECT_EQ(table.rows.size(), 1u);
    if (table.rows.empty()) return std::nullopt;
    if (note) {
      const auto* text = std::get_if<std::string>(&table.rows[0][1]);
      *note = text ? *text : "";
    }
    if (const auto* d = std::get_if<double>(&table.rows[0][0])) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&table.rows[0][0])) return double(*i);
    return std::nullopt;
  }
  test::TempDir dir_;
};

TEST_F(OutputErrorTest, NpyRoundTripsAndHasAnAlignedHeader) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  WriteNpy(dir_ / "a.npy", {2, 3}, values.data());
  NpyArray read = ReadNpy(dir_ / "a.npy");
  EXPECT_EQ(read.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(read.data, values);
  // numpy's format: magic, version 1.0, a header padded so that data starts at a multiple of 64.
  std::ifstream in(dir_ / "a.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((bytes.size() - values.size() * sizeof(float)) % 64, 0u);
  std::ofstream(dir_ / "bad.npy") << "not numpy";
  EXPECT_THROW(ReadNpy(dir_ / "bad.npy"), std::runtime_error);
}

TEST_F(OutputErrorTest, RelativeL2IsTheNormOfTheDifferenceOverTheReference) {
  NpyArray reference{{2}, {3.0f, 4.0f}}, output{{2}, {3.0f, 4.5f}};
  EXPECT_DOUBLE_EQ(RelativeL2(output, reference), 0.5 / 5.0);
  EXPECT_THROW(RelativeL2(NpyArray{{1}, {1.0f}}, reference), std::invalid_argument);
}

TEST_F(OutputErrorTest, TheReferenceIsTheOneRankTrialOfTheSameComputation) {
  TrialConfig parallel = test::MakeConfig(/*ulysses=*/2, /*ring=*/2);
  parallel.pipefusion = 2;
  parallel.pipefusion_patches = 4;
  parallel.pipefusion_warmup_steps = 3;
  parallel.cfg = 2;
  parallel.vae_parallel = 4;  // a split decode equals the 1-rank decode
  const TrialConfig reference = ReferenceConfig(parallel);
  EXPECT_EQ(reference.world_size(), 1);
  EXPECT_EQ(TrialKey(reference), TrialKey(test::MakeConfig(1)));
  EXPECT_EQ(TrialKey(ReferenceConfig(reference)), TrialKey(reference));
}

// What a kernel, FP8 layers or a schedule cost in output is measured against the computation
// they approximate: SDPA's own kernel, every layer in the trial's precision, every step alike.
TEST_F(OutputErrorTest, TheReferenceRunsAutoAttentionWithoutQuantOrSchedule) {
  TrialConfig knobs = test::MakeConfig(/*ulysses=*/2);
  knobs.attention = AttentionBackend::kCudnn;
  knobs.quant = Quantization::kFp8Rowwise;
  knobs.quant_exclude = {"blocks.*.fc2"};
  knobs.schedule = {2, 2};
  EXPECT_EQ(TrialKey(ReferenceConfig(knobs)), TrialKey(test::MakeConfig(1)));
  TrialConfig one_rank_math = test::MakeConfig(1);
  one_rank_math.attention = AttentionBackend::kMath;
  EXPECT_NE(TrialKey(ReferenceConfig(one_rank_math)), TrialKey(one_rank_math))
      << "a 1-rank trial with a forced kernel is not its own reference";
}

TEST_F(OutputErrorTest, ErrorIsFilledWhicheverTrialFinishesFirst) {
  auto db = ResultsDb::Open(dir_ / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  // The parallel trial first: it waits for its reference.
  const auto parallel = Record(*db, campaign, test::MakeConfig(2), {3.0f, 4.5f});
  std::string note;
  EXPECT_FALSE(Error(*db, campaign, parallel.trial_key, &note));
  EXPECT_NE(note.find("no ok 1-rank trial"), std::string::npos) << note;
  // Then the reference: its own error is 0, and the waiting trial's is computed.
  const auto reference = Record(*db, campaign, test::MakeConfig(1), {3.0f, 4.0f});
  EXPECT_EQ(Error(*db, campaign, reference.trial_key), 0.0);
  EXPECT_DOUBLE_EQ(*Error(*db, campaign, parallel.trial_key), 0.1);
  // A later parallel trial finds the reference at once.
  const auto ring = Record(*db, campaign, test::MakeConfig(1, 2), {3.0f, 4.0f});
  EXPECT_EQ(Error(*db, campaign, ring.trial_key), 0.0);
}

TEST_F(OutputErrorTest, AMissingOutputFileIsANullErrorWithAReason) {
  auto db = ResultsDb::Open(dir_ / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  Record(*db, campaign, test::MakeConfig(1), {1.0f});
  TrialRecord record = test::MakeTrial(test::MakeConfig(4), TrialStatus::kOk, 10);
  record.run_dir = (dir_ / "nowhere").string();
  AttachOutputReference(record, test::MakeConfig(4));
  db->writer().RecordTrial(campaign, record);
  UpdateOutputErrors(db->output_errors(), record);
  std::string note;
  EXPECT_FALSE(Error(*db, campaign, record.trial_key, &note));
  EXPECT_NE(note.find("output.npy: cannot read: No such file"), std::string::npos) << note;
}

// Scope pipeline: the output is the decoded image, and PSNR and SSIM on [-1, 1] are stored
// beside the output error; the reference itself and other scopes have none.
TEST_F(OutputErrorTest, APipelineTrialGetsThePsnrAndSsimOfItsDecodedImage) {
  auto db = ResultsDb::Open(dir_ / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  NpyArray reference{{1, 3, 16, 16}, {}}, image{{1, 3, 16, 16}, {}};
  for (int i = 0; i < 3 * 16 * 16; ++i) {
    reference.data.push_back(static_cast<float>((i % 13) / 6.0 - 1.0));
    image.data.push_back(reference.data.back() + static_cast<float>((i % 5 - 2) / 50.0));
  }
  auto pipeline = [](int ulysses) {
    TrialConfig config = test::MakeConfig(ulysses);
    config.scope = Scope::kPipeline;
    return config;
  };
  const auto one = Record(*db, campaign, pipeline(1), reference.data, reference.shape);
  const auto two = Record(*db, campaign, pipeline(2), image.data, image.shape);
  EXPECT_DOUBLE_EQ(*Error(*db, campaign, two.trial_key, nullptr, "psnr"),
                   Psnr(image, reference, ImageRange::kMinusOneToOne));
  EXPECT_DOUBLE_EQ(*Error(*db, campaign, two.trial_key, nullptr, "ssim"),
                   Ssim(image, reference, ImageRange::kMinusOneToOne));
  EXPECT_LT(*Error(*db, campaign, two.trial_key, nullptr, "ssim"), 1.0);
  EXPECT_FALSE(Error(*db, campaign, one.trial_key, nullptr, "psnr"));
  // The same outputs under scope denoise are latents: no image quality.
  const auto latent_one = Record(*db, campaign, test::MakeConfig(1), reference.data, reference.shape);
  const auto latent_two = Record(*db, campaign, test::MakeConfig(2), image.data, image.shape);
  EXPECT_TRUE(Error(*db, campaign, latent_two.trial_key));
  EXPECT_FALSE(Error(*db, campaign, latent_two.trial_key, nullptr, "psnr"));
}

// The verdict of a trial's quality gates as `query` shows it (NULL: none yet).
std::string QualityVerdict(ResultsDb& db, std::int64_t campaign, const std::string& key) {
  ResultsQuery query;
  query.columns = {"quality"};
  query.conditions = {{"trial_key", "=", key}};
  query.campaign = campaign;
  const ResultTable table = db.console().QueryResults(query);
  if (table.rows.size() != 1) return "(no row)";
  const auto* text = std::get_if<std::string>(&table.rows[0][0]);
  return text ? *text : "NULL";
}

// Quality gates are judged where the output error and PSNR arrive: with the later of the trial
// and its reference, in either order; the reference itself passes at once.
TEST_F(OutputErrorTest, QualityGatesAreJudgedWhicheverTrialFinishesFirst) {
  NpyArray reference{{1, 3, 16, 16}, {}}, close{{1, 3, 16, 16}, {}}, far = close;
  for (int i = 0; i < 3 * 16 * 16; ++i) {
    reference.data.push_back(static_cast<float>((i % 13) / 6.0 - 1.0));
    close.data.push_back(reference.data.back() + static_cast<float>((i % 5 - 2) * 1e-4));
    far.data.push_back(reference.data.back() + static_cast<float>((i % 5 - 2) / 10.0));
  }
  auto gated = [](int ulysses, int ring) {
    TrialConfig config = test::MakeConfig(ulysses, ring);
    config.scope = Scope::kPipeline;
    config.quality.min_psnr = 35;
    return config;
  };
  for (const bool reference_first : {true, false}) {
    SCOPED_TRACE(reference_first ? "reference first" : "reference last");
    auto db = ResultsDb::Open(dir_ / (reference_first ? "first.db" : "last.db"));
    const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
    std::string one_key;
    if (reference_first) one_key = Record(*db, campaign, gated(1, 1), reference.data, reference.shape).trial_key;
    const auto good = Record(*db, campaign, gated(2, 1), close.data, close.shape);
    const auto bad = Record(*db, campaign, gated(1, 2), far.data, far.shape);
    if (!reference_first) {
      EXPECT_EQ(QualityVerdict(*db, campaign, bad.trial_key), "NULL");  // waiting for its reference
      one_key = Record(*db, campaign, gated(1, 1), reference.data, reference.shape).trial_key;
    }
    EXPECT_EQ(QualityVerdict(*db, campaign, one_key), "ok");
    EXPECT_EQ(QualityVerdict(*db, campaign, good.trial_key), "ok");
    const double psnr = Psnr(far, reference, ImageRange::kMinusOneToOne);
    ASSERT_LT(psnr, 35);
    EXPECT_EQ(QualityVerdict(*db, campaign, bad.trial_key),
              fmt::format("below: psnr {:.3g} < 35", psnr));
    // Recorded with its numbers; the view's quality_ok says 0, and a filter finds it.
    EXPECT_DOUBLE_EQ(*Error(*db, campaign, bad.trial_key, nullptr, "psnr"), psnr);
    EXPECT_EQ(Error(*db, campaign, bad.trial_key, nullptr, "quality_ok"), 0.0);
    EXPECT_EQ(Error(*db, campaign, good.trial_key, nullptr, "quality_ok"), 1.0);
    ResultsQuery below;
    below.conditions = {{"quality_ok", "=", "0"}};
    below.columns = {"trial_key"};
    const ResultTable table = db->console().QueryResults(below);
    ASSERT_EQ(table.rows.size(), 1u);
    EXPECT_EQ(std::get<std::string>(table.rows[0][0]), bad.trial_key);
  }
}

TEST_F(OutputErrorTest, WithoutAGateThereIsNoVerdict) {
  auto db = ResultsDb::Open(dir_ / "results.db");
  const auto campaign = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), false);
  const auto one = Record(*db, campaign, test::MakeConfig(1), {3.0f, 4.0f});
  const auto two = Record(*db, campaign, test::MakeConfig(2), {3.0f, 4.5f});
  EXPECT_EQ(QualityVerdict(*db, campaign, one.trial_key), "NULL");
  EXPECT_EQ(QualityVerdict(*db, campaign, two.trial_key), "NULL");
}

// The trial a speedup is measured against (analysis/configuration_group.h OneRankBaselines)
// is the trial the output error is measured against, with every knob away from its default:
// one reference, so a chart of speedup against output quality has one origin.
TEST_F(OutputErrorTest, TheSpeedupReferenceIsTheOutputErrorReference) {
  auto db = ResultsDb::Open(dir_ / "results.db");
  const std::int64_t c = db->writer().ResumeOrCreateCampaign(test::MakeCampaign("s"), true);
  TrialConfig knobs = test::MakeConfig(2);
  knobs.scope = Scope::kPipeline;
  knobs.pipefusion = 2;
  knobs.pipefusion_patches = 4;
  knobs.vae_parallel = 2;
  knobs.attention = AttentionBackend::kMath;
  knobs.quant = Quantization::kFp8Rowwise;
  knobs.quant_exclude = {"proj_out"};
  knobs.schedule.high_precision_first = 1;
  knobs.cache = {StepCache::Kind::kFbCache, 0.2, 1};
  TrialConfig same_computation = knobs;  // a 1-rank trial of the knobbed computation
  static_cast<ParallelDegrees&>(same_computation) = ParallelDegrees{};
  same_computation.pipefusion_patches = 0;
  same_computation.vae_parallel = 1;
  for (const TrialConfig& config : {knobs, same_computation, ReferenceConfig(knobs)})
    db->writer().RecordTrial(c, test::MakeTrial(config, TrialStatus::kOk, 10));
  const std::vector<ResultRow> rows = db->reader().Results({c});
  const OneRankBaselines baselines(rows);
  const auto row = std::find_if(rows.begin(), rows.end(),
                                [&](const ResultRow& r) { return r.trial_key == TrialKey(knobs); });
  ASSERT_NE(row, rows.end());
  const ResultRow* reference = baselines.For(*row);
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(reference->trial_key, TrialKey(ReferenceConfig(knobs)));
}

}  // namespace
}  // namespace ditbench::output_error_test

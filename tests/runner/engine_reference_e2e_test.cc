// A reference trial named in the sweep (quality: {reference: KEY}), end to end with real
// processes: an engine trial compared with a trial of another campaign, another sweep's, by its
// key, instead of the 1-rank trial of its own computation.
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/engine_workload.h"

namespace ditbench::engine_reference_e2e_test {
namespace {

using test::EngineWorkloadTest;
using ::testing::HasSubstr;

TEST_F(EngineWorkloadTest, AnEngineTrialIsComparedWithTheTrialItsSweepNames) {
  // The reference: one trial of the engine at 64 px and 2 steps.
  ASSERT_EQ(RunCampaign("", "steps: [2]"), 0) << log_;
  const std::string reference = Trials()[0]["trial_key"];
  // Another sweep (another request: 3 steps) naming it; run into the same database.
  top_extra_ = "quality: {reference: " + reference + ", min_psnr: 1000}\n";
  ASSERT_EQ(RunCampaign("", "steps: [3]"), 0) << log_;
  const nlohmann::json rows =
      Sql("SELECT r.trial_key, r.campaign, r.psnr, r.ssim, r.quality, m.output_reference_key FROM "
          "results r JOIN trials t ON t.trial_key = r.trial_key AND t.campaign_id = r.campaign "
          "JOIN trial_metrics m ON m.trial_id = t.id ORDER BY t.id");
  ASSERT_EQ(rows.size(), 2u) << rows.dump();
  const nlohmann::json& named = rows[1];
  EXPECT_NE(named["trial_key"], reference);
  EXPECT_EQ(named["output_reference_key"], reference);
  // Fewer steps, another image: a finite PSNR and an SSIM below 1, judged by the gate.
  ASSERT_TRUE(named["psnr"].is_number()) << named.dump();
  EXPECT_GT(named["psnr"].get<double>(), 0);
  EXPECT_LT(named["ssim"].get<double>(), 1);
  EXPECT_THAT(named["quality"].get<std::string>(), HasSubstr("below: psnr"));
}

TEST_F(EngineWorkloadTest, AReferenceNotRecordedYetIsSaidSo) {
  top_extra_ = "quality: {reference: 0123456789abcdef}\n";
  ASSERT_EQ(RunCampaign("", "steps: [2]"), 0) << log_;
  const nlohmann::json row =
      Sql("SELECT output_error_note, output_reference_key FROM trial_metrics")[0];
  EXPECT_EQ(row["output_reference_key"], "0123456789abcdef");
  EXPECT_EQ(row["output_error_note"],
            "no ok trial 0123456789abcdef (quality.reference) recorded yet");
}

}  // namespace
}  // namespace ditbench::engine_reference_e2e_test

#include "experiments/worker_contract.h"

#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace ditbench {
namespace {

class WorkerContractTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
};

TEST_F(WorkerContractTest, RankResultRoundTripsEveryField) {
  RankResult r;
  r.rank = 1;
  r.world_size = 2;
  r.status = "ok";
  r.device = "NVIDIA H100 80GB HBM3";
  r.backend = "nccl";
  r.stop_reason = "target_rel_ci";
  r.samples = {{1, 0, "iteration", 12.5, true}, {1, 1, "step:0/block:3", 0.25, false}};
  r.peak_mem_mb = 1234.5;
  r.peak_reserved_mb = 2048;
  r.environment = {{"libtorch", "2.11.0"}};
  r.clocks = {{"available", true}, {"throttled", true}, {"sm_mhz_min", 1410.0}};
  WriteFileAtomically(RankResultPath(dir_.path(), 1), ToJson(r).dump());
  EXPECT_FALSE(std::filesystem::exists(RankResultPath(dir_.path(), 1).string() + ".tmp"));

  RankResult back = ReadRankResult(RankResultPath(dir_.path(), 1));
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.backend, "nccl");
  EXPECT_EQ(back.stop_reason, "target_rel_ci");
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_EQ(back.samples[1].stage, "step:0/block:3");
  EXPECT_EQ(back.samples[1].rank, 1);
  EXPECT_TRUE(back.samples[0].warmup);
  EXPECT_DOUBLE_EQ(*back.peak_reserved_mb, 2048);
  EXPECT_EQ(back.environment, r.environment);
  EXPECT_EQ(back.clocks, r.clocks);
}

TEST_F(WorkerContractTest, TrialFileRoundTripsTheConfig) {
  TrialFile t{"abc", "s", TrialConfig{}, "cuda"};
  t.config.ulysses = 4;
  t.config.model_overrides = {{"depth", 2}};
  t.config.pipefusion_patches = 1;  // stored as the effective number
  WriteFileAtomically(dir_ / "trial.json", ToJson(t).dump());
  TrialFile back = ReadTrialFile(dir_ / "trial.json");
  EXPECT_EQ(back.config, t.config);
  EXPECT_EQ(back.device, "cuda");
  EXPECT_EQ(back.trial_key, "abc");
}

TEST_F(WorkerContractTest, NewerVersionAndOtherFormatsAreRefusedWithThePath) {
  auto j = ToJson(RankResult{});
  j["version"] = kContractVersion + 1;
  std::ofstream(dir_ / "rank0.json") << j.dump();
  try {
    ReadRankResult(dir_ / "rank0.json");
    FAIL() << "a newer version was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank0.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ / "trial.json") << ToJson(RankResult{}).dump();
  EXPECT_THROW(ReadTrialFile(dir_ / "trial.json"), std::runtime_error);  // a rank file, not a trial
}

}  // namespace
}  // namespace ditbench

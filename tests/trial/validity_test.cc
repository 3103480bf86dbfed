#include "trial/validity.h"

#include <gtest/gtest.h>

namespace ditbench {
namespace {

TrialConfig PixArt(int resolution, int ulysses) {
  TrialConfig c;
  c.model = "pixart-alpha";
  c.resolution = resolution;
  c.ulysses = ulysses;
  return c;
}

TEST(ValidityTest, PixArtHeadsRefuseUlyssesThree) {
  auto reason = InvalidReason(PixArt(1024, 3), {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("16 heads are not divisible by ulysses=3"), std::string::npos) << *reason;
}

TEST(ValidityTest, ValidPixArtTrialPasses) {
  EXPECT_EQ(InvalidReason(PixArt(1024, 8), {8, true}), std::nullopt);
}

TEST(ValidityTest, LatentRowsMustSplitEvenly) {
  // 256 px -> 32 latent -> 16 patch rows; 16 heads allow ulysses 16 but there are 16 rows only
  // at 256 px; at 128 px there are 8 rows.
  auto reason = InvalidReason(PixArt(128, 16), {16, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("not divisible"), std::string::npos) << *reason;
}

TEST(ValidityTest, VaeTilesNeedTheDecodeOfScopePipeline) {
  TrialConfig c = PixArt(1024, 1);
  c.vae_tile = 512;
  auto reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("vae_tile=512 tiles the VAE decode, which only scope pipeline runs"),
            std::string::npos) << *reason;
  c.scope = Scope::kPipeline;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
}

TEST(ValidityTest, WorldSizeMustFitTheSlots) {
  auto reason = InvalidReason(PixArt(1024, 4), {2, false});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("exceeds the 2 CPU slots"), std::string::npos) << *reason;
  // The factors, outermost first, as the message has always spelled them.
  TrialConfig c = PixArt(1024, 4);
  c.cfg = 2;
  EXPECT_EQ(InvalidReason(c, {2, false}),
            "world size 8 (dp 1 x cfg 2 x pipefusion 1 x ring 1 x ulysses 4) exceeds the 2 CPU "
            "slots available");
}

TEST(ValidityTest, EveryStrategyAndHybridRuns) {
  TrialConfig ring = PixArt(1024, 1);
  ring.ring = 2;
  EXPECT_FALSE(InvalidReason(ring, {8, true}));  // ring runs
  TrialConfig usp_pipefusion = ring;
  usp_pipefusion.ulysses = 2;
  EXPECT_FALSE(InvalidReason(usp_pipefusion, {8, true}));  // USP runs
  usp_pipefusion.pipefusion = 2;  // USP inside PipeFusion's stages runs too
  const Verdict v = Judge(usp_pipefusion, {8, true});
  EXPECT_FALSE(v.invalid);
  EXPECT_FALSE(v.unsupported);
  usp_pipefusion.pipefusion_patches = 3;  // but a patch must still split over ring x ulysses
  EXPECT_TRUE(Judge(usp_pipefusion, {8, true}).invalid);
  TrialConfig pipeline = PixArt(1024, 1);
  pipeline.scope = Scope::kPipeline;
  EXPECT_FALSE(InvalidReason(pipeline, {8, true}));  // the VAE decoder exists
}

TEST(ValidityTest, JointFamiliesRunAndRefuseWhatTheyCannotDo) {
  TrialConfig flux = PixArt(1024, 1);
  flux.model = "flux-dev";
  flux.ulysses = 2;
  flux.ring = 2;
  EXPECT_FALSE(InvalidReason(flux, {8, true}));  // Flux runs under USP
  flux.cfg = 2;
  EXPECT_NE(Judge(flux, {8, true}).invalid->find("cfg=2"), std::string::npos);
  flux.cfg = 1;
  flux.ring = 1;
  flux.pipefusion = 2;
  const Verdict pipefusion = Judge(flux, {8, true});  // its stages pass the text stream on
  EXPECT_FALSE(pipefusion.invalid);
  EXPECT_FALSE(pipefusion.unsupported);
  flux.ring = 2;  // and ring attention runs inside the stages
  EXPECT_FALSE(Judge(flux, {8, true}).invalid);
  EXPECT_FALSE(Judge(flux, {8, true}).unsupported);

  TrialConfig sd3 = PixArt(1024, 1);
  sd3.model = "sd3-medium";
  sd3.cfg = 2;
  EXPECT_FALSE(InvalidReason(sd3, {8, true}));
  sd3.resolution = 4096;  // 256 patch rows: beyond SD3's 192-row position table
  EXPECT_NE(Judge(sd3, {8, true}).invalid->find("192 patch rows"), std::string::npos);
  sd3.model = "sd3.5-medium";  // its table has 384 rows
  EXPECT_FALSE(InvalidReason(sd3, {8, true}));
  sd3.resolution = 8192;
  EXPECT_NE(Judge(sd3, {8, true}).invalid->find("384 patch rows"), std::string::npos);
}

TEST(ValidityTest, PipeFusionRunsDualAttentionBlocks) {
  TrialConfig c = PixArt(1024, 1);
  c.model = "sd3.5-medium";  // a KV cache per attention of each block
  c.pipefusion = 2;
  c.ring = 2;
  EXPECT_FALSE(InvalidReason(c, {8, true}));
}

TEST(ValidityTest, Tf32IsRefusedOnCpu) {
  TrialConfig c = PixArt(256, 1);
  c.precision = Precision::kTf32;
  EXPECT_TRUE(InvalidReason(c, {2, false}));
  EXPECT_FALSE(InvalidReason(c, {2, true}));
}

// On CPU a cuda_graph trial is skipped (unsupported, with its reason), never run eagerly in its
// place; a command's program decides its own kernels, so the field is an error there.
TEST(ValidityTest, CudaGraphIsSkippedOnCpuAndRefusedForACommand) {
  TrialConfig c = PixArt(256, 1);
  c.graph = GraphMode::kCudaGraph;
  const Verdict cpu = Judge(c, {2, false});
  EXPECT_FALSE(cpu.invalid);
  ASSERT_TRUE(cpu.unsupported);
  EXPECT_NE(cpu.unsupported->find("graph: cuda_graph"), std::string::npos) << *cpu.unsupported;
  EXPECT_NE(cpu.unsupported->find("never timed eagerly in its place"), std::string::npos);
  EXPECT_FALSE(InvalidReason(c, {2, true}));
  TrialConfig cold = c;  // the capture follows the eager warm-up: there must be one
  cold.warmup = 0;
  EXPECT_NE(InvalidReason(cold, {2, true}).value_or("").find("warmup must be at least 1"),
            std::string::npos);
  TrialConfig blocks = c;  // a replayed step has no block boundaries to mark
  blocks.profile_blocks = true;
  EXPECT_NE(InvalidReason(blocks, {2, true}).value_or("").find("profile_blocks"),
            std::string::npos);
  c.workload = Workload::kCommand;
  c.command = {"python3", "bench.py"};
  const Verdict command = Judge(c, {2, true});
  ASSERT_TRUE(command.invalid);
  EXPECT_NE(command.invalid->find("applies to ditbench's own models"), std::string::npos);
}

}  // namespace
}  // namespace ditbench

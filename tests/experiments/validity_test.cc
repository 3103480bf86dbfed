#include "experiments/validity.h"

#include <fstream>

#include <gtest/gtest.h>

#include "model_zoo/shapes/memory_traffic.h"
#include "tests/support/temp_dir.h"

namespace ditbench::validity_test {
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

// Tensor parallelism: heads split over tp, then over Ulysses inside each tp rank's heads; a
// family whose module does not split, PipeFusion and FP8 are refused, each saying why.
TEST(ValidityTest, TensorParallelismSplitsHeadsAndRefusesWhatItDoesNotBuild) {
  TrialConfig c = PixArt(1024, 2);
  c.tp = 2;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
  c.tp = 3;
  c.ulysses = 1;
  auto reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("16 heads are not divisible by tp=3"), std::string::npos) << *reason;
  c.tp = 4;
  c.ulysses = 8;
  reason = InvalidReason(c, {64, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("tp x ulysses = 32"), std::string::npos) << *reason;
  c.ulysses = 1;
  c.tp = 2;
  c.pipefusion = 2;
  reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("tp=2 with pipefusion=2"), std::string::npos) << *reason;
  c.pipefusion = 1;
  c.model = "wan2.1-t2v-1.3b";
  c.resolution = 832;
  c.height = 480;
  c.frames = 81;
  reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find(
                "tp=2: tensor parallelism is built for pixart, mmdit, flux, hunyuanvideo so far; "
                "wan2.1-t2v-1.3b (wan) is not among them"),
            std::string::npos)
      << *reason;
}

// pad_heads lets a Ulysses degree that does not divide the heads run, padded; without it the
// refusal says what padding would cost.
TEST(ValidityTest, PadHeadsLetsUlyssesThreeRunAndTheRefusalSaysWhatItWouldCost) {
  TrialConfig c = PixArt(1536, 3);  // 48 patch rows: 3 ranks split them
  auto reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("16 heads are not divisible by ulysses=3 (pad_heads: true pads them to "
                         "18, +12.5% attention work)"),
            std::string::npos)
      << *reason;
  c.pad_heads = true;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
  // Inside tensor parallelism a tp rank's heads are padded: 16 / 2 = 8 over Ulysses 3 -> 9.
  c.tp = 2;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
  c.pad_heads = false;
  reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("pad_heads: true pads them to 18"), std::string::npos) << *reason;
  // tp itself must divide the heads: padding is Ulysses' only.
  c.pad_heads = true;
  c.tp = 3;
  c.ulysses = 1;
  reason = InvalidReason(c, {8, true});
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("16 heads are not divisible by tp=3"), std::string::npos) << *reason;
  // The padding's FLOPs, by hand: PixArt-alpha at 1024 px, 2 padded heads of 72 over 28
  // blocks' 4,096^2 scores, the CFG batch's 2 rows: 4 x 72 x 28 x 4096^2 x 2 x 2.
  EXPECT_DOUBLE_EQ(HeadPaddingFlops(*FindModelPreset("pixart-alpha"), {1024, 1024, 0}, 2, 1, 3),
                   4.0 * 72 * 28 * 4096.0 * 4096.0 * 2 * 2);
  EXPECT_EQ(HeadPaddingFlops(*FindModelPreset("pixart-alpha"), {1024, 1024, 0}, 2, 1, 4), 0.0);
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
            std::string::npos)
      << *reason;
  c.scope = Scope::kPipeline;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
}

// vae_parallel: the decode of scope pipeline, over at most the trial's ranks, in equal bands
// of latent rows (untiled) or at least one tile per rank (tiled).
TEST(ValidityTest, VaeParallelNeedsADecodeTheRanksAndRowsOrTilesToSplit) {
  TrialConfig c = PixArt(1024, 2);  // 128 latent rows, 2 ranks
  c.vae_parallel = 2;
  EXPECT_EQ(InvalidReason(c, {8, true}),
            "vae_parallel=2 splits the VAE decode, which only scope pipeline runs (scope is "
            "denoise)");
  c.scope = Scope::kPipeline;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
  c.vae_parallel = 4;
  EXPECT_EQ(InvalidReason(c, {8, true}),
            "vae_parallel=4 splits the decode over the trial's first 4 ranks; it has 2 (the "
            "product of its parallel degrees)");
  // 720 px: 90 latent rows, in bands of 12 and 11 over 8 ranks; a 64 px image has 8 rows.
  TrialConfig wide = PixArt(1024, 1);
  wide.scope = Scope::kPipeline;
  wide.dp = 8;
  wide.resolution = 1280;
  wide.height = 720;
  wide.vae_parallel = 8;
  EXPECT_EQ(InvalidReason(wide, {8, true}), std::nullopt);
  wide.resolution = 64;
  wide.height = 0;
  EXPECT_EQ(InvalidReason(wide, {8, true}), std::nullopt);
  wide.dp = 16;
  wide.vae_parallel = 16;
  EXPECT_EQ(InvalidReason(wide, {16, true}),
            "the latent's 8 rows (64 px / 8) are fewer than vae_parallel=16 bands of at least one "
            "row");
  // Tiled: whole tiles are shared out. 1024 px in tiles of 512 (64 latent rows every 48): 3 x 3.
  c.vae_parallel = 2;
  c.vae_tile = 512;
  EXPECT_EQ(InvalidReason(c, {8, true}), std::nullopt);
  c.vae_tile = 1024;  // the latent fits one tile
  EXPECT_EQ(InvalidReason(c, {8, true}),
            "vae_tile=1024 cuts the latent into 1 tile, fewer than vae_parallel=2 ranks (a "
            "tiled decode shares out whole tiles)");
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
  const TrialVerdict v = Judge(usp_pipefusion, {8, true});
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
  const TrialVerdict pipefusion = Judge(flux, {8, true});  // its stages pass the text stream on
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

// On CPU math and ATen's CPU flash kernel run; cuDNN's and the memory-efficient kernel are
// skipped with a reason naming the device; on a GPU flash and cudnn need half precision; a
// command's program picks its own kernel, so the field is an error there.
TEST(ValidityTest, AttentionKernelsTheDeviceCannotRunAreSkippedWithTheReason) {
  TrialConfig c = PixArt(256, 1);
  for (const AttentionBackend a :
       {AttentionBackend::kAuto, AttentionBackend::kMath, AttentionBackend::kFlash}) {
    c.attention = a;
    EXPECT_FALSE(InvalidReason(c, {2, false})) << AttentionBackendName(a);
  }
  for (const AttentionBackend a : {AttentionBackend::kCudnn, AttentionBackend::kEfficient}) {
    c.attention = a;
    const TrialVerdict cpu = Judge(c, {2, false});
    EXPECT_FALSE(cpu.invalid);
    ASSERT_TRUE(cpu.unsupported) << AttentionBackendName(a);
    EXPECT_NE(cpu.unsupported->find("on CPU only math and flash"), std::string::npos)
        << *cpu.unsupported;
    EXPECT_FALSE(InvalidReason(c, {2, true})) << "bf16 on a GPU";
  }
  c.attention = AttentionBackend::kFlash;
  c.precision = Precision::kFp32;
  EXPECT_NE(InvalidReason(c, {2, true}).value_or("").find("bf16 and fp16 only on a GPU"),
            std::string::npos);
  EXPECT_FALSE(InvalidReason(c, {2, false})) << "the CPU flash kernel runs fp32";
  c.attention = AttentionBackend::kEfficient;
  EXPECT_FALSE(InvalidReason(c, {2, true})) << "memory-efficient attention runs fp32";
}

// FP8 layers run on a GPU only: on CPU the trial is skipped, naming the device; they write
// bf16, so other precisions are refused; a program quantizes on its own.
TEST(ValidityTest, Fp8LayersAreSkippedOnCpuAndTakeBf16) {
  TrialConfig c = PixArt(256, 1);
  for (const Quantization q : {Quantization::kFp8Rowwise, Quantization::kFp8Tensor}) {
    c.quant = q;
    const TrialVerdict cpu = Judge(c, {2, false});
    EXPECT_FALSE(cpu.invalid);
    ASSERT_TRUE(cpu.unsupported) << QuantizationName(q);
    EXPECT_NE(cpu.unsupported->find("this trial runs on CPU"), std::string::npos)
        << *cpu.unsupported;
    EXPECT_NE(cpu.unsupported->find("never emulated and timed"), std::string::npos);
    EXPECT_FALSE(InvalidReason(c, {2, true})) << "bf16 on a GPU";
  }
  c.precision = Precision::kFp16;
  EXPECT_EQ(InvalidReason(c, {2, true}).value_or(""),
            "quant: fp8_tensor writes its FP8 GEMMs' output in bf16, so it takes bf16 trials; "
            "this trial is fp16");
  c.precision = Precision::kBf16;
  c.workload = Workload::kCommand;
  c.command = {"python3", "bench.py"};
  EXPECT_NE(InvalidReason(c, {2, true})
                .value_or("")
                .find("quant: fp8_tensor applies to "
                      "ditbench's own models"),
            std::string::npos);
}

// A schedule keeps steps in high precision: it must leave some steps to the trial's kernel or
// FP8 layers, and there must be one of those to leave them to.
TEST(ValidityTest, AScheduleMustLeaveStepsToTheTrialsSetting) {
  TrialConfig c = PixArt(256, 1);
  c.steps = 4;
  c.schedule = {1, 1};
  EXPECT_NE(InvalidReason(c, {2, false}).value_or("").find("set attention or quant with it"),
            std::string::npos);
  c.attention = AttentionBackend::kMath;
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  c.schedule = {2, 2};
  EXPECT_EQ(InvalidReason(c, {2, false}).value_or(""),
            "schedule: 4 high-precision steps (first 2, last 2) leave none of the 4 step(s) to "
            "run with attention math");
  c.schedule = {1, 0};
  c.scope = Scope::kForward;  // one forward: nothing left after the first
  EXPECT_NE(InvalidReason(c, {2, false}).value_or("").find("none of the 1 step(s)"),
            std::string::npos);
}

// A cache skips denoising steps: not in scope forward; not over PipeFusion or graphs (refused
// with the reason); TeaCache only for a model with a published polynomial; a program caches
// on its own.
// A serving trial: the load is checked with the trial's own shape and dp groups; a command's
// program serves nothing of ditbench's; requests run eagerly.
TEST(ValidityTest, AServingTrialIsCheckedWithItsOwnShapeAndReplicas) {
  TrialConfig c = PixArt(256, 1);
  c.serve = ServeLoad{};
  c.serve->rate_per_s = 2;
  c.serve->requests = 20;
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  TrialConfig replicas = c;
  replicas.dp = 2;
  EXPECT_FALSE(InvalidReason(replicas, {2, false}));
  TrialConfig huge = c;
  huge.resolution = 32768;
  EXPECT_TRUE(InvalidReason(huge, {2, false}));
  TrialConfig bursty = c;
  bursty.serve->arrivals = ArrivalKind::kGamma;
  bursty.serve->burstiness = 0;
  EXPECT_EQ(InvalidReason(bursty, {2, false}).value_or(""),
            "serve: 'burstiness' is 0; expected the gaps' CV^2, from 0.001 to 100");
  TrialConfig command = c;
  command.workload = Workload::kCommand;
  command.command = {"python3", "serve.py"};
  EXPECT_EQ(InvalidReason(command, {2, false}).value_or(""),
            "serve: ditbench's own worker serves requests; a command workload's program times "
            "its own");
  TrialConfig graph = c;
  graph.graph = GraphMode::kCudaGraph;
  EXPECT_EQ(Judge(graph, {2, true}).unsupported.value_or(""),
            "serve: poisson with graph: cuda_graph is not built: a serving trial runs its "
            "requests eagerly");
}

// A mix: every shape its requests ask for is judged as the trial that times it alone, and
// the first that cannot run names itself; a trace's shapes likewise, and a trace that cannot
// be read is refused with the reader's line.
TEST(ValidityTest, EveryShapeOfAServingMixIsCheckedForTheLayout) {
  TrialConfig c = PixArt(256, 2);
  c.serve = ServeLoad{};
  c.serve->rate_per_s = 2;
  c.serve->requests = 20;
  c.serve->mix = {kTrialsOwn, RequestShape{512, 512, -1, 0, 1}};
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  c.serve->mix.push_back(RequestShape{264, 256, -1, 0, 1});
  EXPECT_EQ(InvalidReason(c, {2, false}).value_or(""),
            "serve: request shape 2 (264x256, 20 steps): resolution 264x256: width 264 is not a "
            "multiple of 16 (VAE downsample 8 x patch 2)");
  // Ulysses 2 over 16 x 16 patches: a 16-pixel-high shape has one patch row.
  c.serve->mix.back() = RequestShape{256, 16, -1, 0, 1};
  EXPECT_NE(InvalidReason(c, {2, false}).value_or("").find("serve: request shape 2 (256x16"),
            std::string::npos);
  test::TempDir dir;
  std::ofstream(dir.path() / "t.csv") << "arrival_s,width,height,frames,steps\n"
                                         "0,256,256,0,4\n1,264,256,0,4\n";
  TrialConfig traced = PixArt(256, 1);
  traced.serve = ServeLoad{};
  traced.serve->arrivals = ArrivalKind::kTrace;
  traced.serve->trace = dir.path() / "t.csv";
  EXPECT_NE(InvalidReason(traced, {2, false}).value_or("").find("serve: request shape 1 (264x256"),
            std::string::npos);
  traced.serve->trace = dir.path() / "missing.csv";
  EXPECT_NE(InvalidReason(traced, {2, false}).value_or("").find("serve: "), std::string::npos);
}

// A serving trial's rank file grows with its requests, and ingest reads at most
// kMaxRankFileValues of it: a load that would pass that was served to the end and then lost.
// Refused before launch, naming the keys and the most requests that fit.
TEST(ValidityTest, AServingLoadWhoseRankFileWouldPassTheReadersCapIsRefused) {
  TrialConfig c = PixArt(256, 1);
  c.steps = 50;
  c.serve = ServeLoad{};
  c.serve->rate_per_s = 10;
  c.serve->requests = 16000;
  // Per request 8 values of its record and 5 for each of its 3 + 50 samples: 273.
  EXPECT_EQ(InvalidReason(c, {2, false}).value_or(""),
            "serve: 16000 requests of up to 50 steps would write about 4368000 JSON values to a "
            "rank file, more than the 3900000 its requests may take (ingest reads at most "
            "4000000); expected at most 14285 requests of 50 steps ('requests' with "
            "'warmup_requests', or fewer 'steps')");
  c.serve->requests = 14285;
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  c.serve->warmup_requests = 1;
  EXPECT_TRUE(InvalidReason(c, {2, false}));
  c.steps = 2;  // 33 values a request
  c.serve->warmup_requests = 0;
  c.serve->requests = 150000;
  EXPECT_NE(InvalidReason(c, {2, false}).value_or("").find("expected at most 118181 requests"),
            std::string::npos);
  // A duration at a rate: the requests it makes (about 10,000 of 20 steps: 123 values each;
  // with each step's 28 blocks profiled, 2923).
  c.steps = 20;
  c.serve->requests = 0;
  c.serve->duration_s = 1000;
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  c.profile_blocks = true;
  EXPECT_NE(InvalidReason(c, {2, false}).value_or("").find("of 28 profiled blocks"),
            std::string::npos);
}

TEST(ValidityTest, ACacheRunsWhereItsDecisionCanBeTaken) {
  TrialConfig c = PixArt(256, 1);
  c.cache = {StepCache::Kind::kFbCache, 0.1, 1};
  EXPECT_FALSE(InvalidReason(c, {2, false}));
  TrialConfig ulysses = c;
  ulysses.ulysses = 2;
  EXPECT_FALSE(InvalidReason(ulysses, {2, false}));
  TrialConfig forward = c;
  forward.scope = Scope::kForward;
  EXPECT_EQ(InvalidReason(forward, {2, false}).value_or(""),
            "cache: fbcache skips denoising steps; scope forward runs one forward");
  TrialConfig pipe = c;
  pipe.pipefusion = 2;
  EXPECT_NE(Judge(pipe, {2, false}).unsupported.value_or("").find("with pipefusion=2 is not built"),
            std::string::npos);
  TrialConfig graph = c;
  graph.graph = GraphMode::kCudaGraph;
  EXPECT_NE(Judge(graph, {2, true}).unsupported.value_or("").find("use graph: eager"),
            std::string::npos);
  // TeaCache needs the model's published polynomial: PixArt has none; Flux and Wan do.
  TrialConfig tea = c;
  tea.cache.kind = StepCache::Kind::kTeaCache;
  EXPECT_NE(Judge(tea, {2, false})
                .unsupported.value_or("")
                .find("none is published for pixart-alpha (TeaCache's are for"),
            std::string::npos)
      << Judge(tea, {2, false}).unsupported.value_or("");
  for (const char* model : {"flux-dev-tiny", "wan2.1-t2v-tiny", "hunyuanvideo-tiny"}) {
    TrialConfig published = tea;
    published.model = model;
    if (std::string(model).starts_with("wan") || std::string(model).starts_with("hunyuan"))
      published.frames = 5;
    const TrialVerdict verdict = Judge(published, {2, false});
    EXPECT_FALSE(verdict.invalid) << model << ": " << verdict.invalid.value_or("");
    EXPECT_FALSE(verdict.unsupported) << model << ": " << verdict.unsupported.value_or("");
  }
}

// On CPU a cuda_graph trial is skipped (unsupported, with its reason), never run eagerly in its
// place; a command's program decides its own kernels, so the field is an error there.
TEST(ValidityTest, CudaGraphIsSkippedOnCpuAndRefusedForACommand) {
  TrialConfig c = PixArt(256, 1);
  c.graph = GraphMode::kCudaGraph;
  const TrialVerdict cpu = Judge(c, {2, false});
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
  const TrialVerdict command = Judge(c, {2, true});
  ASSERT_TRUE(command.invalid);
  EXPECT_NE(command.invalid->find("applies to ditbench's own models"), std::string::npos);
}

TrialConfig Wan(int width, int height, int frames) {
  TrialConfig c;
  c.model = "wan2.1-t2v-14b";
  c.resolution = width;
  c.height = width == height ? 0 : height;
  c.frames = frames;
  return c;
}

std::string Invalid(const TrialConfig& c, Capacity capacity = {8, true}) {
  const TrialVerdict v = Judge(c, capacity);
  return v.invalid.value_or("");
}

// Video families: frames of the form 4k + 1, none on image models, sides multiples of VAE x
// patch, heads % ulysses, tokens % (ring x ulysses).
TEST(ValidityTest, VideoTrialsFollowTheirFamilysRules) {
  EXPECT_EQ(Invalid(Wan(1280, 720, 81)), "");
  EXPECT_EQ(Invalid(Wan(1280, 720, 80)),
            "frames=80 is not of the form 4k + 1 (wan2.1-t2v-14b's VAE encodes the first frame "
            "alone, then 4 frames per latent frame)");
  EXPECT_EQ(Invalid(Wan(1280, 720, 0)),
            "wan2.1-t2v-14b is a video model: set frames (4k + 1, such as 81)");
  TrialConfig image = PixArt(1024, 1);
  image.frames = 81;
  EXPECT_EQ(Invalid(image), "frames=81 applies to video models only; pixart-alpha makes images");
  EXPECT_EQ(Invalid(Wan(1280, 728, 81)),
            "resolution 1280x728: height 728 is not a multiple of 16 (VAE downsample 8 x patch 2)");
  // 40 heads: Ulysses 8 splits them, 16 does not.
  TrialConfig u8 = Wan(1280, 720, 81);
  u8.ulysses = 8;
  EXPECT_EQ(Invalid(u8), "");
  u8.ulysses = 16;
  EXPECT_EQ(Invalid(u8, {16, true}),
            "40 heads are not divisible by ulysses=16 (pad_heads: true pads them to 48, +20.0% "
            "attention work)");
  // 832x480 x 81 frames: 32,760 tokens; ring 16 does not split them (32760 / 16 = 2047.5).
  TrialConfig ring = Wan(832, 480, 81);
  ring.ring = 16;
  EXPECT_EQ(Invalid(ring, {16, true}),
            "32760 video tokens are not divisible by ring x ulysses = 16");
  // A clip splits by tokens, not patch rows: 30 patch rows do not split over 4, 32,760 tokens do.
  ring.ring = 4;
  EXPECT_EQ(Invalid(ring), "");
  // Wan 2.2 TI2V-5B's 16x VAE needs multiples of 32.
  TrialConfig ti2v = Wan(1280, 720, 121);
  ti2v.model = "wan2.2-ti2v-5b";
  EXPECT_EQ(
      Invalid(ti2v),
      "resolution 1280x720: height 720 is not a multiple of 32 (VAE downsample 16 x patch 2)");
}

// PipeFusion over a clip is not implemented; both video families' modules and their VAE
// decoders (Wan 2.1's, Wan 2.2's residual one, HunyuanVideo's) run.
TEST(ValidityTest, WhatThisBuildCannotRunIsUnsupportedNotInvalid) {
  TrialConfig wan = Wan(832, 480, 81);
  wan.scope = Scope::kDenoise;
  EXPECT_FALSE(Judge(wan, {8, true}).invalid);
  EXPECT_FALSE(Judge(wan, {8, true}).unsupported);  // Wan's module runs the denoising loop
  wan.scope = Scope::kPipeline;
  EXPECT_FALSE(Judge(wan, {8, true}).invalid);
  EXPECT_FALSE(Judge(wan, {8, true}).unsupported);  // AutoencoderKLWan decodes the clip
  TrialConfig wan22 = Wan(1280, 704, 121);
  wan22.model = "wan2.2-ti2v-5b";
  wan22.scope = Scope::kPipeline;
  EXPECT_FALSE(Judge(wan22, {8, true}).invalid);
  EXPECT_FALSE(Judge(wan22, {8, true}).unsupported);  // and Wan 2.2's residual one
  wan22.scope = Scope::kDenoise;
  EXPECT_FALSE(Judge(wan22, {8, true}).unsupported);
  TrialConfig hunyuan = Wan(1280, 720, 129);
  hunyuan.model = "hunyuanvideo";
  hunyuan.scope = Scope::kDenoise;
  hunyuan.ulysses = 8;
  EXPECT_FALSE(Judge(hunyuan, {8, true}).invalid);
  EXPECT_FALSE(Judge(hunyuan, {8, true}).unsupported);  // HunyuanVideo's module runs it
  hunyuan.cfg = 2;  // guidance is distilled: no negative prompt to split off
  EXPECT_NE(Invalid(hunyuan, {16, true}).find("cfg=2 needs a model that batches a negative prompt"),
            std::string::npos);
  // Wan 2.2 A14B's two experts run; a step cache across their switch does not.
  TrialConfig a14b = Wan(1280, 720, 81);
  a14b.model = "wan2.2-t2v-a14b";
  a14b.ulysses = 8;
  EXPECT_FALSE(Judge(a14b, {8, true}).invalid);
  EXPECT_FALSE(Judge(a14b, {8, true}).unsupported);
  a14b.cache = {StepCache::Kind::kFbCache, 0.1, 1};
  EXPECT_EQ(Judge(a14b, {8, true}).unsupported,
            "cache: fbcache with wan2.2-t2v-a14b's 2 experts is not built: a residual cached from "
            "one expert would be reused by the other");
}

// Non-square images run on every image family, under the rules a square one follows, side by
// side: SD3's cropped position table bounds the longer side, sequence parallelism and PipeFusion
// split patch rows.
TEST(ValidityTest, NonSquareImagesFollowTheImageRulesPerSide) {
  for (const char* model : {"pixart-alpha", "pixart-sigma", "sd3-medium", "flux-dev"}) {
    TrialConfig wide = PixArt(1280, 1);
    wide.model = model;
    wide.height = 768;
    wide.ulysses = 2;
    EXPECT_EQ(Invalid(wide), "") << model;
    EXPECT_FALSE(Judge(wide, {8, true}).unsupported) << model;
  }
  TrialConfig sd3 = PixArt(3200, 1);
  sd3.model = "sd3-medium";  // 192 patch rows of positions: 3072 px
  sd3.height = 1024;
  EXPECT_EQ(Invalid(sd3),
            "sd3-medium has positions for 192 patch rows (3072 px); 3200x1024 px "
            "needs 200");
  TrialConfig tall = PixArt(1024, 1);
  tall.height = 1040;  // 65 patch rows of 16 px
  tall.ring = 2;
  EXPECT_EQ(Invalid(tall),
            "latent height of 65 patch rows is not divisible by the "
            "sequence-parallel degree ring x ulysses = 2");
  TrialConfig piped = PixArt(1024, 1);
  piped.height = 1040;
  piped.pipefusion = 2;
  EXPECT_EQ(Invalid(piped), "65 patch rows do not split into pipefusion_patches=2");
}

}  // namespace
}  // namespace ditbench::validity_test

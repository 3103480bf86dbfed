// The analytic FLOP formula (model_zoo/shapes/model_config.cc) against an independent count: LibTorch's
// profiler tallies the FLOPs of every matrix product and convolution a real forward of the
// model zoo's PixArt, Flux, SD3, SD3.5 (dual attention), Wan and HunyuanVideo execute (oneDNN's fused linear
// counted from its recorded shapes).
#include <cctype>

#include <gtest/gtest.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench::flops_count_test {
namespace {

// oneDNN's fused linear (model_zoo/layers/fused_ops.h), which the profiler records without a
// FLOP count: 2 M N K from its recorded input shapes, x [..., K] and weight [N, K].
double FusedLinearFlops(c10::ArrayRef<std::vector<int64_t>> shapes) {
  if (shapes.size() < 2 || shapes[0].empty() || shapes[1].size() != 2) return 0;
  double rows = 1;
  for (size_t i = 0; i + 1 < shapes[0].size(); ++i) rows *= double(shapes[0][i]);
  return 2.0 * rows * double(shapes[1][0]) * double(shapes[1][1]);
}

double ProfiledMatmulFlops(const std::function<void()>& run) {
  using namespace torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true,
                        /*profile_memory=*/false, /*with_stack=*/false, /*with_flops=*/true);
  const std::set<ActivityType> activities = {ActivityType::CPU};
  prepareProfiler(config, activities);
  enableProfiler(config, activities);
  run();
  auto result = disableProfiler();
  double flops = 0;
  for (const auto& event : result->events()) {
    const std::string name = event.name();
    // Products and convolutions only: the formula leaves out element-wise work.
    if (name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" ||
        name == "aten::baddbmm" || name == "aten::conv2d")
      flops += static_cast<double>(event.flops());
    else if (name == "mkldnn::_linear_pointwise")
      flops += FusedLinearFlops(event.shapes());
  }
  return flops;
}

class FlopsCountTest : public ::testing::TestWithParam<const char*> {};

// The profiled FLOPs of one forward of `config` over `samples` samples of `shape` (an image or
// a clip), on the math attention path, so that attention runs as batched products the
// profiler counts.
double CountedForwardFlops(const ModelConfig& config, const ImageShape& shape, int samples) {
  auto& ctx = at::globalContext();
  const bool flash = ctx.userEnabledFlashSDP(), efficient = ctx.userEnabledMemEfficientSDP();
  ctx.setSDPUseFlash(false);
  ctx.setSDPUseMemEfficient(false);

  c10::InferenceMode inference;
  torch::manual_seed(0);
  auto model = MakeDitModel(config);
  model->module().eval();
  const int64_t rows = shape.height / config.vae_downsample;
  const int64_t cols = shape.width / config.vae_downsample;
  auto x = config.video() ? torch::randn({samples, config.in_channels,
                                          LatentFrames(config, shape.frames), rows, cols})
                          : torch::randn({samples, config.in_channels, rows, cols});
  auto t = torch::full({samples}, 500.0);
  Conditioning text = model->MakeConditioning(samples, shape);
  if (model->guidance() == Guidance::kDistilled) text.guidance = torch::full({samples}, 3.5);
  ParallelContext single;
  const double counted = ProfiledMatmulFlops([&] { model->Forward(x, t, text, single); });

  ctx.setSDPUseFlash(flash);
  ctx.setSDPUseMemEfficient(efficient);
  return counted;
}

TEST_P(FlopsCountTest, AnalyticForwardFlopsMatchAProfiledForward) {
  const ModelConfig& config = *FindModelPreset(GetParam());
  const int resolution = 256, samples = 2;
  const double counted = CountedForwardFlops(config, {resolution, resolution, 0}, samples);
  const double analytic = ForwardFlops(config, resolution, samples);
  ASSERT_GT(counted, 0) << "the profiler counted nothing";
  RecordProperty("counted_over_analytic", std::to_string(counted / analytic));
  EXPECT_NEAR(counted / analytic, 1.0, 0.001) << "counted " << counted << " analytic " << analytic;
  // A non-square image: 384 x 256 pixels.
  const ImageShape wide{384, 256, 0};
  const double counted_wide = CountedForwardFlops(config, wide, samples);
  const double analytic_wide = ForwardFlops(config, wide, samples);
  EXPECT_NEAR(counted_wide / analytic_wide, 1.0, 0.001)
      << "counted " << counted_wide << " analytic " << analytic_wide;
}

INSTANTIATE_TEST_SUITE_P(Models, FlopsCountTest,
                         ::testing::Values("pixart-alpha-tiny", "flux-dev-tiny",
                                           "sd3-medium-tiny", "sd3.5-medium-tiny"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// The video families' clip: 9 frames (3 latent frames) of 160 x 96 pixels, 180 tokens a sample
// (HunyuanVideo: and its token refiner over the prompt).
class FlopsCountVideoTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FlopsCountVideoTest, AnalyticForwardFlopsMatchAProfiledForward) {
  const ModelConfig& config = *FindModelPreset(GetParam());
  const ImageShape clip{160, 96, 9};
  const double counted = CountedForwardFlops(config, clip, 2);
  const double analytic = ForwardFlops(config, clip, 2);
  ASSERT_GT(counted, 0) << "the profiler counted nothing";
  RecordProperty("counted_over_analytic", std::to_string(counted / analytic));
  EXPECT_NEAR(counted / analytic, 1.0, 0.001) << "counted " << counted << " analytic " << analytic;
}

INSTANTIATE_TEST_SUITE_P(Models, FlopsCountVideoTest,
                         ::testing::Values("wan2.1-t2v-tiny", "hunyuanvideo-tiny"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace ditbench::flops_count_test

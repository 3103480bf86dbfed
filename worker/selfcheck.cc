#include "worker/selfcheck.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "metrics/measurement.h"
#include "model_zoo/families/dit_model.h"
#include "model_zoo/shapes/model_config.h"
#include "stats/stats.h"
#include "worker/dit_trial.h"
#include "worker/reference_timer.h"
#include "worker/step_graphs.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

constexpr const char* kTinyModel = "pixart-alpha-tiny";
constexpr int kTinyImage = 256;  // pixels: 256 tokens of the tiny model
constexpr int kTinySteps = 4;    // denoising steps of the CUDA-graph check
constexpr std::uint64_t kTinySeed = 42;

// The tiny model on `device` in `dtype`, with its seeded inputs: the same weights and inputs at
// every precision (up to rounding), as in a trial (worker/dit_trial.cc). Guidance as the
// family's pipeline applies it: a CFG batch of a negative and a prompt row.
class TinyDit {
 public:
  TinyDit(torch::Device device, torch::ScalarType dtype) : device_(device) {
    std::string error;
    auto config = ResolveModel(kTinyModel, {}, &error);
    if (!config) throw std::invalid_argument(error);
    torch::manual_seed(kTinySeed);
    model_ = MakeDitModel(*config, dtype);
    model_->module().to(device, dtype);
    model_->module().eval();
    const ImageShape image{kTinyImage, kTinyImage, 0};
    sampler_ = model_->MakeSamplerFor(kTinySteps, image);
    const auto options = torch::TensorOptions().dtype(dtype).device(device);
    const int64_t latent = kTinyImage / config->vae_downsample;
    torch::manual_seed(kTinySeed + 1);
    noise_ = torch::randn({1, config->in_channels, latent, latent}).to(options);
    conditioning_ = model_->MakeConditioning(2, image).To(options);
  }

  // One transformer forward of the CFG batch at the first step's time.
  torch::Tensor Forward() {
    return model_->Forward(Batch(noise_), Time(0), conditioning_, single_);
  }

  // Denoising step i from x: the guided prediction, then the sampler's update.
  torch::Tensor Step(int i, const torch::Tensor& x) {
    auto out = model_->Prediction(model_->Forward(Batch(x), Time(i), conditioning_, single_));
    auto uncond = out.narrow(0, 0, 1), cond = out.narrow(0, 1, 1);
    return sampler_->Step(i, x, uncond + model_->guidance_scale() * (cond - uncond));
  }

  // Every step from the noise, eagerly.
  torch::Tensor Denoise() {
    auto x = noise_;
    for (int i = 0; i < kTinySteps; ++i) x = Step(i, x);
    return x;
  }

  const torch::Tensor& noise() const { return noise_; }

 private:
  static torch::Tensor Batch(const torch::Tensor& x) { return torch::cat({x, x}, 0); }
  torch::Tensor Time(int step) const {
    return torch::full({2}, sampler_->ModelTime(step),
                       torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  }

  torch::Device device_;
  ParallelContext single_;
  std::unique_ptr<DitModel> model_;
  std::unique_ptr<Sampler> sampler_;
  torch::Tensor noise_;
  Conditioning conditioning_;
};

double Median(std::vector<double> ms) {
  if (ms.empty()) throw std::runtime_error("no timed iterations");
  return Summarize(std::move(ms)).median;
}

// How far apart two halves' medians are, in percent of their mean.
double HalvesApartPct(const std::vector<double>& first, const std::vector<double>& second) {
  const double a = Median(first), b = Median(second);
  return a + b > 0 ? std::abs(a - b) / ((a + b) / 2) * 100 : 0;
}

struct BothWays {
  double ours_ms = 0, reference_ms = 0;
  double aa_pct = 0;  // SelfcheckTiming's A/A noise: the larger of the two methods' half gaps
};

// Medians of `work` by ditbench's loop and by the reference, in the order A B B A so that a
// drift of the machine's speed weighs on both alike.
BothWays TimedBothWays(torch::Device device, int warmup, int iterations,
                       const std::function<void()>& work) {
  const int half = std::max(1, iterations / 2);
  SingleRankGroup one;
  const std::vector<double> ours_1 = DitbenchTimesMs(device, one, warmup, half, work);
  const std::vector<double> reference_1 = ReferenceTimesMs(device, warmup, half, work);
  const std::vector<double> reference_2 = ReferenceTimesMs(device, 0, half, work);
  const std::vector<double> ours_2 = DitbenchTimesMs(device, one, 0, half, work);
  std::vector<double> ours = ours_1, reference = reference_1;
  ours.insert(ours.end(), ours_2.begin(), ours_2.end());
  reference.insert(reference.end(), reference_2.begin(), reference_2.end());
  return {Median(ours), Median(reference),
          std::max(HalvesApartPct(ours_1, ours_2), HalvesApartPct(reference_1, reference_2))};
}

double RelativeL2(const torch::Tensor& a, const torch::Tensor& b) {
  auto x = a.to(torch::kCPU, torch::kFloat64), y = b.to(torch::kCPU, torch::kFloat64);
  return (x - y).norm().item<double>() / y.norm().item<double>();
}

// Runs one section; what it throws goes into `errors` under its name.
void Section(const char* name, SelfcheckMeasurements& m, const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& e) {
    m.errors.push_back(fmt::format("{}: {}", name, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    m.errors.push_back(fmt::format("{}: {}", name, e.what()));
  }
}

}  // namespace

std::vector<double> DitbenchTimesMs(torch::Device device, RankGroup& group, int warmup,
                                    int iterations, const std::function<void()>& work) {
  // The clock RunDitTrial picks: device events on an accelerator, the host clock on CPU.
  auto clock = device.is_cpu() ? MakeHostClock(device) : MakeDeviceClock(device);
  MeasureOptions options;
  options.warmup = warmup;
  options.repeats = Repeats{iterations, iterations, 0.0, 0.0};
  return Measure(options, group, *clock, [&](Stages&) { work(); }).slowest_ms;
}

SelfcheckTiming MeasureTimingFidelity(torch::Device device, int warmup, int iterations) {
  SelfcheckTiming timing;
  // fp32 512^3 on CPU (a few ms); bf16 4096^3 on a GPU (a fraction of a millisecond on an H100),
  // into a kept output, so that the allocator is not timed.
  const int64_t n = device.is_cuda() ? 4096 : 512;
  const auto dtype = device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  torch::manual_seed(kTinySeed);
  auto options = torch::TensorOptions().dtype(dtype).device(device);
  auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  auto c = torch::empty({n, n}, options);
  const BothWays gemm = TimedBothWays(device, warmup, iterations, [&] { at::mm_out(c, a, b); });
  timing.gemm_ms = gemm.ours_ms;
  timing.gemm_reference_ms = gemm.reference_ms;
  timing.gemm_aa_pct = gemm.aa_pct;
  TinyDit tiny(device, torch::kFloat32);
  torch::Tensor out;
  const BothWays forward = TimedBothWays(device, warmup, iterations, [&] { out = tiny.Forward(); });
  timing.forward_ms = forward.ours_ms;
  timing.forward_reference_ms = forward.reference_ms;
  timing.forward_aa_pct = forward.aa_pct;
  return timing;
}

SelfcheckGraph MeasureGraphReplay(torch::Device device, int warmup, int iterations) {
  SelfcheckGraph graph;
  TinyDit tiny(device, torch::kFloat32);
  torch::Tensor eager;
  for (int i = 0; i < std::max(1, warmup); ++i) eager = tiny.Denoise();  // handles, blocks
  StepGraphs graphs;
  graphs.Capture(tiny.noise(), kTinySteps,
                 [&](int i, const torch::Tensor& x) { return tiny.Step(i, x); });
  auto replayed = graphs.Replay(tiny.noise(), nullptr).clone();
  graph.max_abs_diff =
      (replayed.to(torch::kFloat64) - eager.to(torch::kFloat64)).abs().max().item<double>();
  SingleRankGroup one;
  graph.eager_ms = Median(DitbenchTimesMs(device, one, 1, iterations, [&] { tiny.Denoise(); }));
  graph.graph_ms = Median(
      DitbenchTimesMs(device, one, 1, iterations, [&] { graphs.Replay(tiny.noise(), nullptr); }));
  return graph;
}

SelfcheckNumerics MeasureBf16Numerics(torch::Device device) {
  TinyDit fp32(device, torch::kFloat32);
  auto reference = fp32.Forward();
  TinyDit bf16(device, torch::kBFloat16);
  return {RelativeL2(bf16.Forward(), reference), kTinyPixArtBf16Bound};
}

SelfcheckMeasurements MeasureSelfcheck(torch::Device device, const RankSubgroup& world,
                                       const SelfcheckOptions& options) {
  c10::InferenceMode inference;
  ApplyPrecision(Precision::kFp32);  // fp32 is fp32: TF32 off, as a trial at fp32 runs
  const bool cuda = device.is_cuda();
  const int warmup = options.warmup > 0 ? options.warmup : (cuda ? 5 : 2);
  const int iterations = options.iterations > 0 ? options.iterations : (cuda ? 50 : 15);
  const int few = std::max(3, iterations / 3);  // throughput and communication
  SelfcheckMeasurements m;
  m.device = cuda ? fmt::format("cuda:{}", device.index()) : "cpu";
  m.device_name = DeviceName(device);
  m.torch = TORCH_VERSION;
  m.threads = at::get_num_threads();
  if (world.rank == 0) {
    Section("timing", m, [&] { m.timing = MeasureTimingFidelity(device, warmup, iterations); });
    if (cuda)
      Section("cuda_graph", m,
              [&] { m.cuda_graph = MeasureGraphReplay(device, warmup, iterations); });
    else
      m.skipped["cuda_graph"] = "no CUDA device";
    Section("numerics", m, [&] { m.numerics = MeasureBf16Numerics(device); });
    Section("throughput", m,
            [&] { m.throughput = MeasureThroughput(device, warmup, few, m.skipped); });
  }
  if (world.size < 2) {
    m.skipped["comm"] = "one rank";
    return m;
  }
  ProcessRankGroup(world, device).Barrier();  // the others waited for rank 0's device figures
  Section("comm", m, [&] { m.comm = MeasureComm(device, world, warmup, few); });
  return m;
}

}  // namespace ditbench

#include "worker/selfcheck.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

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
// The calibration's sizes (144, 576 and 1600 tokens): below, between and above the sizes of
// the quick start and the tests, none of them equal to one.
constexpr int kCalibrationImages[] = {192, 384, 640};

// The tiny model on `device` in `dtype`, with its seeded inputs: the same weights and inputs at
// every precision (up to rounding), as in a trial (worker/dit_trial.cc). Guidance as the
// family's pipeline applies it: a CFG batch of a negative and a prompt row.
class TinyDit {
 public:
  // `parallel`: the ranks' context the forward runs in (it must outlive this); null: one rank.
  TinyDit(torch::Device device, torch::ScalarType dtype, int pixels = kTinyImage,
          const ParallelContext* parallel = nullptr)
      : device_(device), parallel_(parallel != nullptr ? parallel : &single_) {
    std::string error;
    auto config = ResolveModel(kTinyModel, {}, &error);
    if (!config) throw std::invalid_argument(error);
    torch::manual_seed(kTinySeed);
    model_ = MakeDitModel(*config, dtype);
    model_->module().to(device, dtype);
    model_->module().eval();
    const ImageShape image{pixels, pixels, 0};
    sampler_ = model_->MakeSamplerFor(kTinySteps, image);
    const auto options = torch::TensorOptions().dtype(dtype).device(device);
    const int64_t latent = pixels / config->vae_downsample;
    torch::manual_seed(kTinySeed + 1);
    noise_ = torch::randn({1, config->in_channels, latent, latent}).to(options);
    conditioning_ = model_->MakeConditioning(2, image).To(options);
  }

  // One transformer forward of the CFG batch at the first step's time.
  torch::Tensor Forward() {
    return model_->Forward(Batch(noise_), Time(0), conditioning_, *parallel_);
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
  const ParallelContext* parallel_;
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

std::vector<SelfcheckForwardRate> MeasureForwardRates(torch::Device device, RankGroup& group,
                                                      int threads, int warmup, int rounds,
                                                      const ParallelContext* parallel) {
  std::string error;
  const auto config = ResolveModel(kTinyModel, {}, &error);
  if (!config) throw std::invalid_argument(error);
  const int before = at::get_num_threads();
  at::set_num_threads(std::max(1, threads));
  struct Timed {
    SelfcheckForwardRate rate;
    Precision precision;
    std::unique_ptr<TinyDit> tiny;
    std::vector<double> ms;
  };
  std::vector<Timed> timed;
  for (const Precision precision : {Precision::kFp32, Precision::kBf16})
    for (const int pixels : kCalibrationImages) {
      Timed t;
      t.precision = precision;
      t.rate.precision = std::string(PrecisionName(precision));
      t.rate.image = pixels;
      t.rate.threads = std::max(1, threads);
      t.rate.ranks = group.size();
      t.rate.ulysses = parallel != nullptr ? parallel->degrees().ulysses : 1;
      const ImageShape image{pixels, pixels, 0};
      t.rate.rank_elements = 2.0 * double(ImageTokens(*config, image)) * config->hidden;
      t.rate.gflop = ForwardFlops(*config, image, 2) / 1e9;  // the CFG batch of two rows
      t.tiny = std::make_unique<TinyDit>(
          device, precision == Precision::kFp32 ? torch::kFloat32 : torch::kBFloat16, pixels,
          parallel);
      timed.push_back(std::move(t));
    }
  // Round by round, every size and precision once per round: a drift of the machine's speed
  // weighs on all of them alike rather than on whichever ran last.
  for (int round = -std::max(1, warmup); round < rounds; ++round)
    for (Timed& t : timed) {
      ApplyPrecision(t.precision);
      const std::vector<double> ms =
          DitbenchTimesMs(device, group, 0, 1, [&] { t.tiny->Forward(); });
      if (round >= 0) t.ms.push_back(ms.front());
    }
  std::vector<SelfcheckForwardRate> rates;
  for (Timed& t : timed) {
    t.rate.ms = Median(t.ms);
    rates.push_back(t.rate);
  }
  at::set_num_threads(before);
  ApplyPrecision(Precision::kFp32);
  return rates;
}

SelfcheckCalibration MeasureCalibration(torch::Device device, int warmup, int iterations,
                                        int world_size) {
  SelfcheckCalibration calibration;
  calibration.model = kTinyModel;
  const auto began = std::chrono::steady_clock::now();
  { TinyDit built(device, torch::kFloat32); }
  calibration.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  if (!device.is_cpu()) return calibration;  // on a GPU the tiny forward measures launches only
  // Alone (the other ranks wait at a barrier): with every core, as a 1-rank trial runs, and
  // on one rank also with one thread. Ranks that share the cores measure together afterwards
  // (MeasureForwardRates over the world, in MeasureSelfcheck).
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> alone{cores};
  if (world_size == 1 && cores > 1) alone.push_back(1);
  SingleRankGroup one;
  for (const int threads : alone)
    for (const SelfcheckForwardRate& rate :
         MeasureForwardRates(device, one, threads, warmup, iterations))
      calibration.forward.push_back(rate);
  return calibration;
}

SelfcheckMeasurements MeasureSelfcheck(torch::Device device, const RankSubgroup& world,
                                       const SelfcheckOptions& options,
                                       const c10::intrusive_ptr<c10d::Store>& store) {
  const auto began = std::chrono::steady_clock::now();
  c10::InferenceMode inference;
  ApplyPrecision(Precision::kFp32);  // fp32 is fp32: TF32 off, as a trial at fp32 runs
  const bool cuda = device.is_cuda();
  const int warmup = options.warmup > 0 ? options.warmup : (cuda ? 5 : 2);
  const int iterations = options.iterations > 0 ? options.iterations : (cuda ? 50 : 15);
  const int few = std::max(3, iterations / 3);  // throughput and communication
  const int calibration_rounds = std::max(3, (iterations * 2 + 2) / 3);
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
    Section("calibration", m, [&] {
      m.calibration = MeasureCalibration(device, warmup, calibration_rounds, world.size);
    });
  }
  if (world.size < 2) {
    m.skipped["comm"] = "one rank";
  } else {
    ProcessRankGroup group(world, device);
    group.Barrier();  // the others waited for rank 0's device figures
    Section("comm", m, [&] { m.comm = MeasureComm(device, world, warmup, few); });
    if (!cuda) {
      // Every rank at its share of the cores at once, as the ranks of a trial compute: each
      // iteration's time is the slowest rank's. A failure here is every rank's (collectives).
      Section("calibration", m, [&] {
        auto together =
            MeasureForwardRates(device, group, at::get_num_threads(), warmup, calibration_rounds);
        // The same forward split over the ranks by Ulysses (when the tiny model's heads divide
        // among them): its time beyond the compute above is what a collective costs in place,
        // between computing ranks (plan/calibration.h).
        std::string error;
        const auto tiny = ResolveModel(kTinyModel, {}, &error);
        if (store && tiny && tiny->heads % world.size == 0) {
          ParallelDegrees degrees;
          degrees.ulysses = world.size;
          ParallelContext ulysses(degrees, world.rank, store,
                                  [](const auto& s, int rank, int size) {
                                    return CreateBackend(s, rank, size, /*cuda=*/false);
                                  });
          auto split = MeasureForwardRates(device, group, at::get_num_threads(), warmup,
                                           calibration_rounds, &ulysses);
          together.insert(together.end(), split.begin(), split.end());
        }
        if (m.calibration)
          m.calibration->forward.insert(m.calibration->forward.end(), together.begin(),
                                        together.end());
      });
    }
  }
  if (m.calibration)
    m.calibration->measure_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return m;
}

}  // namespace ditbench

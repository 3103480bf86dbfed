#include "experiments/worker/dit_trial.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "experiments/measurement.h"
#include "experiments/worker/clock_monitor.h"
#include "experiments/worker/cuda_info.h"
#include "experiments/worker/torch_runtime.h"
#include "model_zoo/model_config.h"
#include "model_zoo/pixart.h"
#include "model_zoo/sampler.h"

namespace ditbench {
namespace {

constexpr double kGuidanceScale = 4.5;  // PixArt's default

RankSubgroup MakeSubgroup(const std::string& name, int rank, int size,
                          const c10::intrusive_ptr<c10d::Store>& store,
                          const BackendFactory& create) {
  RankSubgroup group{nullptr, rank, size};
  if (size > 1) group.backend = create(c10::make_intrusive<c10d::PrefixStore>(name, store), rank, size);
  return group;
}

ModelConfig ResolvedModel(const TrialConfig& config) {
  std::string error;
  auto model = ResolveModel(config.model, config.model_overrides, &error);
  if (!model) throw std::invalid_argument(error);
  return *model;
}

// Everything one rank needs to run iterations: model, inputs and sampler.
class DitRank {
 public:
  DitRank(const TrialConfig& config, const TrialGroups& groups, torch::Device device)
      : config_(config), groups_(groups), device_(device),
        model_config_(ResolvedModel(config)), sampler_(config.steps) {
    dtype_ = ApplyPrecision(config.precision);
    // LibTorch's default generator is process-wide: ranks that share a process (threads in
    // tests) must not interleave their draws, or their weights would differ.
    static std::mutex generator_mutex;
    std::lock_guard<std::mutex> lock(generator_mutex);
    // Same seed on every rank: identical weights everywhere, as after loading a checkpoint.
    torch::manual_seed(static_cast<uint64_t>(config.seed));
    model_ = PixArtTransformer(model_config_);
    model_->to(device, dtype_);
    model_->eval();

    // Inputs: seeded latent noise per dp replica; prompt embeddings are seeded random tensors of
    // the model's real shapes (the text encoder is outside every timed scope).
    auto gen_seed = static_cast<uint64_t>(config.seed) * 1000003ULL + groups.dp_index + 1;
    torch::manual_seed(gen_seed);
    const int latent = LatentSize(model_config_, config.resolution);
    auto opts = torch::TensorOptions().dtype(dtype_).device(device);
    noise_ = torch::randn({config.batch, model_config_.in_channels, latent, latent}).to(opts);
    // Conditional and negative prompt, [2B, T, text_dim]: rows [0, B) negative, [B, 2B) prompt.
    auto text = torch::randn({2 * config.batch, model_config_.text_tokens, model_config_.text_dim});
    text_ = text.to(opts);
    if (groups.cfg.size == 2) text_ = text_.narrow(0, groups.cfg.rank * config.batch, config.batch);
  }

  // Guided noise prediction for latent x at sampler step i.
  torch::Tensor PredictNoise(const torch::Tensor& x, int step,
                             const PixArtTransformerImpl::BlockHook& on_block) {
    const int64_t b = config_.batch;
    const bool split_cfg = groups_.cfg.size == 2;
    auto input = split_cfg ? x : torch::cat({x, x}, 0);
    auto t = torch::full({input.size(0)}, sampler_.timestep(step),
                         torch::TensorOptions().dtype(torch::kFloat32).device(device_));
    auto out = model_->forward(input, t, text_, groups_.ulysses, on_block);
    auto eps = out.narrow(1, 0, model_config_.in_channels);  // learned sigma dropped
    if (split_cfg) eps = AllGather(eps, 0, groups_.cfg);
    auto uncond = eps.narrow(0, 0, b), cond = eps.narrow(0, b, b);
    return uncond + kGuidanceScale * (cond - uncond);
  }

  // One iteration of the trial's scope: every denoising step is a stage, and with
  // profile_blocks every transformer block inside it too. `stages` may be null (untimed).
  torch::Tensor Iterate(Stages* stages) {
    PixArtTransformerImpl::BlockHook on_block;
    if (stages && config_.profile_blocks)
      on_block = [stages](int block, bool begin) {
        if (begin) stages->Begin(fmt::format("block:{}", block));
        else stages->End();
      };
    auto x = noise_;
    const int steps = config_.scope == Scope::kForward ? 1 : config_.steps;
    for (int i = 0; i < steps; ++i) {
      if (stages) stages->Begin(fmt::format("step:{}", i));
      auto eps = PredictNoise(x, i, on_block);
      x = config_.scope == Scope::kForward ? eps : sampler_.Step(i, x, eps);
      if (stages) stages->End();
    }
    return x;
  }

 private:
  TrialConfig config_;
  TrialGroups groups_;
  torch::Device device_;
  ModelConfig model_config_;
  DpmSolverFirstOrder sampler_;
  torch::ScalarType dtype_ = torch::kFloat32;
  PixArtTransformer model_{nullptr};
  torch::Tensor noise_, text_;
};

// Test hook: DITBENCH_FAULT_SLOW_RANK="<rank>:<ms>" makes that rank sleep `ms` inside every
// timed region, so tests can check that a slow rank shows up as skew and sets the latency.
double InjectedDelayMs(int rank) {
  const char* spec = std::getenv("DITBENCH_FAULT_SLOW_RANK");
  if (!spec) return 0;
  int slow_rank = -1;
  double ms = 0;
  if (std::sscanf(spec, "%d:%lf", &slow_rank, &ms) != 2 || slow_rank != rank || ms < 0) return 0;
  return ms;
}

}  // namespace

TrialGroups BuildTrialGroups(const TrialConfig& c, int rank,
                             const c10::intrusive_ptr<c10d::Store>& store,
                             const BackendFactory& create) {
  TrialGroups g;
  const int u = c.ulysses, cfg = c.cfg;
  const int u_index = rank % u;
  const int cfg_index = (rank / u) % cfg;
  g.dp_index = rank / (u * cfg);
  g.world = MakeSubgroup("world/", rank, c.world_size(), store, create);
  g.ulysses = MakeSubgroup(fmt::format("ulysses/dp{}-cfg{}/", g.dp_index, cfg_index), u_index, u,
                           store, create);
  g.cfg = MakeSubgroup(fmt::format("cfg/dp{}-u{}/", g.dp_index, u_index), cfg_index, cfg, store,
                       create);
  return g;
}

torch::ScalarType ApplyPrecision(Precision precision) {
  auto& ctx = at::globalContext();
  const bool tf32 = precision == Precision::kTf32;
  ctx.setAllowTF32CuBLAS(tf32);
  ctx.setAllowTF32CuDNN(tf32);
  ctx.setFloat32MatmulPrecision(tf32 ? "high" : "highest");
  switch (precision) {
    case Precision::kBf16: return torch::kBFloat16;
    case Precision::kFp16: return torch::kFloat16;
    default: return torch::kFloat32;
  }
}

void RunDitTrial(const TrialConfig& config, const TrialGroups& groups, torch::Device device,
                 RankResult& result) {
  c10::InferenceMode inference;
  ResetMemoryPeak(device);
  DitRank dit(config, groups, device);
  ProcessRankGroup world(groups.world, device);
  auto clock = device.is_cpu() ? MakeHostClock(device) : MakeDeviceClock(device);

  MeasureOptions options;
  options.warmup = config.warmup;
  options.repeats = config.repeats;
  std::unique_ptr<ClockMonitor> monitor;
  if (device.is_cuda()) {
    monitor = std::make_unique<ClockMonitor>(CudaPciBusId(device.index()));
    monitor->Start();
  }
  const double delay_ms = InjectedDelayMs(groups.world.rank);
  Measurement m = Measure(options, world, *clock, [&](Stages& stages) {
    dit.Iterate(&stages);
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
  });
  if (monitor) result.clocks = monitor->Stop().ToJson();
  result.samples = std::move(m.samples);
  result.stop_reason = m.stop_reason;
  MemoryPeak peak = ReadMemoryPeak(device);
  result.peak_mem_mb = peak.allocated_mb;
  result.peak_reserved_mb = peak.reserved_mb;
}

torch::Tensor DenoiseOnce(const TrialConfig& config, const TrialGroups& groups,
                          torch::Device device) {
  c10::InferenceMode inference;
  DitRank dit(config, groups, device);
  return dit.Iterate(nullptr).to(torch::kFloat32).cpu();
}

}  // namespace ditbench

#include "worker/dit_trial.h"

#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <ATen/Context.h>
#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "contract/npy.h"
#include "machine/energy_counter.h"
#include "metrics/measurement.h"
#include "model_zoo/families/dit_model.h"
#include "model_zoo/families/family_models.h"
#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/families/step_cache.h"
#include "model_zoo/layers/fp8_linear.h"
#include "model_zoo/parallel/pipefusion.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/model_config.h"
#include "model_zoo/shapes/teacache_polynomials.h"
#include "model_zoo/weights/diffusers_weights.h"
#include "worker/clock_monitor.h"
#include "worker/cuda_info.h"
#include "worker/profiler_pass.h"
#include "worker/serve_queue.h"
#include "worker/step_graphs.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

// Synchronous diffusion steps before PipeFusion starts pipelining patches.
int PipeFusionWarmupSteps(const TrialConfig& config) { return config.pipefusion_warmup_steps; }

// A weights folder named by the trial, read once: its config and its tensors (mapped).
struct WeightsFolder {
  DiffusersModel config;
  std::string file;  // its config.json, for errors
};

WeightsFolder ReadWeightsFolder(const std::string& dir) {
  return {ReadDiffusersConfig(dir), (std::filesystem::path(dir) / "config.json").string()};
}

// The trial's model: its preset with overrides, and the architecture of its weights folders
// (checked again here: a folder may have changed since the sweep was planned).
ModelConfig ResolvedModel(const TrialConfig& config) {
  std::string error;
  auto model = ResolveModel(config.model, config.model_overrides, &error);
  if (!model) throw std::invalid_argument(error);
  if (!config.weights.empty()) {
    auto folder = ReadWeightsFolder(config.weights);
    *model = ModelWithDiffusersWeights(*model, folder.config, folder.file);
  }
  if (!config.vae_weights.empty()) {
    auto folder = ReadWeightsFolder(config.vae_weights);
    *model = ModelWithDiffusersVae(*model, folder.config, folder.file);
  }
  return *model;
}

// Copies the folder's tensors into `module` (every rank reads the same files): the files
// diffusers would load for the trial's weights variant.
// Under tensor parallelism `module`'s split layers are this rank's shards (`shard`): only their
// bytes are copied.
void LoadWeights(torch::nn::Module& module, const std::string& dir, const std::string& variant,
                 const ShardPlacement& shard = {}) {
  WeightsFolder folder = ReadWeightsFolder(dir);
  LoadDiffusersWeights(module, folder.config, ReadDiffusersTensors(dir, variant), dir, shard);
}

// Everything one rank needs to run iterations: model, inputs and sampler, for any family.
class DitRank {
 public:
  // `shapes`: a served trial's request shapes (its trial file's), each run as the trial that
  // times it alone; empty: the trial's own shape.
  DitRank(const TrialConfig& config, ParallelContext& parallel, torch::Device device,
          const std::vector<RequestShape>& shapes = {})
      : config_(config), parallel_(parallel), device_(device) {
    dtype_ = ApplyPrecision(config.precision);
    // LibTorch's default generator is process-wide: ranks that share a process (threads in
    // tests) must not interleave their draws, or their weights would differ.
    static std::mutex generator_mutex;
    std::lock_guard<std::mutex> lock(generator_mutex);
    // Same seed on every rank: identical weights everywhere, as after loading a checkpoint.
    torch::manual_seed(static_cast<uint64_t>(config.seed));
    // Built in the trial's dtype, then moved: the host never holds an fp32 copy of a bf16 model.
    model_ = MakeDitModel(ResolvedModel(config), dtype_,
                          config.weights.empty() ? Weights::kSeeded : Weights::kLoaded);
    // Tensor parallelism: the split layers keep this rank's shard (seeded weights are drawn
    // whole, as on one rank, then cut), before anything reaches the device.
    TensorShards shards;
    const ShardPlacement shard =
        TensorParallelPlacement(model_->config(), parallel.tensor_parallel(), shards);
    ShardParameters(model_->module(), shard);
    if (!config.weights.empty())
      LoadWeights(model_->module(), config.weights, config.weights_variant, shard);
    model_->module().to(device, dtype_);
    model_->module().eval();
    if (config.quant != Quantization::kNone) QuantizeLinears(device);
    if (config.scope == Scope::kPipeline) {  // seeded like the transformer: same on every rank
      ScopedDefaultDtype in_dtype(dtype_);
      vae_ = MakeLatentDecoder(model_->config());
      if (config.vae_weights.empty()) DrawSeededWeights(*vae_);
      else LoadWeights(*vae_, config.vae_weights, config.weights_variant);
      vae_->to(device, dtype_);
      vae_->eval();
      vae_->SetRowSplit(RowSplit(parallel.vae()));  // vae_parallel
    }
    // The shapes of its requests: the trial's own, or a serving trial's mix (or trace), each
    // with its own sampler, PipeFusion runner, noise and prompt inputs, one model for all.
    std::vector<TrialConfig> shape_trials;
    for (const RequestShape& shape : shapes) shape_trials.push_back(ShapeTrial(config, shape));
    if (shapes.empty()) shape_trials.push_back(config);
    for (const TrialConfig& shape : shape_trials) {
      ShapeInputs& inputs = shapes_.emplace_back();
      inputs.steps = shape.scope == Scope::kForward ? 1 : shape.steps;
      inputs.sampler = model_->MakeSamplerFor(shape.steps, shape.image_shape());
      if (shape.pipefusion > 1)
        inputs.pipefusion = std::make_unique<PipeFusionRunner>(
            *model_, parallel, shape.effective_pipefusion_patches(), PipeFusionWarmupSteps(shape));
    }
    active_ = &shapes_.front();
    if (config.cache.kind == StepCache::Kind::kFbCache) {
      cache_ = std::make_unique<FirstBlockCache>(config.cache.threshold, config.cache.warmup_steps,
                                                 steps(), parallel.world());
    } else if (config.cache.kind == StepCache::Kind::kTeaCache) {
      // Refused before launch without one (experiments/validity.cc); a stale trial file is not.
      auto polynomial = PublishedTeaCachePolynomial(config.model);
      if (!polynomial)
        throw std::invalid_argument(fmt::format(
            "cache: teacache: no rescale polynomial is published for {}", config.model));
      cache_ =
          std::make_unique<TeaCache>(std::move(polynomial->coefficients), config.cache.threshold,
                                     config.cache.warmup_steps, steps(), parallel.world());
    }

    // Inputs: seeded latent noise per dp replica; prompt inputs are seeded random tensors of the
    // model's real shapes (the text encoders are outside every timed scope). The shapes draw in
    // turn from one seed: the first's inputs are those of a trial of that shape alone.
    const ModelConfig& model_shape = model_->config();
    torch::manual_seed(static_cast<uint64_t>(config.seed) * 1000003ULL + parallel.at().dp + 1);
    auto options = torch::TensorOptions().dtype(dtype_).device(device);
    const bool cfg_batch = model_->guidance() == Guidance::kCfgBatch;
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      ShapeInputs& inputs = shapes_[i];
      // [B, C, (latent frames,) latent rows, latent columns]
      const ImageShape image = shape_trials[i].image_shape();
      std::vector<int64_t> latent{config.batch, model_shape.in_channels};
      if (model_shape.video()) latent.push_back(LatentFrames(model_shape, image.frames));
      latent.push_back(image.height / model_shape.vae_downsample);
      latent.push_back(image.width / model_shape.vae_downsample);
      inputs.noise = torch::randn(latent).to(options);
      // CFG: rows [0, B) negative, [B, 2B) prompt; a cfg-parallel rank keeps its half.
      Conditioning conditioning =
          model_->MakeConditioning(cfg_batch ? 2 * config.batch : config.batch, image);
      if (model_->guidance() == Guidance::kDistilled)
        conditioning.guidance = torch::full({config.batch}, model_->guidance_scale());
      conditioning = conditioning.To(options);
      if (cfg_batch && parallel.cfg().size == 2)
        conditioning = conditioning.Rows(parallel.cfg().rank * config.batch, config.batch);
      inputs.conditioning = std::move(conditioning);
    }
  }

  // The request shape the next iterations run (an index into the serving trial's shapes;
  // 0 otherwise).
  void Select(int shape) { active_ = &shapes_.at(static_cast<std::size_t>(shape)); }

  // The guided prediction for latent x at sampler step i.
  torch::Tensor Predict(const torch::Tensor& x, int step, const DitModel::BlockHook& on_block) {
    const bool cfg_batch = model_->guidance() == Guidance::kCfgBatch;
    const bool split_cfg = cfg_batch && parallel_.cfg().size == 2;
    auto input = cfg_batch && !split_cfg ? torch::cat({x, x}, 0) : x;
    model_->BeginStep(active_->sampler->ModelTime(step));  // a model of experts picks one
    auto time = torch::full({input.size(0)}, active_->sampler->ModelTime(step),
                            torch::TensorOptions().dtype(torch::kFloat32).device(device_));
    auto out = model_->Prediction(
        active_->pipefusion
            ? active_->pipefusion->Forward(input, time, active_->conditioning, step, on_block)
        : cache_ ? cache_->Forward(*model_, input, time, active_->conditioning, parallel_, on_block,
                                   step)
                 : model_->Forward(input, time, active_->conditioning, parallel_, on_block));
    if (!cfg_batch) return out;
    if (split_cfg) out = parallel_.GatherCfg(out, 0);
    const int64_t b = config_.batch;
    auto uncond = out.narrow(0, 0, b), cond = out.narrow(0, b, b);
    return uncond + model_->guidance_scale() * (cond - uncond);
  }

  // Whether step i runs in high precision: attention `auto`, every layer in the trial's
  // precision (a per-step schedule's first and last steps).
  bool HighPrecisionStep(int i) const {
    return !config_.schedule.empty() && config_.schedule.HighPrecision(i, steps());
  }

  // Denoising step i from latent x: the next latent (scope forward: the prediction). The step
  // runs the trial's attention kernel and FP8 layers, or its schedule's high precision.
  torch::Tensor StepOnce(int i, const torch::Tensor& x, const DitModel::BlockHook& on_block) {
    const bool high = HighPrecisionStep(i);
    ScopedAttentionKernel kernel(high ? AttentionKernel::kAuto
                                      : AttentionKernelOf(config_.attention));
    ScopedFp8Layers fp8(high ? nullptr : fp8_.get());
    auto prediction = Predict(x, i, on_block);
    return config_.scope == Scope::kForward ? prediction : active_->sampler->Step(i, x, prediction);
  }

  // Scope pipeline: the VAE decode of the final latent (stage "decode"); otherwise x itself.
  // Under vae_parallel the first N ranks split it and each gets the whole image; a rank past
  // them neither decodes nor times a decode, and keeps the latent.
  torch::Tensor Decode(torch::Tensor x, Stages* stages) {
    if (!vae_ || !parallel_.decodes()) return x;
    if (stages) stages->Begin("decode");
    x = vae_->forward(x, config_.vae_tile);
    if (stages) stages->End();
    return x;
  }

  // One iteration of the trial's scope: every denoising step is a stage, and with
  // profile_blocks every transformer block inside it too; scope pipeline adds the VAE decode
  // as stage `decode` (Decode). `stages` may be null (untimed).
  // `block_ranges`: every block a profiler range "ditbench.block N" (the profiled pass).
  torch::Tensor Iterate(Stages* stages, bool block_ranges = false) {
    DitModel::BlockHook on_block;
    if (stages && config_.profile_blocks)
      on_block = [stages](int block, bool begin) {
        if (begin) stages->Begin(fmt::format("block:{}", block));
        else stages->End();
      };
    std::vector<std::unique_ptr<at::RecordFunction>> open_blocks;
    if (block_ranges)
      on_block = [&open_blocks](int block, bool begin) {
        if (!begin) {
          if (!open_blocks.empty()) open_blocks.pop_back();  // its destructor ends the range
          return;
        }
        auto range = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
        if (range->isActive()) range->before(fmt::format("ditbench.block {}", block));
        open_blocks.push_back(std::move(range));
      };
    auto x = active_->noise;
    // The first iteration (a warm-up one unless warmup is 0) of the first shape records what
    // every step ran.
    const bool record = step_kernels_.empty() && active_ == &shapes_.front();
    for (int i = 0; i < steps(); ++i) {
      // A profiler's step range (metrics/trace_profile.h); nothing when none listens.
      RECORD_USER_SCOPE(fmt::format("ditbench.step {}", i));
      std::optional<AttentionKernelRecorder> recorder;
      if (record) recorder.emplace();
      if (stages) stages->Begin(fmt::format("step:{}", i));
      x = StepOnce(i, x, on_block);
      if (stages && cache_ && cache_->reused()) stages->MarkReused();
      if (stages) stages->End();
      if (record) step_kernels_.push_back(StepKernelsOf(i, recorder->ran()));
    }
    if (record) latent_shape_ = x.sizes().vec();
    return Decode(x, stages);
  }

  // What each step ran, from the first iteration.
  const std::vector<StepKernels>& step_kernels() const { return step_kernels_; }
  // The shape of the latent the first eager iteration's denoising loop returned.
  const std::vector<int64_t>& latent_shape() const { return latent_shape_; }

  // graph: cuda_graph. Captures every step of one iteration from the noise (after the eager
  // warm-up) and returns the host milliseconds the capture took.
  double Capture(StepGraphs& graphs) {
    return graphs.Capture(active_->noise, steps(), [this](int i, const torch::Tensor& x) {
      return StepOnce(i, x, DitModel::BlockHook{});
    });
  }

  // One iteration from the captured graphs: each step a replay (stage "step:i"), then the
  // decode of scope pipeline, eagerly.
  torch::Tensor Replay(StepGraphs& graphs, Stages* stages) {
    return Decode(graphs.Replay(active_->noise, stages), stages);
  }

  int steps() const { return active_->steps; }
  int shapes() const { return static_cast<int>(shapes_.size()); }

 private:
  // quant: the FP8 weights of the layers it covers (model_zoo/layers/fp8_linear.h), after the
  // model is on its device. Without a schedule no step needs the high-precision weights of
  // those layers: freed, so that the weights take the memory FP8 serving takes.
  void QuantizeLinears(torch::Device device) {
    const int capability = device.is_cuda() ? CudaComputeCapability(device.index()) : 0;
    if (capability < 89)
      throw std::runtime_error(fmt::format(
          "quant: {} needs FP8 GEMMs (a GPU of compute capability 8.9 or later); {} has {}",
          QuantizationName(config_.quant), DeviceName(device),
          device.is_cuda() ? fmt::format("{}.{}", capability / 10, capability % 10)
                           : std::string("none")));
    fp8_ = std::make_unique<Fp8Layers>(
        model_->module(),
        config_.quant == Quantization::kFp8Rowwise ? Fp8Scaling::kRowwise : Fp8Scaling::kTensor,
        config_.quant_exclude);
    if (fp8_->quantized().empty())
      throw std::runtime_error(fmt::format(
          "quant: {} quantizes no layer of {} (quant_exclude or sizes not multiples of 16 keep "
          "all {} linear layers in {})",
          QuantizationName(config_.quant), config_.model, fp8_->kept().size(),
          PrecisionName(config_.precision)));
    if (config_.schedule.empty()) fp8_->ReleaseHighPrecision();
  }

  StepKernels StepKernelsOf(int step, const std::set<std::string>& attention) const {
    const bool fp8 = fp8_ && !HighPrecisionStep(step);
    return {step, fmt::format("{}", fmt::join(attention, "+")),
            std::string(fp8 ? QuantizationName(config_.quant) : PrecisionName(config_.precision)),
            cache_ && cache_->reused(), model_->expert()};
  }

  // One request shape's inputs (a trial that serves no mix has one).
  struct ShapeInputs {
    int steps = 1;  // denoising steps; 1 at scope forward
    std::unique_ptr<Sampler> sampler;
    std::unique_ptr<PipeFusionRunner> pipefusion;  // pipefusion > 1 only
    torch::Tensor noise;
    Conditioning conditioning;
  };

  const TrialConfig& config_;
  ParallelContext& parallel_;
  torch::Device device_;
  torch::ScalarType dtype_ = torch::kFloat32;
  std::unique_ptr<DitModel> model_;
  std::shared_ptr<LatentDecoder> vae_;  // scope pipeline only
  std::unique_ptr<Fp8Layers> fp8_;      // quant only
  std::unique_ptr<StepCacheForward> cache_;  // cache only
  std::deque<ShapeInputs> shapes_;           // stable addresses: active_ points into it
  ShapeInputs* active_ = nullptr;
  std::vector<StepKernels> step_kernels_;
  std::vector<int64_t> latent_shape_;
};

}  // namespace

AttentionKernel AttentionKernelOf(AttentionBackend backend) {
  switch (backend) {
    case AttentionBackend::kFlash:
      return AttentionKernel::kFlash;
    case AttentionBackend::kEfficient:
      return AttentionKernel::kEfficient;
    case AttentionBackend::kCudnn:
      return AttentionKernel::kCudnn;
    case AttentionBackend::kMath:
      return AttentionKernel::kMath;
    case AttentionBackend::kAuto:
      break;
  }
  return AttentionKernel::kAuto;
}

ParallelDegrees DegreesOf(const TrialConfig& c) {
  return c.degrees();
}

ParallelContext BuildParallelContext(const TrialConfig& config, int rank,
                                     const c10::intrusive_ptr<c10d::Store>& store,
                                     const BackendFactory& create) {
  return ParallelContext(DegreesOf(config), rank, store, create, config.vae_parallel);
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

namespace {

// What a trial holds on this rank while it runs, timed or served: inference mode, the kernel
// every attention of the trial runs (local, Ulysses, each ring step, PipeFusion's patches: the
// one its `attention:` names; a kernel that cannot run a call fails the trial), the model and
// its inputs, the world's group and the clock. Construct after ResetMemoryPeak.
struct TrialRank {
  TrialRank(const TrialConfig& config, ParallelContext& parallel, torch::Device device,
            const std::vector<RequestShape>& shapes = {})
      : kernel(AttentionKernelOf(config.attention)),
        dit(config, parallel, device, shapes),
        world(parallel.world(), device),
        clock(device.is_cpu() ? MakeHostClock(device) : MakeDeviceClock(device)) {}
  c10::InferenceMode inference;
  ScopedAttentionKernel kernel;
  DitRank dit;
  ProcessRankGroup world;
  std::unique_ptr<IterationClock> clock;
};

// The final output of the last iteration, where this rank keeps it (`output` not empty).
void WriteOutput(const torch::Tensor& last, const std::filesystem::path& output,
                 RankResult& result) {
  if (output.empty() || !last.defined()) return;
  auto values = last.to(torch::kCPU, torch::kFloat32).contiguous();
  WriteNpy(output, values.sizes().vec(), values.data_ptr<float>());
  result.output_file = output.filename().string();
}

void RecordMemoryPeak(torch::Device device, RankResult& result) {
  const MemoryPeak peak = ReadMemoryPeak(device);
  result.peak_mem_mb = peak.allocated_mb;
  result.peak_reserved_mb = peak.reserved_mb;
}

}  // namespace

void RunDitTrial(const TrialConfig& config, ParallelContext& parallel, torch::Device device,
                 RankResult& result, const TrialHooks& hooks, const std::filesystem::path& output,
                 const std::filesystem::path& run_dir) {
  ResetMemoryPeak(device);
  TrialRank trial(config, parallel, device);
  DitRank& dit = trial.dit;
  ProcessRankGroup& world = trial.world;
  IterationClock& clock = *trial.clock;

  MeasureOptions options;
  options.warmup = config.warmup;
  options.repeats = config.repeats;
  std::unique_ptr<ClockMonitor> monitor;
  if (device.is_cuda()) {
    monitor = std::make_unique<ClockMonitor>(CudaPciBusId(device.index()));
    monitor->Start();
  }
  const int rank = parallel.world().rank;
  // Energy: this rank's GPU board counter (NVML) read by Measure at the edges of the timed
  // iterations; none on CPU. A counter that cannot be opened is said once, in the rank's log
  // and its rank file, and the trial goes on without energy.
  std::string no_energy;
  std::unique_ptr<EnergyCounter> energy = RankEnergyCounter(
      device.is_cuda(), device.is_cuda() ? CudaPciBusId(device.index()) : std::string(),
      &no_energy, [](const std::string& bus_id, std::string* why) {
        return OpenNvmlEnergyCounter(bus_id, why);
      });
  if (!no_energy.empty()) {
    result.energy_unavailable = no_energy;
    fmt::print(stderr, "ditbench-worker: rank {}: no energy per image: {}\n", rank, no_energy);
  }
  options.energy = energy.get();
  const std::int64_t sent_before = parallel.bytes_sent();
  int iterations = 0;
  torch::Tensor last;  // every iteration starts from the same noise: any one is the output
  // graph: cuda_graph. The last warm-up iteration runs eagerly, then captures every step
  // (stage "capture", its host time also in the metric graph_capture_ms); the timed iterations
  // replay the graphs. A replay issues no collective from the host, so the bytes per step are
  // counted over the eager warm-up iterations. REQUIRES: warmup >= 1 (experiments/validity.cc).
  const bool graphed = config.graph == GraphMode::kCudaGraph;
  StepGraphs graphs;
  int eager_iterations = 0;
  std::int64_t eager_bytes = 0;
  Measurement m = Measure(options, world, clock, [&](Stages& stages) {
    if (graphed && graphs.captured()) {
      last = dit.Replay(graphs, &stages);
    } else {
      last = dit.Iterate(&stages);
      if (graphed && iterations + 1 == config.warmup) {
        eager_iterations = iterations + 1;
        eager_bytes = parallel.bytes_sent() - sent_before;
        stages.Begin("capture");
        result.metrics["graph_capture_ms"] = dit.Capture(graphs);
        stages.End();
      }
    }
    ++iterations;
    if (hooks.in_timed_region) hooks.in_timed_region(rank);
  });
  const int steps = dit.steps();
  if (graphed && eager_iterations > 0)
    result.comm_bytes_per_step = double(eager_bytes) / (double(eager_iterations) * steps);
  else if (iterations > 0)
    result.comm_bytes_per_step =
        double(parallel.bytes_sent() - sent_before) / (double(iterations) * steps);
  WriteOutput(last, output, result);
  if (monitor) result.clocks = monitor->Stop().ToJson();
  // `profile: trace`: after the timed iterations, never in them. A profiler that fails leaves
  // no trace (the coordinator records why); the timed numbers stand.
  if (config.profile_trace && !run_dir.empty()) {
    try {
      // cuda_graph: the replays the timed iterations ran (no block ranges inside a graph).
      result.trace_file = ProfileIterations(
          [&] {
            if (graphed && graphs.captured()) dit.Replay(graphs, nullptr);
            else dit.Iterate(nullptr, /*block_ranges=*/true);
          },
          device, rank, run_dir);
    } catch (const std::exception& e) {
      fmt::print(stderr, "ditbench-worker: rank {}: no trace: {}\n", rank, e.what());
    }
  }
  if (m.energy) {
    result.energy = RankEnergy{m.energy->joules, m.energy->window_ms};
  } else if (!m.energy_unavailable.empty()) {
    result.energy_unavailable = m.energy_unavailable;
    fmt::print(stderr, "ditbench-worker: rank {}: no energy per image: {}\n", rank,
               m.energy_unavailable);
  }
  result.steps = dit.step_kernels();
  result.latent_shape = dit.latent_shape();
  result.samples = std::move(m.samples);
  result.stop_reason = m.stop_reason;
  RecordMemoryPeak(device, result);
}

void ServeDitTrial(const TrialConfig& config, const RequestList& load, ParallelContext& parallel,
                   const c10::intrusive_ptr<c10d::Store>& store, torch::Device device,
                   RankResult& result, const std::filesystem::path& output) {
  ResetMemoryPeak(device);
  TrialRank trial(config, parallel, device, load.shapes);
  DitRank& dit = trial.dit;
  ServeRankOptions options;
  options.load = TrialServeLoad(config);
  options.requests = load.requests;
  // A replica is a dp group (metrics/serve_loop.h, LeadsReplica).
  const RankCoordinates& at = parallel.at();
  options.replica = at.dp;
  options.leader = LeadsReplica(at);
  options.shapes = dit.shapes();
  options.isolated_runs = std::max(1, config.repeats.min);
  // Warm-up: every replica at once (a replica's collectives stay within its own groups), every
  // shape.
  for (int shape = 0; shape < options.shapes; ++shape) {
    dit.Select(shape);
    for (int i = 0; i < config.warmup; ++i) dit.Iterate(nullptr);
  }
  torch::Tensor last;  // the output of the first shape (every replica times it alone)
  StoreServeQueue queue(
      store, std::chrono::milliseconds(static_cast<std::int64_t>(config.timeout_s * 1000)));
  SteadyHostClock host;
  const ServedRequests served = ServeRequests(options, trial.world, *trial.clock, host, queue,
                                              [&](int shape, Stages& stages) {
                                                dit.Select(shape);
                                                torch::Tensor out = dit.Iterate(&stages);
                                                if (shape == 0) last = out;
                                              });
  RecordServed(served, options.load.warmup_requests, options.leader, result);
  result.steps = dit.step_kernels();
  result.latent_shape = dit.latent_shape();
  WriteOutput(last, output, result);
  RecordMemoryPeak(device, result);
}

torch::Tensor DenoiseOnce(const TrialConfig& config, ParallelContext& parallel,
                          torch::Device device) {
  c10::InferenceMode inference;
  DitRank dit(config, parallel, device);
  if (config.graph == GraphMode::kCudaGraph) {  // as a trial: eager once, capture, replay
    dit.Iterate(nullptr);
    StepGraphs graphs;
    dit.Capture(graphs);
    return dit.Replay(graphs, nullptr).to(torch::kFloat32).cpu();
  }
  return dit.Iterate(nullptr).to(torch::kFloat32).cpu();
}

}  // namespace ditbench

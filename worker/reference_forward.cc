#include "worker/reference_forward.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cmath>
#include <iostream>
#include <set>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include "experiments/trial.h"
#include "model_zoo/families/dit_model.h"
#include "model_zoo/families/family_models.h"
#include "model_zoo/families/flux.h"
#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/shapes/vae_shapes.h"
#include "model_zoo/weights/diffusers_weights.h"
#include "model_zoo/weights/safetensors.h"
#include "worker/cuda_info.h"
#include "worker/dit_trial.h"
#include "worker/torch_runtime.h"

namespace ditbench {
namespace {

// The inputs file, each input taken at most once; what is left over was not understood.
class Inputs {
 public:
  explicit Inputs(const std::filesystem::path& path)
      : path_(path.string()), tensors_(ReadSafetensors(path)) {}

  torch::Tensor Take(const std::string& name, const std::string& why) {
    auto it = tensors_.find(name);
    if (it == tensors_.end())
      throw std::invalid_argument(path_ + ": missing input '" + name + "' (" + why + ")");
    auto t = it->second;
    tensors_.erase(it);
    return t;
  }
  void RefuseOthers(const std::string& class_name) const {
    for (const auto& [name, t] : tensors_)
      throw std::invalid_argument(path_ + ": input '" + name + "' is not supported for " +
                                  class_name);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  NamedTensors tensors_;
};

void Require(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw std::invalid_argument(path + ": " + what);
}

std::string Dims(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// A timestep given as a scalar or one per row -> [batch].
torch::Tensor PerRow(const torch::Tensor& t, int64_t batch, const std::string& path,
                     const std::string& name) {
  if (t.dim() == 0) return t.reshape({1}).expand({batch}).contiguous();
  Require(t.dim() == 1 && t.size(0) == batch, path,
          "input '" + name + "' has shape " + Dims(t) + ", expected [] or [" +
              std::to_string(batch) + "]");
  return t;
}

// Flux's ids: [tokens, 3] (or diffusers' deprecated [1, tokens, 3]), as ditbench builds them.
void CheckFluxIds(torch::Tensor ids, const torch::Tensor& expected, const std::string& path,
                  const std::string& name, const std::string& what) {
  if (ids.dim() == 3 && ids.size(0) == 1) ids = ids[0];
  Require(ids.sizes() == expected.sizes() && torch::equal(ids.to(torch::kFloat64), expected),
          path, "input '" + name + "': only " + what + " is supported (shape " +
                    Dims(expected) + ")");
}

// diffusers' encoder_attention_mask [batch, tokens] -> each row's prompt length: ones for the
// prompt's tokens, then zeros for its padding, as HunyuanVideoPipeline's tokenizer pads.
std::vector<int64_t> PromptLengths(const torch::Tensor& mask, int64_t batch, int64_t tokens,
                                   const std::string& path) {
  const std::string name = "input 'encoder_attention_mask'";
  Require(mask.dim() == 2 && mask.size(0) == batch && mask.size(1) == tokens, path,
          name + " has shape " + Dims(mask) + ", expected [" + std::to_string(batch) + ", " +
              std::to_string(tokens) + "]");
  std::vector<int64_t> lengths;
  for (int64_t r = 0; r < batch; ++r) {
    auto row = mask[r].to(torch::kFloat64);
    const int64_t length = row.ne(0).sum().item<int64_t>();
    Require(length > 0 && torch::equal(row, torch::arange(tokens).lt(length).to(torch::kFloat64)),
            path, name + " row " + std::to_string(r) +
                      ": expected ones for the prompt's tokens, then zeros for its padding (at "
                      "least one token)");
    lengths.push_back(length);
  }
  return lengths;
}

// Flux: packed tokens [B, rows * cols, 4C] -> the latent [B, C, 2 rows, 2 cols] ditbench's
// Flux packs itself; the grid's sides are the largest row and column of img_ids plus one. Takes
// and checks img_ids and txt_ids (`text_tokens` rows of zeros).
torch::Tensor UnpackedFluxLatent(const DiffusersModel& model, Inputs& inputs,
                                 const torch::Tensor& hidden, int64_t text_tokens) {
  const std::string& path = inputs.path();
  const std::string why = model.class_name + "'s forward needs it";
  const int64_t channels = model.config.in_channels;
  Require(hidden.dim() == 3 && hidden.size(2) == 4 * channels, path,
          "input 'hidden_states' has shape " + Dims(hidden) + ", expected [batch, rows * cols, " +
              std::to_string(4 * channels) + "]");
  auto ids = inputs.Take("img_ids", why);
  if (ids.dim() == 3 && ids.size(0) == 1) ids = ids[0];
  Require(ids.dim() == 2 && ids.size(0) == hidden.size(1) && ids.size(1) == 3, path,
          "input 'img_ids' has shape " + Dims(ids) + ", expected [" +
              std::to_string(hidden.size(1)) + ", 3] (a row per token of hidden_states)");
  const int64_t rows = ids.select(1, 1).max().item<int64_t>() + 1;
  const int64_t cols = ids.select(1, 2).max().item<int64_t>() + 1;
  Require(rows > 0 && cols > 0 && rows * cols == hidden.size(1), path,
          "input 'img_ids' spans " + std::to_string(rows) + " rows x " + std::to_string(cols) +
              " columns, which is not the " + std::to_string(hidden.size(1)) +
              " tokens of hidden_states");
  auto options = torch::TensorOptions().dtype(torch::kFloat64);
  CheckFluxIds(ids, FluxImageIds(rows, cols, options), path, "img_ids",
               "the (0, row, column) grid of the latent, row-major");
  CheckFluxIds(inputs.Take("txt_ids", why), torch::zeros({text_tokens, 3}, options), path,
               "txt_ids", "zeros");
  return UnpackLatents(hidden, rows, cols, channels);
}

using Forward = std::function<torch::Tensor()>;

// The model with its weights and inputs on the device, as one forward to call.
Forward PrepareTransformer(DiffusersModel& model, Inputs& inputs, const std::string& where,
                          const ParallelContext& parallel, torch::Device device,
                          torch::ScalarType dtype, const std::string& variant) {
  const std::string& path = inputs.path();
  const bool packed = model.config.packed_latents;
  const std::string why = model.class_name + "'s forward needs it";
  auto hidden = inputs.Take("hidden_states", why);
  auto text = inputs.Take("encoder_hidden_states", why);
  auto timestep = inputs.Take("timestep", why);
  const int64_t b = hidden.size(0);
  Require(text.dim() == 3 && text.size(0) == b, path,
          "input 'encoder_hidden_states' has shape " + Dims(text) + ", expected [" +
              std::to_string(b) + ", tokens, width]");
  model.config.text_tokens = static_cast<int>(text.size(1));

  Conditioning conditioning;
  conditioning.text = text;
  torch::Tensor latent = hidden, time = PerRow(timestep, b, path, "timestep").to(torch::kFloat32);
  if (model.config.micro_conditions) {
    conditioning.resolution = inputs.Take("resolution", "use_additional_conditions is on");
    conditioning.aspect_ratio = inputs.Take("aspect_ratio", "use_additional_conditions is on");
  }
  if (model.config.pooled_dim > 0)
    conditioning.pooled = inputs.Take("pooled_projections", why);
  if (model.config.guidance_embed)
    conditioning.guidance =
        PerRow(inputs.Take("guidance", "guidance_embeds is on"), b, path, "guidance");
  // The text's padding, which diffusers masks as attention keys: each row attends to its
  // prompt's tokens only (model_config.h, text_mask).
  std::vector<int64_t> lengths;
  if (model.config.text_mask)
    lengths = PromptLengths(inputs.Take("encoder_attention_mask", why), b, text.size(1), path);
  if (packed) {
    latent = UnpackedFluxLatent(model, inputs, hidden, text.size(1));
    time = time * 1000.0;  // diffusers' Flux scales sigma inside the model; ditbench before it
  } else if (model.config.video()) {
    // [B, C, F, H, W]: latent frames in patch_t steps, rows and columns in patches.
    const auto& c = model.config;
    Require(hidden.dim() == 5 && hidden.size(1) == c.in_channels &&
                hidden.size(2) % c.patch_t == 0 && hidden.size(3) % c.patch == 0 &&
                hidden.size(4) % c.patch == 0,
            path, "input 'hidden_states' has shape " + Dims(hidden) + ", expected [batch, " +
                      std::to_string(c.in_channels) + ", frames (a multiple of " +
                      std::to_string(c.patch_t) + "), height, width (multiples of " +
                      std::to_string(c.patch) + ")]");
  } else {
    Require(hidden.dim() == 4 && hidden.size(1) == model.config.in_channels, path,
            "input 'hidden_states' has shape " + Dims(hidden) + ", expected [batch, " +
                std::to_string(model.config.in_channels) + ", height, width]");
  }
  inputs.RefuseOthers(model.class_name);

  std::shared_ptr<DitModel> dit = MakeDitModel(model.config, dtype, Weights::kLoaded);
  TensorShards shards;  // tensor parallelism: this rank reads its shard of the split layers
  const ShardPlacement shard =
      TensorParallelPlacement(model.config, parallel.tensor_parallel(), shards);
  ShardParameters(dit->module(), shard);
  LoadDiffusersWeights(dit->module(), model, ReadDiffusersTensors(where, variant), where, shard);
  dit->module().to(device, dtype);
  dit->module().eval();
  auto options = torch::TensorOptions().dtype(dtype).device(device);
  latent = latent.to(options);
  time = time.to(device);
  conditioning = conditioning.To(options);
  auto run = [dit, packed, &parallel](const torch::Tensor& x, const torch::Tensor& t,
                                      const Conditioning& c) {
    auto out = dit->Forward(x, t, c, parallel);
    return packed ? PackLatents(out) : out;
  };
  if (lengths.empty()) return [=] { return run(latent, time, conditioning); };
  return [=] {
    auto prompt = [&](Conditioning c, int64_t length) {
      c.text = c.text.narrow(1, 0, length);
      return c;
    };
    if (std::all_of(lengths.begin(), lengths.end(), [&](int64_t l) { return l == lengths[0]; }))
      return run(latent, time, prompt(conditioning, lengths[0]));
    std::vector<torch::Tensor> rows;  // prompts of different lengths: one forward per row
    for (int64_t r = 0; r < b; ++r)
      rows.push_back(run(latent.narrow(0, r, 1), time.narrow(0, r, 1),
                         prompt(conditioning.Rows(r, 1), lengths[r])));
    return torch::cat(rows, 0);
  };
}

Forward PrepareVae(const DiffusersModel& model, Inputs& inputs, const std::string& where,
                   torch::Device device, torch::ScalarType dtype, int tile, const std::string& variant) {
  const int unit = 4 * model.config.vae_downsample;
  if (tile < 0 || tile % unit)
    throw std::invalid_argument("--vae-tile " + std::to_string(tile) +
                                ": expected 0 or a multiple of " + std::to_string(unit) +
                                " pixels");
  auto latent = inputs.Take("latent_sample", model.class_name + "'s decode needs it");
  const bool clip = model.config.video();
  Require(latent.dim() == (clip ? 5 : 4) && latent.size(1) == model.config.in_channels,
          inputs.path(),
          "input 'latent_sample' has shape " + Dims(latent) + ", expected [batch, " +
              std::to_string(model.config.in_channels) + (clip ? ", frames" : "") +
              ", height, width]");
  inputs.RefuseOthers(model.class_name);
  std::shared_ptr<LatentDecoder> vae = [&] {
    ScopedDefaultDtype in_dtype(dtype);
    return MakeLatentDecoder(model.config);
  }();
  LoadDiffusersWeights(*vae, model, ReadDiffusersTensors(where, variant), where);
  vae->to(device, dtype);
  vae->eval();
  latent = latent.to(device, dtype);
  return [vae, latent, tile] { return vae->DecodeUnscaled(latent, tile); };
}

// Refuses a folder whose parameters alone would not fit in the device's memory, before any of
// them is allocated: a config.json that says `num_layers: 60000` gets one line, not an
// exhausted machine.
void RequireParametersFit(const DiffusersModel& model, torch::ScalarType dtype,
                          torch::Device device, const std::string& where) {
  const std::int64_t count = model.kind == DiffusersKind::kVae
                                 ? VaeDecoderParameterCount(model.config)
                                 : ParameterCount(model.config);
  const double bytes = double(count) * double(c10::elementSize(dtype));
  const double available =
      device.is_cuda() ? double(CudaTotalMemoryBytes(device.index()))
                       : double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (available > 0 && bytes > available)
    throw std::invalid_argument(fmt::format(
        "{}/config.json: {} parameters need {:.1f} GB in {}, more than the {:.1f} GB the {} has",
        where, count, bytes / 1e9, c10::toString(dtype), available / 1e9,
        device.is_cuda() ? "GPU" : "machine"));
}

void Synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

int Fail(int rank, const std::string& what, int code) {
  std::cerr << "ditbench-worker: forward: rank " << rank << ": " << what << "\n";
  return code;
}

}  // namespace

int RunReferenceForward(const ReferenceForwardOptions& options) {
  RankEnvironment env;
  try {
    env = RankEnvironment::FromEnv();
  } catch (const std::exception& e) {
    return Fail(0, e.what(), 2);
  }
  try {
    const auto precision = ParsePrecision(options.precision);
    if (!precision)
      throw std::invalid_argument("--precision " + options.precision +
                                  ": expected fp32, tf32, bf16 or fp16");
    if (options.ulysses < 1 || options.ring < 1 || options.tp < 1 ||
        options.ulysses * options.ring * options.tp != env.world_size)
      throw std::invalid_argument("--ulysses " + std::to_string(options.ulysses) + " x --ring " +
                                  std::to_string(options.ring) + " x --tp " +
                                  std::to_string(options.tp) + " must equal WORLD_SIZE " +
                                  std::to_string(env.world_size));
    const torch::ScalarType dtype = ApplyPrecision(*precision);
    const bool cuda = torch::cuda::is_available();
    torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank) : torch::kCPU;
    if (!cuda) {
      const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      at::set_num_threads(std::max(1, cores / env.local_world_size));
    }
    const c10::intrusive_ptr<c10d::Store> store = RendezvousStore(env);
    ParallelContext parallel(
        ParallelDegrees{1, 1, 1, options.ring, options.ulysses, options.tp}, env.rank, store,
        [cuda](const auto& s, int rank, int size) { return CreateBackend(s, rank, size, cuda); });

    c10::InferenceMode inference;
    const std::string where = options.model_dir.string();
    DiffusersModel model = ReadDiffusersConfig(options.model_dir);
    RequireParametersFit(model, dtype, device, where);
    Inputs inputs(options.inputs);
    Forward forward = model.kind == DiffusersKind::kVae
                          ? PrepareVae(model, inputs, where, device, dtype, options.vae_tile, options.variant)
                          : PrepareTransformer(model, inputs, where, parallel, device, dtype, options.variant);
    torch::Tensor out = forward();
    if (env.rank == 0)
      WriteSafetensors(options.output, {{"sample", out.to(torch::kCPU, torch::kFloat32)}});
    std::vector<double> times_ms;
    for (int i = 0; i < options.repeats; ++i) {
      Synchronize(device);
      const auto start = std::chrono::steady_clock::now();
      forward();
      Synchronize(device);
      times_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    if (options.repeats > 0 && env.rank == 0) {
      std::cout << "{\"forward_ms\": [";
      for (size_t i = 0; i < times_ms.size(); ++i) std::cout << (i ? ", " : "") << times_ms[i];
      std::cout << "]}" << std::endl;
    }
  } catch (const std::invalid_argument& e) {
    return Fail(env.rank, e.what(), 2);
  } catch (const c10::Error& e) {
    return Fail(env.rank, e.what_without_backtrace(), 1);
  } catch (const std::exception& e) {
    return Fail(env.rank, e.what(), 1);
  }
  return 0;
}

}  // namespace ditbench

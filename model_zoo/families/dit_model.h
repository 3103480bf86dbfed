// The interface every DiT family implements (PixArt, SD3's MM-DiT, Flux), so that
// the worker's trial runner and the PipeFusion runner drive any family without knowing which.
//
// A family provides: its shapes (ModelConfig), its seeded inputs (prompt embeddings of the real
// shapes, pooled embeddings, guidance), how guidance works (a CFG batch with a negative prompt,
// or a distilled guidance input), its sampler, and its forward in three phases:
//   Embed (patchify, conditioning, keep this rank's tokens)
//   -> RunBlock(i) for every block (the unit PipeFusion splits into stages)
//   -> Finish (final layer, gather the sequence, unpatchify).
// Attention inside a block goes through the ParallelContext, which decides whether it is local,
// Ulysses, ring or USP; a family declares joint attention by passing text tokens to Attend.
//
// To add a family: its module in model_zoo/families/<family>.{h,cc} and its row in
// family_models.cc (model_zoo/shapes/family.h lists the rest).
#pragma once

#include <functional>
#include <memory>

#include <torch/torch.h>

#include "model_zoo/layers/sampler.h"
#include "model_zoo/parallel/parallel_context.h"
#include "model_zoo/shapes/model_config.h"

namespace ditbench {

// Everything a forward is conditioned on besides the latent and the time. Rows follow the
// latent batch; undefined tensors are inputs the family does not use.
struct Conditioning {
  torch::Tensor text;      // [rows, text_tokens, text_dim] prompt embeddings
  torch::Tensor pooled;    // [rows, pooled_dim] pooled prompt embedding (SD3, Flux)
  // [rows] the distilled guidance input as diffusers' model takes it: the strength (Flux-dev),
  // the strength x 1000 (HunyuanVideo, as its pipeline scales it).
  torch::Tensor guidance;
  // PixArt-alpha's micro-conditions: [rows, 2] image height and width in pixels, [rows, 1]
  // aspect ratio (height / width).
  torch::Tensor resolution, aspect_ratio;
  // Rows [start, start + length) of every defined tensor.
  Conditioning Rows(int64_t start, int64_t length) const;
  Conditioning To(const torch::TensorOptions& options) const;
};

// How a family applies guidance.
enum class Guidance {
  kCfgBatch,   // classifier-free guidance: negative and prompt rows in one batch (cfg: 2 splits it)
  kDistilled,  // a guidance input to the model, one forward per step (Flux-dev)
  kNone,       // neither (Flux-schnell)
};

// Activations between the phases of one forward. Families give the fields their meaning;
// `image` is always this rank's image tokens [B, n, hidden] (PipeFusion splits it into patches).
struct DitState {
  torch::Tensor image;         // this rank's image tokens
  torch::Tensor text;          // text tokens after the family's projection
  torch::Tensor conditioning;  // time (and pooled/guidance) embedding
  torch::Tensor modulation;    // shared per-block modulation (AdaLN-single)
  int64_t batch = 0;
  int64_t rows = 0;            // patch rows of the full image
  int64_t cols = 0;            // patch columns of the full image
};

class DitModel {
 public:
  virtual ~DitModel() = default;
  virtual const ModelConfig& config() const = 0;
  virtual Guidance guidance() const = 0;
  // The guidance scale of the family's reference pipeline (CFG weight, or the distilled input).
  virtual double guidance_scale() const = 0;
  // Seeded prompt inputs for `rows` rows on the CPU in fp32 (the text encoders are outside every
  // timed scope). For kCfgBatch the caller asks for 2B rows: [0, B) negative, [B, 2B) prompt.
  // `image`: the image (or clip) made (PixArt-alpha's micro-conditions embed its size).
  virtual Conditioning MakeConditioning(int64_t rows, const ImageShape& image) const = 0;
  // The family's sampler for `steps` steps over `image_tokens` tokens per image (Flux shifts
  // its schedule by resolution).
  virtual std::unique_ptr<Sampler> MakeSampler(int steps, int64_t image_tokens) const = 0;
  // The sampler of a trial that generates `shape` (an image or a clip): MakeSampler over its
  // tokens, unless the family's schedule depends on more than the token count (Wan's flow
  // shift depends on the resolution).
  virtual std::unique_ptr<Sampler> MakeSamplerFor(int steps, const ImageShape& shape) const {
    return MakeSampler(steps, ImageTokens(config(), shape));
  }
  // The prediction the sampler consumes from the model's output (PixArt drops learned sigma).
  virtual torch::Tensor Prediction(const torch::Tensor& output) const { return output; }

  virtual DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                         const Conditioning& conditioning, const ParallelContext& parallel) = 0;
  virtual int num_blocks() const = 0;
  // Runs block `index` on state.image (and state.text for two-stream blocks).
  virtual void RunBlock(int index, DitState& state, const ParallelContext& parallel) = 0;
  // [B, out_channels, h, w], the full latent on every rank.
  virtual torch::Tensor Finish(DitState& state, const ParallelContext& parallel) = 0;

  // The timestep-modulated input `cache: teacache` watches, from Embed's state (computed, not
  // run through a block): the first block's modulated image tokens (Flux, HunyuanVideo) or
  // the timestep embedding (Wan), as TeaCache's published polynomials were fitted on.
  // Undefined for a family without one (experiments/validity.cc refuses it before launch).
  virtual torch::Tensor TeaCacheInput(const DitState& /*state*/) { return torch::Tensor(); }

  // Before each denoising step's forward, with the step's model time (the sampler's ModelTime):
  // a model of experts (ModelConfig::experts, Wan 2.2 A14B) picks the expert for it, the
  // high-noise one at or above expert_boundary x 1000 as diffusers' WanPipeline does; its
  // guidance_scale() is then that expert's. A model of one transformer ignores it.
  virtual void BeginStep(double /*model_time*/) {}
  // The expert the last BeginStep picked: 0 (the first, or the only one), 1, ...
  virtual int expert() const { return 0; }

  // The module holding every parameter (for .to(device, dtype), eval, parameter counts).
  virtual torch::nn::Module& module() = 0;

  // Called before (begin = true) and after each block, for per-block timing; may be empty.
  using BlockHook = std::function<void(int block, bool begin)>;
  // latent: [B, C, h, w] (full, identical on every rank of the sequence group); time: [B].
  torch::Tensor Forward(const torch::Tensor& latent, const torch::Tensor& time,
                        const Conditioning& conditioning, const ParallelContext& parallel,
                        const BlockHook& block_hook = {});
};

// A DitModel whose forward phases and shapes are those of a LibTorch module holder `Module`
// (a TORCH_MODULE with config(), num_blocks(), Embed(latent, time, Conditioning, parallel),
// RunBlock and Finish). A family derives from it and adds what is not the module's: guidance,
// conditioning, sampler, prediction.
template <typename Module>
class ModuleDit : public DitModel {
 public:
  explicit ModuleDit(const ModelConfig& config) : module_(config) {}
  const ModelConfig& config() const override { return module_->config(); }
  DitState Embed(const torch::Tensor& latent, const torch::Tensor& time,
                 const Conditioning& conditioning, const ParallelContext& parallel) override {
    return module_->Embed(latent, time, conditioning, parallel);
  }
  int num_blocks() const override { return module_->num_blocks(); }
  void RunBlock(int index, DitState& state, const ParallelContext& parallel) override {
    module_->RunBlock(index, state, parallel);
  }
  torch::Tensor Finish(DitState& state, const ParallelContext& parallel) override {
    return module_->Finish(state, parallel);
  }
  torch::nn::Module& module() override { return *module_; }

 protected:
  Module module_;
};

// Which weights a new model gets.
enum class Weights {
  kSeeded,  // DrawSeededWeights: the same model at every precision and on every rank
  kLoaded,  // left as constructed: the caller copies a checkpoint over them
};

// The model of `config`'s family, allocated in `dtype`: a bf16 model never exists in fp32 first
// (a 12B-parameter Flux would need 48 GB on the host on its way to 24). kSeeded draws from
// LibTorch's default generator: seed it first. Throws std::invalid_argument for a family this
// build lacks.
std::unique_ptr<DitModel> MakeDitModel(const ModelConfig& config,
                                       torch::ScalarType dtype = torch::kFloat32,
                                       Weights weights = Weights::kSeeded);

// Draws every parameter of `root` in fp32 from LibTorch's default generator, module by module in
// registration order, and casts it into the parameter's dtype: one seed gives the same weights at
// every precision (up to rounding), where drawing in bf16 would give other and coarser values.
// Linear and convolution weights and biases uniform within 1/sqrt(fan_in) (LibTorch's defaults),
// norms at one and zero, any other parameter (PixArt's modulation tables) normal / sqrt(width).
// At most one parameter exists in fp32 at a time.
void DrawSeededWeights(torch::nn::Module& root);

// While alive, tensors created without an explicit dtype (every module's parameters) take
// `dtype`. LibTorch's default dtype is process-wide: hold it only while constructing.
class ScopedDefaultDtype {
 public:
  explicit ScopedDefaultDtype(torch::ScalarType dtype);
  ~ScopedDefaultDtype();
  ScopedDefaultDtype(const ScopedDefaultDtype&) = delete;
  ScopedDefaultDtype& operator=(const ScopedDefaultDtype&) = delete;

 private:
  caffe2::TypeMeta previous_;
};

}  // namespace ditbench

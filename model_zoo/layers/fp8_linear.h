// FP8 linear layers (`quant: fp8_rowwise | fp8_tensor`): a model's linear layers run as e4m3
// GEMMs (at::_scaled_mm) with the weights quantized once, when the model is loaded, and the
// activations quantized at every call; the GEMM writes bf16.
//
// Which layers: those inside the transformer's repeated blocks (the top-level module lists
// `blocks`, `transformer_blocks`, `single_transformer_blocks`), except each block's AdaLN
// modulation (the layers ditbench names `norm*`); embedders, the timestep and text
// projections, the output modulation and the final projection stay in the trial's precision,
// as serving engines keep them. `quant_exclude` patterns keep more.
//
// The quantized weights live beside the model (Fp8Layers); Dense and DenseGelu
// (model_zoo/layers/dit_layers.h) run a layer in FP8 while a ScopedFp8Layers names it, so a
// per-step schedule switches between the two by scope, the model untouched.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace ditbench {

enum class Fp8Scaling { kRowwise, kTensor };

// The largest finite e4m3 value (float8_e4m3fn).
inline constexpr double kE4m3Max = 448.0;

// A matrix in e4m3 and its scales: value ≈ data.to(float) * scale, with `scale` fp32 [rows, 1]
// (row-wise) or a 0-dimensional tensor (per tensor). Each scale maps its rows' largest
// magnitude to kE4m3Max (a row of zeros gets scale 1).
struct Fp8Matrix {
  torch::Tensor data;   // [rows, cols] float8_e4m3fn, row-major
  torch::Tensor scale;  // fp32
};

// Quantizes `x` [rows, cols] (any floating dtype) to e4m3 with `scaling`'s scales.
Fp8Matrix QuantizeE4m3(const torch::Tensor& x, Fp8Scaling scaling);

// x W^T + b with `x` [..., in] quantized now and `weight` [out, in] quantized before: one
// at::_scaled_mm writing bf16 (scale_a x's scales, scale_b the weight's, as [1, out] row-wise),
// then the bias in bf16. Throws (c10::Error) where the device has no FP8 GEMM.
torch::Tensor Fp8Linear(const torch::Tensor& x, const Fp8Matrix& weight, const torch::Tensor& bias,
                        Fp8Scaling scaling);

// Whether module path `path` (as named_modules() spells it) is quantized: inside a top-level
// block list and not a modulation layer, and matching none of `exclude` ('*' any text, '?' one
// character, over the whole path).
bool QuantizedLayer(const std::string& path, const std::vector<std::string>& exclude);
bool MatchesPattern(const std::string& path, const std::string& pattern);

// The FP8 weights of one model's quantized linear layers.
class Fp8Layers {
 public:
  // Quantizes every linear layer of `model` that QuantizedLayer selects (and whose sizes the
  // FP8 GEMM takes: both multiples of 16; the others are listed in `kept`).
  Fp8Layers(torch::nn::Module& model, Fp8Scaling scaling, const std::vector<std::string>& exclude);

  // The layer's FP8 weight, or null when it runs in high precision.
  const Fp8Matrix* Find(const torch::nn::LinearImpl* layer) const;
  Fp8Scaling scaling() const { return scaling_; }
  const std::vector<std::string>& quantized() const { return quantized_; }
  const std::vector<std::string>& kept() const { return kept_; }
  // Bytes of the FP8 weights and their scales.
  std::int64_t bytes() const { return bytes_; }
  // Frees the quantized layers' high-precision weights (their biases stay): when every step
  // runs them in FP8, so that the weights take the memory FP8 serving takes. Afterwards the
  // layers run only while a ScopedFp8Layers names these layers. Returns the bytes freed.
  std::int64_t ReleaseHighPrecision();

 private:
  Fp8Scaling scaling_;
  std::map<torch::nn::LinearImpl*, Fp8Matrix> weights_;
  std::vector<std::string> quantized_, kept_;
  std::int64_t bytes_ = 0;
};

// While alive, Dense and DenseGelu run the layers `layers` quantized in FP8 (null: none).
class ScopedFp8Layers {
 public:
  explicit ScopedFp8Layers(const Fp8Layers* layers);
  ~ScopedFp8Layers();
  ScopedFp8Layers(const ScopedFp8Layers&) = delete;
  ScopedFp8Layers& operator=(const ScopedFp8Layers&) = delete;

 private:
  const Fp8Layers* previous_;
};
const Fp8Layers* ActiveFp8Layers();

}  // namespace ditbench

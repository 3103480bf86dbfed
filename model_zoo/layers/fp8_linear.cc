#include "model_zoo/layers/fp8_linear.h"

#include <algorithm>
#include <array>

namespace ditbench {
namespace {

const Fp8Layers* g_active = nullptr;

// The top-level module lists that hold a family's repeated transformer blocks.
constexpr std::array<std::string_view, 3> kBlockLists{"blocks", "transformer_blocks",
                                                      "single_transformer_blocks"};

// Path components split at '.'.
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

Fp8Matrix QuantizeE4m3(const torch::Tensor& x, Fp8Scaling scaling) {
  TORCH_CHECK(x.dim() == 2, "QuantizeE4m3 takes a matrix, got ", x.dim(), " dimensions");
  const torch::Tensor values = x.to(torch::kFloat32);
  torch::Tensor amax = scaling == Fp8Scaling::kRowwise
                           ? values.abs().amax(/*dim=*/1, /*keepdim=*/true)
                           : values.abs().max();
  // A row (or matrix) of zeros: any scale represents it; 1 keeps the division finite.
  torch::Tensor scale = torch::where(amax > 0, amax / kE4m3Max, torch::ones_like(amax));
  torch::Tensor data = (values / scale).clamp(-kE4m3Max, kE4m3Max).to(torch::kFloat8_e4m3fn);
  return {data, scale};
}

torch::Tensor Fp8Linear(const torch::Tensor& x, const Fp8Matrix& weight, const torch::Tensor& bias,
                        Fp8Scaling scaling) {
  const int64_t in = x.size(-1), out = weight.data.size(0);
  const Fp8Matrix a = QuantizeE4m3(x.reshape({-1, in}), scaling);
  // scale_b is per output column of W^T: [1, out] row-wise, a scalar per tensor.
  const torch::Tensor scale_b =
      scaling == Fp8Scaling::kRowwise ? weight.scale.reshape({1, out}) : weight.scale;
  torch::Tensor y =
      at::_scaled_mm(a.data, weight.data.t(), a.scale, scale_b,
                     /*bias=*/std::nullopt, /*scale_result=*/std::nullopt, torch::kBFloat16);
  if (bias.defined()) y.add_(bias.to(torch::kBFloat16));
  auto shape = x.sizes().vec();
  shape.back() = out;
  return y.view(shape);
}

bool MatchesPattern(const std::string& path, const std::string& pattern) {
  // Iterative glob over the whole text: '*' any run, '?' one character.
  std::size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < path.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == path[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool QuantizedLayer(const std::string& path, const std::vector<std::string>& exclude) {
  const std::vector<std::string> parts = Components(path);
  // <block list>.<index>.<...>.<layer>: inside a repeated block.
  if (parts.size() < 3) return false;
  if (std::find(kBlockLists.begin(), kBlockLists.end(), parts.front()) == kBlockLists.end())
    return false;
  // The blocks' AdaLN modulation (norm1, norm1_context, norm_linear, norm_out) stays.
  if (parts.back().rfind("norm", 0) == 0) return false;
  for (const std::string& pattern : exclude)
    if (MatchesPattern(path, pattern)) return false;
  return true;
}

Fp8Layers::Fp8Layers(torch::nn::Module& model, Fp8Scaling scaling,
                     const std::vector<std::string>& exclude)
    : scaling_(scaling) {
  c10::InferenceMode inference;
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false)) {
    auto* linear = item.value()->as<torch::nn::LinearImpl>();
    if (!linear) continue;
    const std::string& path = item.key();
    const torch::Tensor& w = linear->weight;
    // The FP8 GEMM takes sizes in multiples of 16.
    if (!QuantizedLayer(path, exclude) || w.size(0) % 16 != 0 || w.size(1) % 16 != 0) {
      kept_.push_back(path);
      continue;
    }
    Fp8Matrix q = QuantizeE4m3(w, scaling);
    bytes_ += q.data.numel() + q.scale.numel() * 4;
    weights_.emplace(linear, std::move(q));
    quantized_.push_back(path);
  }
}

const Fp8Matrix* Fp8Layers::Find(const torch::nn::LinearImpl* layer) const {
  auto found = weights_.find(const_cast<torch::nn::LinearImpl*>(layer));
  return found == weights_.end() ? nullptr : &found->second;
}

std::int64_t Fp8Layers::ReleaseHighPrecision() {
  std::int64_t freed = 0;
  for (auto& [layer, fp8] : weights_) {
    freed += layer->weight.numel() * layer->weight.element_size();
    layer->weight.set_data(torch::empty({0}, layer->weight.options()));
  }
  return freed;
}

ScopedFp8Layers::ScopedFp8Layers(const Fp8Layers* layers) : previous_(g_active) {
  g_active = layers;
}
ScopedFp8Layers::~ScopedFp8Layers() { g_active = previous_; }
const Fp8Layers* ActiveFp8Layers() { return g_active; }

}  // namespace ditbench

#include "model_zoo/families/dit_model.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "model_zoo/families/family_models.h"
#include "model_zoo/layers/dit_layers.h"

namespace ditbench {

Conditioning Conditioning::Rows(int64_t start, int64_t length) const {
  auto rows = [&](const torch::Tensor& t) {
    return t.defined() ? t.narrow(0, start, length) : t;
  };
  return {rows(text), rows(pooled), rows(guidance), rows(resolution), rows(aspect_ratio)};
}

Conditioning Conditioning::To(const torch::TensorOptions& options) const {
  auto to = [&](const torch::Tensor& t) { return t.defined() ? t.to(options) : t; };
  return {to(text), to(pooled), to(guidance), to(resolution), to(aspect_ratio)};
}

torch::Tensor DitModel::Forward(const torch::Tensor& latent, const torch::Tensor& time,
                                const Conditioning& conditioning,
                                const ParallelContext& parallel, const BlockHook& block_hook) {
  DitState state = Embed(latent, time, conditioning, parallel);
  for (int i = 0; i < num_blocks(); ++i) {
    if (block_hook) block_hook(i, true);
    RunBlock(i, state, parallel);
    if (block_hook) block_hook(i, false);
  }
  return Finish(state, parallel);
}

ScopedDefaultDtype::ScopedDefaultDtype(torch::ScalarType dtype)
    : previous_(c10::get_default_dtype()) {
  c10::set_default_dtype(caffe2::TypeMeta::fromScalarType(dtype));
}

ScopedDefaultDtype::~ScopedDefaultDtype() { c10::set_default_dtype(previous_); }

void DrawSeededWeights(torch::nn::Module& root) {
  torch::NoGradGuard no_grad;
  for (const auto& module : root.modules()) {
    auto own = module->named_parameters(/*recurse=*/false);
    if (own.is_empty()) continue;
    int64_t fan_in = 0;
    if (const auto* linear = module->as<torch::nn::LinearImpl>())
      fan_in = linear->weight.size(1);
    else if (const auto* conv = module->as<torch::nn::Conv2dImpl>())
      fan_in = conv->weight[0].numel();
    else if (const auto* conv3d = module->as<torch::nn::Conv3dImpl>())
      fan_in = conv3d->weight[0].numel();
    const bool norm = module->as<torch::nn::LayerNormImpl>() ||
                      module->as<torch::nn::GroupNormImpl>() || module->as<RmsNormImpl>();
    const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32);
    for (auto& item : own) {
      torch::Tensor& p = item.value();
      torch::Tensor value;
      if (fan_in > 0) {
        const double bound = 1.0 / std::sqrt(double(fan_in));
        value = torch::empty(p.sizes(), fp32).uniform_(-bound, bound);
      } else if (norm || item.key() == "gamma") {  // a norm's gain (a video VAE's: `gamma`)
        value = item.key() == "weight" || item.key() == "gamma" ? torch::ones(p.sizes(), fp32)
                                                                : torch::zeros(p.sizes(), fp32);
      } else {
        value = torch::randn(p.sizes(), fp32) / std::sqrt(double(p.size(-1)));
      }
      p.copy_(value);
    }
  }
}

std::unique_ptr<DitModel> MakeDitModel(const ModelConfig& config, torch::ScalarType dtype,
                                       Weights weights) {
  std::unique_ptr<DitModel> model;
  {
    ScopedDefaultDtype in_dtype(dtype);
    model = ModelOf(config.family).make(config);
  }
  if (weights == Weights::kSeeded) DrawSeededWeights(model->module());
  return model;
}

}  // namespace ditbench

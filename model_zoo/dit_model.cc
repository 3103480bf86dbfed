#include "model_zoo/dit_model.h"

#include <stdexcept>
#include <string>

#include "model_zoo/flux.h"
#include "model_zoo/pixart.h"
#include "model_zoo/sd3.h"

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

std::unique_ptr<DitModel> MakeDitModel(const ModelConfig& config) {
  switch (config.family) {
    case ModelFamily::kPixArt: return MakePixArt(config);
    case ModelFamily::kFlux: return MakeFlux(config);
    case ModelFamily::kMmDit: return MakeSd3(config);
    default: break;
  }
  throw std::invalid_argument("model family '" + std::string(FamilyName(config.family)) +
                              "' is not implemented in this build yet");
}

}  // namespace ditbench

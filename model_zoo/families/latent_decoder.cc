#include "model_zoo/families/latent_decoder.h"

#include <stdexcept>
#include <string>

#include "model_zoo/families/hunyuan_video_vae.h"
#include "model_zoo/families/vae.h"
#include "model_zoo/families/wan_vae.h"

namespace ditbench {
namespace {

[[noreturn]] void NoDecoder(const ModelConfig& config) {
  throw std::invalid_argument(config.name + ": not a VaeKind this build knows");
}

}  // namespace

std::shared_ptr<LatentDecoder> MakeLatentDecoder(const ModelConfig& config) {
  switch (config.vae_kind) {
    case VaeKind::kAutoencoderKL:
      return std::make_shared<VaeDecoderImpl>(config);
    case VaeKind::kWan:
    case VaeKind::kWanResidual:
      return std::make_shared<WanVaeDecoderImpl>(config);
    case VaeKind::kHunyuanVideo:
      return std::make_shared<HunyuanVideoVaeDecoderImpl>(config);
  }
  NoDecoder(config);
}

WeightRules LatentDecoderWeightRules(const ModelConfig& config) {
  switch (config.vae_kind) {
    case VaeKind::kAutoencoderKL:
      return VaeWeightRules(config);
    case VaeKind::kWan:
    case VaeKind::kWanResidual:
      return WanVaeWeightRules(config);
    case VaeKind::kHunyuanVideo:
      return HunyuanVideoVaeWeightRules(config);
  }
  NoDecoder(config);
}

}  // namespace ditbench

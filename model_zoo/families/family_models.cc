#include "model_zoo/families/family_models.h"

#include <array>
#include <stdexcept>

#include "model_zoo/families/flux.h"
#include "model_zoo/families/hunyuan_video.h"
#include "model_zoo/families/pixart.h"
#include "model_zoo/families/sd3.h"
#include "model_zoo/families/wan.h"

namespace ditbench {

const FamilyModel& ModelOf(ModelFamily family) {
  static const std::array<FamilyModel, 5> table = {{
      {ModelFamily::kPixArt, MakePixArt, PixArtWeightRules},
      {ModelFamily::kMmDit, MakeSd3, Sd3WeightRules},
      {ModelFamily::kFlux, MakeFlux, FluxWeightRules},
      {ModelFamily::kWan, MakeWan, WanWeightRules},
      {ModelFamily::kHunyuanVideo, MakeHunyuanVideo, HunyuanVideoWeightRules},
  }};
  const auto index = static_cast<std::size_t>(family);
  if (index >= table.size() || table[index].family != family)
    throw std::logic_error("model_zoo/families/family_models.cc has no row for family " +
                           std::string(FamilyName(family)));
  return table[index];
}

}  // namespace ditbench

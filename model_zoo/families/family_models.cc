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
      {ModelFamily::kPixArt, MakePixArt, PixArtWeightRules, PixArtTensorShards},
      {ModelFamily::kMmDit, MakeSd3, Sd3WeightRules, Sd3TensorShards},
      {ModelFamily::kFlux, MakeFlux, FluxWeightRules, FluxTensorShards},
      {ModelFamily::kWan, MakeWan, WanWeightRules, nullptr},
      // HunyuanVideo's double- and single-stream blocks are Flux's (its token refiner, over
      // the text alone, stays whole on every rank).
      {ModelFamily::kHunyuanVideo, MakeHunyuanVideo, HunyuanVideoWeightRules, FluxTensorShards},
  }};
  const auto index = static_cast<std::size_t>(family);
  if (index >= table.size() || table[index].family != family)
    throw std::logic_error("model_zoo/families/family_models.cc has no row for family " +
                           std::string(FamilyName(family)));
  return table[index];
}

ShardPlacement TensorParallelPlacement(const ModelConfig& config, const RankSubgroup& tp,
                                       TensorShards& shards) {
  if (tp.size == 1) return {};
  const FamilyModel& family = ModelOf(config.family);
  if (!family.tensor_shards)
    throw std::invalid_argument("tp=" + std::to_string(tp.size) + ": " +
                                std::string(FamilyName(config.family)) +
                                " models do not split over a tensor-parallel group");
  shards = family.tensor_shards(config);
  return {&shards, tp.rank, tp.size};
}

}  // namespace ditbench

// What ditbench's LibTorch half knows of each DiT family: how to build its module and where
// its parameters come from in a diffusers checkpoint. One row per family in family_models.cc,
// in ModelFamily order (the torch-free half is model_zoo/shapes/family.h).
#pragma once

#include <memory>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/parallel/parallel_attention.h"
#include "model_zoo/weights/weight_rules.h"
#include "model_zoo/weights/weight_shard.h"

namespace ditbench {

struct FamilyModel {
  ModelFamily family;
  // The module, with its parameters allocated in the default dtype (MakeDitModel sets it).
  std::unique_ptr<DitModel> (*make)(const ModelConfig& config);
  WeightRules (*weight_rules)(const ModelConfig& config);
  // The layers tensor parallelism splits (model_zoo/weights/weight_shard.h); null for a family
  // whose module does not take a tp degree (model_zoo/shapes/family.h: tensor_parallel).
  TensorShards (*tensor_shards)(const ModelConfig& config);
};

const FamilyModel& ModelOf(ModelFamily family);

// Where this rank's weights come from under tensor parallelism: its place in the tp group
// `tp` and its family's split layers, held in `shards` (which must outlive the placement).
// The empty placement without tensor parallelism. Throws std::invalid_argument for a tp group
// of a family that has no split layers (validity refuses it before launch).
ShardPlacement TensorParallelPlacement(const ModelConfig& config, const RankSubgroup& tp,
                                       TensorShards& shards);

}  // namespace ditbench

// What ditbench's LibTorch half knows of each DiT family: how to build its module and where
// its parameters come from in a diffusers checkpoint. One row per family in family_models.cc,
// in ModelFamily order (the torch-free half is model_zoo/shapes/family.h).
#pragma once

#include <memory>

#include "model_zoo/families/dit_model.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {

struct FamilyModel {
  ModelFamily family;
  // The module, with its parameters allocated in the default dtype (MakeDitModel sets it).
  std::unique_ptr<DitModel> (*make)(const ModelConfig& config);
  WeightRules (*weight_rules)(const ModelConfig& config);
};

const FamilyModel& ModelOf(ModelFamily family);

}  // namespace ditbench

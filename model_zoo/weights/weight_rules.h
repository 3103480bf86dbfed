// Where each parameter of a model zoo module comes from in a diffusers checkpoint: our module
// path -> diffusers' module paths (concatenated in this order). A parameter's sources are its
// longest matching rule's targets with the rest of its name appended. Each family names its
// rules in its row of model_zoo/families/family_models.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

using WeightRules = std::map<std::string, std::vector<std::string>>;

// "prefix.index".
std::string At(const std::string& prefix, int index);
// One MM-DiT (double-stream) block's rules, ours at `ours`, diffusers' at `theirs`; SD3 and
// Flux share it.
void JointBlockRules(WeightRules& r, const std::string& ours, const std::string& theirs);
// One single-stream block's rules (SingleStreamBlock: the fused q, k, v and MLP input), ours at
// `ours`, diffusers' at `theirs`; Flux and HunyuanVideo share it.
void SingleBlockRules(WeightRules& r, const std::string& ours, const std::string& theirs);

WeightRules PixArtWeightRules(const ModelConfig& c);
WeightRules Sd3WeightRules(const ModelConfig& c);
WeightRules FluxWeightRules(const ModelConfig& c);

}  // namespace ditbench

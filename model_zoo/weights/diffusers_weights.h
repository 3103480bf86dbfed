// diffusers' weights in the model zoo's modules: which of diffusers' tensors make up each
// parameter, and loading a folder's *.safetensors into a module.
//
// Most parameters are one diffusers tensor under another name; fused projections are several
// concatenated along dim 0 (PixArt's and the joint blocks' q/k/v: to_q, to_k, to_v; PixArt's
// cross-attention k/v; Flux's single-block q/k/v + MLP input: to_q, to_k, to_v, proj_mlp).
// Tensors diffusers saves that a forward does not use are skipped: SD3's stored position table
// (recomputed, as diffusers computes it) and a VAE's encoder and quant_conv. A VAE folder may
// name its attention as diffusers did before 0.14 (query, key, value, proj_attn).
//
// Errors: std::invalid_argument naming the folder and the tensor: a missing tensor, one no
// parameter uses, or a shape other than the config implies.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model_zoo/shapes/diffusers_config.h"
#include "model_zoo/weights/safetensors.h"
#include "model_zoo/weights/weight_shard.h"

namespace ditbench {

// diffusers' names of the tensors that make up the model zoo's parameter `name` (as
// named_parameters() spells it), in concatenation order. Empty for a name the family lacks.
std::vector<std::string> DiffusersSources(const DiffusersModel& model, const std::string& name);
// Whether diffusers' tensor `name` is saved but unused by ditbench's forward.
bool IsUnusedDiffusersTensor(const DiffusersModel& model, const std::string& name);

// Every tensor of the folder's weight files as diffusers picks them for `variant` (one file, or
// the shards its index names: model_zoo/shapes/diffusers_files.h), on the CPU.
NamedTensors ReadDiffusersTensors(const std::filesystem::path& dir,
                                  const std::string& variant = "");

// Copies `tensors` into `module`'s parameters (cast to each parameter's dtype). `module` is the
// model zoo's module for `model` (MakeDitModel(model.config)'s module, or a VaeDecoder).
// `where` names the folder in errors. With a tensor-parallel `shard`, `module`'s split
// parameters are already shards (ShardParameters): each gets its shard of the tensors, which
// are checked against the whole layer's shape.
void LoadDiffusersWeights(torch::nn::Module& module, const DiffusersModel& model,
                          const NamedTensors& tensors, const std::string& where,
                          const ShardPlacement& shard = {});

}  // namespace ditbench

// How tensor parallelism splits a model's weights over the ranks of a tp group (Megatron-style):
// a column-parallel linear keeps its share of the output features (its weight's rows and its
// bias), a row-parallel one its share of the input features (its weight's columns), with its bias
// on the group's first rank only, so that the all-reduce of the partial outputs adds it once.
// A fused projection splits each of its parts: PixArt's q, k, v each give a rank its heads.
//
// A family names its split layers by module path, as WeightRules names its sources
// (model_zoo/weights/weight_rules.h); every other parameter is replicated. Used when seeded
// weights are cut to a rank's shard and when a diffusers folder is read: there only the shard's
// bytes of each (mapped) tensor are copied.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

struct WeightShard {
  enum class Split {
    kColumns,  // output features (weight dim 0, bias): column-parallel
    kRows,     // input features (weight dim 1; bias on the first rank): row-parallel
  };
  Split split = Split::kColumns;
  // The widths of the fused parts along the split features, in order (PixArt's qkv: hidden
  // three times); each divides by the group's size. One part: the whole layer.
  std::vector<std::int64_t> parts;
};

// Module path ("blocks.3.qkv") -> how its weight and bias split.
using TensorShards = std::map<std::string, WeightShard>;

// A rank's place in its tp group, and its family's split layers.
struct ShardPlacement {
  const TensorShards* shards = nullptr;
  int rank = 0;
  int size = 1;
  // The rule of parameter `name` ("blocks.3.qkv.weight"), or null when it is replicated.
  const WeightShard* RuleFor(const std::string& name) const;
};

// Rank `rank` of `size`'s shard of `full`, the whole parameter ("weight" or "bias", as
// `is_bias` says) of a layer split by `rule`: a new tensor holding only the shard's elements.
// REQUIRES: the parts sum to the split dimension and each divides by size.
torch::Tensor ShardOf(const torch::Tensor& full, const WeightShard& rule, bool is_bias, int rank,
                      int size);
// The shard of a fused parameter given as its parts' tensors (diffusers' to_q, to_k, to_v),
// each one part of a column-parallel layer (weight and bias alike): each part's share,
// concatenated.
torch::Tensor ShardOfParts(const std::vector<torch::Tensor>& parts, const WeightShard& rule,
                           int rank, int size);
// Whether parameter `name` is a layer's bias ("blocks.3.attn_out.bias"): ShardOf's `is_bias`.
bool IsBias(const std::string& name);
// The shape `name`'s parameter has whole, from its shard's `local` shape (the inverse of
// ShardOf's).
std::vector<std::int64_t> WholeSizes(const ShardPlacement& placement, const std::string& name,
                                     at::IntArrayRef local);

// Replaces every split parameter of `module` by its shard (ShardOf), in place: what a rank of
// the tp group keeps of the whole weights.
void ShardParameters(torch::nn::Module& module, const ShardPlacement& placement);

// PixArt's split layers: in every block the self- and cross-attention's q, k, v (column, one
// part each) and outputs (row), and the MLP's fc1 (column) and fc2 (row).
TensorShards PixArtTensorShards(const ModelConfig& c);
// SD3 and SD3.5's joint blocks: both streams' q, k, v (column) and output (row), both MLPs,
// SD3.5's second attention.
TensorShards Sd3TensorShards(const ModelConfig& c);
// Flux and HunyuanVideo: the joint blocks as SD3's, and each single-stream block's fused q, k,
// v + MLP input (column, four parts) and its output over [attention, MLP] (row, two parts).
// HunyuanVideo's token refiner is replicated.
TensorShards FluxTensorShards(const ModelConfig& c);

}  // namespace ditbench

#include "model_zoo/weights/weight_shard.h"

#include <numeric>
#include <stdexcept>

#include "model_zoo/weights/weight_rules.h"

namespace ditbench {
namespace {

// The dimension `rule` splits of a weight or bias; -1: none (a row-parallel layer's bias).
int64_t SplitDim(const WeightShard& rule, bool is_bias) {
  if (rule.split == WeightShard::Split::kColumns) return 0;
  return is_bias ? -1 : 1;
}

void CheckParts(const WeightShard& rule, int64_t whole, int size) {
  const int64_t sum = std::accumulate(rule.parts.begin(), rule.parts.end(), int64_t{0});
  TORCH_CHECK(sum == whole, "a tensor-parallel layer's parts sum to ", sum, ", its weight has ",
              whole);
  for (const int64_t part : rule.parts)
    TORCH_CHECK(part % size == 0, "a part of ", part, " features does not split over tp=", size);
}

}  // namespace

const WeightShard* ShardPlacement::RuleFor(const std::string& name) const {
  if (!shards || size == 1) return nullptr;
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return nullptr;
  const auto it = shards->find(name.substr(0, dot));
  return it == shards->end() ? nullptr : &it->second;
}

torch::Tensor ShardOf(const torch::Tensor& full, const WeightShard& rule, bool is_bias, int rank,
                      int size) {
  const int64_t dim = SplitDim(rule, is_bias);
  if (dim < 0) return rank == 0 ? full.clone() : torch::zeros_like(full);
  CheckParts(rule, full.size(dim), size);
  std::vector<torch::Tensor> pieces;
  int64_t offset = 0;
  for (const int64_t part : rule.parts) {
    const int64_t share = part / size;
    pieces.push_back(full.narrow(dim, offset + rank * share, share));
    offset += part;
  }
  return torch::cat(pieces, dim);  // a new tensor: only the shard's elements are read
}

torch::Tensor ShardOfParts(const std::vector<torch::Tensor>& parts, const WeightShard& rule,
                           int rank, int size) {
  TORCH_CHECK(rule.split == WeightShard::Split::kColumns && parts.size() == rule.parts.size(),
              "a fused parameter given in ", parts.size(),
              " tensors splits only as a column-parallel layer of as many parts");
  std::vector<torch::Tensor> pieces;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const int64_t share = parts[i].size(0) / size;
    TORCH_CHECK(share * size == parts[i].size(0), "a part of ", parts[i].size(0),
                " features does not split over tp=", size);
    pieces.push_back(parts[i].narrow(0, rank * share, share));
  }
  return torch::cat(pieces, 0);
}

bool IsBias(const std::string& name) {
  return name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
}

std::vector<std::int64_t> WholeSizes(const ShardPlacement& placement, const std::string& name,
                                     at::IntArrayRef local) {
  std::vector<std::int64_t> sizes(local.begin(), local.end());
  const WeightShard* rule = placement.RuleFor(name);
  if (!rule) return sizes;
  const int64_t dim = SplitDim(*rule, IsBias(name));
  if (dim >= 0) sizes[dim] *= placement.size;
  return sizes;
}

void ShardParameters(torch::nn::Module& module, const ShardPlacement& placement) {
  if (placement.size == 1) return;
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters(/*recurse=*/true)) {
    const WeightShard* rule = placement.RuleFor(item.key());
    if (!rule) continue;
    // set_data: the module's own parameter now holds the shard; the whole one is freed.
    item.value().set_data(
        ShardOf(item.value(), *rule, IsBias(item.key()), placement.rank, placement.size));
  }
}

namespace {

WeightShard Columns(std::vector<int64_t> parts) {
  return WeightShard{WeightShard::Split::kColumns, std::move(parts)};
}
WeightShard Rows(std::vector<int64_t> parts) {
  return WeightShard{WeightShard::Split::kRows, std::move(parts)};
}

// A joint (double-stream) block at `block`: both streams' q, k, v and MLP input columns, their
// output projections rows; SD3.5's second attention alike.
void JointBlockShards(TensorShards& s, const std::string& block, int64_t d, int64_t mlp) {
  const std::string b = block + ".";
  for (const char* qkv : {"qkv", "add_qkv", "attn2_qkv"}) s[b + qkv] = Columns({d, d, d});
  for (const char* out : {"to_out", "to_add_out", "attn2_out"}) s[b + out] = Rows({d});
  for (const char* fc1 : {"ff_fc1", "ff_context_fc1"}) s[b + fc1] = Columns({mlp});
  for (const char* fc2 : {"ff_fc2", "ff_context_fc2"}) s[b + fc2] = Rows({mlp});
}

}  // namespace

TensorShards Sd3TensorShards(const ModelConfig& c) {
  TensorShards s;
  for (int i = 0; i < c.depth; ++i)
    JointBlockShards(s, At("transformer_blocks", i), c.hidden, c.mlp_width());
  return s;
}

TensorShards FluxTensorShards(const ModelConfig& c) {
  TensorShards s = Sd3TensorShards(c);
  const int64_t d = c.hidden, mlp = c.mlp_width();
  for (int i = 0; i < c.single_blocks; ++i) {
    const std::string b = At("single_transformer_blocks", i) + ".";
    s[b + "qkv_mlp"] = Columns({d, d, d, mlp});  // q, k, v, then the MLP's input
    s[b + "proj_out"] = Rows({d, mlp});          // [attention, MLP] in
  }
  return s;
}

TensorShards PixArtTensorShards(const ModelConfig& c) {
  const int64_t d = c.hidden;
  const auto columns = [](std::vector<int64_t> parts) { return Columns(std::move(parts)); };
  const auto rows = [](int64_t width) { return Rows({width}); };
  TensorShards s;
  for (int i = 0; i < c.depth; ++i) {
    const std::string b = At("blocks", i) + ".";
    s[b + "qkv"] = columns({d, d, d});
    s[b + "attn_out"] = rows(d);
    s[b + "cross_q"] = columns({d});
    s[b + "cross_kv"] = columns({d, d});
    s[b + "cross_out"] = rows(d);
    s[b + "fc1"] = columns({int64_t(c.mlp_width())});
    s[b + "fc2"] = rows(c.mlp_width());
  }
  return s;
}

}  // namespace ditbench

#include "model_zoo/weights/diffusers_weights.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "model_zoo/families/family_models.h"
#include "model_zoo/families/latent_decoder.h"
#include "model_zoo/shapes/diffusers_files.h"
#include "model_zoo/weights/weight_rules.h"

namespace ditbench {
namespace {

const WeightRules& RulesFor(const DiffusersModel& model) {
  // Built per call site's model; cached by class and shape is not worth it (a few hundred
  // entries), but DiffusersSources is called once per parameter: keep the last one.
  thread_local std::string key;
  thread_local WeightRules rules;
  const auto& c = model.config;
  std::string now = model.class_name + "/" + std::to_string(c.depth) + "/" +
                    std::to_string(c.single_blocks) + "/" + std::to_string(c.vae_channels.size()) +
                    "/" + std::to_string(c.vae_layers);
  if (now != key) {
    if (model.kind == DiffusersKind::kVae) {
      rules = LatentDecoderWeightRules(c);
    } else {
      rules = ModelOf(c.family).weight_rules(c);
    }
    key = now;
  }
  return rules;
}

std::string Shape(at::IntArrayRef sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string Shape(const torch::Tensor& t) { return Shape(t.sizes()); }

// The VAE attention's names before diffusers 0.14 (query, key, value, proj_attn), which older
// folders still hold and diffusers converts when it loads them: the old name of `name`, or "".
std::string DeprecatedVaeName(const std::string& name) {
  static const std::pair<const char*, const char*> kRenames[] = {
      {".to_q.", ".query."}, {".to_k.", ".key."}, {".to_v.", ".value."},
      {".to_out.0.", ".proj_attn."}};
  if (name.rfind("decoder.mid_block.attentions.", 0) != 0) return "";
  for (const auto& [now, before] : kRenames) {
    const auto at = name.find(now);
    if (at != std::string::npos)
      return name.substr(0, at) + before + name.substr(at + std::string(now).size());
  }
  return "";
}

}  // namespace

std::vector<std::string> DiffusersSources(const DiffusersModel& model, const std::string& name) {
  const WeightRules& rules = RulesFor(model);
  // The longest rule that is the name or a dotted prefix of it.
  for (std::string prefix = name;;) {
    auto it = rules.find(prefix);
    if (it != rules.end()) {
      std::vector<std::string> sources;
      for (const auto& target : it->second) sources.push_back(target + name.substr(prefix.size()));
      return sources;
    }
    const auto dot = prefix.rfind('.');
    if (dot == std::string::npos) return {};
    prefix.resize(dot);
  }
}

bool IsUnusedDiffusersTensor(const DiffusersModel& model, const std::string& name) {
  if (model.kind == DiffusersKind::kVae)
    return name.rfind("encoder.", 0) == 0 || name.rfind("quant_conv.", 0) == 0;
  return model.config.cropped_position_table && name == "pos_embed.pos_embed";
}

NamedTensors ReadDiffusersTensors(const std::filesystem::path& dir, const std::string& variant) {
  NamedTensors all;
  for (const auto& file : DiffusersWeightFiles(dir, variant)) {
    for (auto& [name, tensor] : ReadSafetensors(file)) {
      if (all.count(name))
        throw std::invalid_argument(file.string() + ": tensor '" + name +
                                    "' is also in another weight file of the folder");
      all.emplace(name, std::move(tensor));
    }
  }
  return all;
}

void LoadDiffusersWeights(torch::nn::Module& module, const DiffusersModel& model,
                          const NamedTensors& tensors, const std::string& where,
                          const ShardPlacement& shard) {
  torch::NoGradGuard no_grad;
  std::set<std::string> used;
  for (auto& item : module.named_parameters(/*recurse=*/true)) {
    const auto sources = DiffusersSources(model, item.key());
    if (sources.empty())
      throw std::logic_error("no diffusers name for ditbench's parameter '" + item.key() + "'");
    // A tensor-parallel shard is checked against the whole layer's shape, then cut from the
    // (mapped) tensors: only its bytes are read.
    const WeightShard* rule = shard.RuleFor(item.key());
    const std::vector<int64_t> whole = WholeSizes(shard, item.key(), item.value().sizes());
    const at::IntArrayRef want(whole);
    std::vector<torch::Tensor> parts;
    std::string names;
    for (std::string source : sources) {
      auto it = tensors.find(source);
      if (it == tensors.end() && model.kind == DiffusersKind::kVae) {
        const std::string before = DeprecatedVaeName(source);
        if (!before.empty() && tensors.count(before)) it = tensors.find(source = before);
      }
      if (it == tensors.end())
        throw std::invalid_argument(where + ": missing tensor '" + source + "' (" +
                                    model.class_name + " with this config.json has it)");
      const auto& part = it->second;
      if (part.dim() != int64_t(want.size()) || part.sizes().slice(1) != want.slice(1))
        throw std::invalid_argument(
            where + ": tensor '" + source + "' has shape " + Shape(part) +
            ", config.json implies " +
            (sources.size() == 1 ? Shape(want) : "a part of " + Shape(want)));
      parts.push_back(part);
      used.insert(source);
      names += (names.empty() ? "" : " + ") + source;
    }
    std::vector<int64_t> joined(want.begin(), want.end());  // the parts' shape, concatenated
    if (!joined.empty()) {
      joined[0] = 0;
      for (const auto& part : parts) joined[0] += part.size(0);
    }
    if (joined != whole)
      throw std::invalid_argument(where + ": tensor '" + names + "' has shape " + Shape(joined) +
                                  ", config.json implies " + Shape(want));
    const bool is_bias = IsBias(item.key());
    torch::Tensor value;
    if (!rule)
      value = parts.size() == 1 ? parts[0] : torch::cat(parts, 0);
    else if (parts.size() == 1)
      value = ShardOf(parts[0], *rule, is_bias, shard.rank, shard.size);
    else
      value = ShardOfParts(parts, *rule, shard.rank, shard.size);
    item.value().copy_(value);
  }
  for (const auto& [name, tensor] : tensors)
    if (!used.count(name) && !IsUnusedDiffusersTensor(model, name))
      throw std::invalid_argument(where + ": unexpected tensor '" + name + "' (" +
                                  model.class_name + " with this config.json has none)");
}

}  // namespace ditbench

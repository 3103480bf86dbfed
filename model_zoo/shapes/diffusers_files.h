// Which files of a diffusers model folder hold its weights, by the rules diffusers'
// `from_pretrained` follows (so that a folder from the hub loads as it does there). Torch-free:
// the sweep checks a folder before launch, the worker loads what this names.
//
// With variant V (empty: none; diffusers inserts it before the last extension):
//   1. the sharded index `diffusion_pytorch_model.safetensors.index[.V].json`, when present: the
//      files its `weight_map` names, each once, in name order;
//   2. else the single file `diffusion_pytorch_model[.V].safetensors`.
// Any other *.safetensors beside them (another variant, a stray copy) is not read.
//
// Errors: std::invalid_argument, one line naming the folder, the files looked for and, when
// neither exists, the weight files the folder does have (with the variant that would load them).
// The index is untrusted input: a weight_map value must be a plain file name in the folder
// ending in .safetensors, and every file it names must exist.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ditbench {

// Whether `variant` can name a weights variant: 1 to 32 characters of [A-Za-z0-9_-].
bool IsValidWeightsVariant(const std::string& variant);

std::vector<std::filesystem::path> DiffusersWeightFiles(const std::filesystem::path& dir,
                                                        const std::string& variant = "");

}  // namespace ditbench

// A diffusers model folder's config.json as a ModelConfig: which model zoo module computes what
// diffusers' class computes with that configuration. Torch-free.
//
// Classes understood: PixArtTransformer2DModel, SD3Transformer2DModel, FluxTransformer2DModel,
// WanTransformer3DModel, HunyuanVideoTransformer3DModel (transformers) and AutoencoderKL (its decoder). Every key diffusers' class takes is read;
// values ditbench does not compute (a different norm, activation, SD3.5's dual attention, Flux's
// patch size other than 1, ...) are refused, and so are keys the class does not take, since
// ditbench cannot tell what they would change. Keys starting with '_' are metadata.
//
// Errors: std::invalid_argument, one line: "<dir>/config.json: key 'num_layers': <what>, expected
// <what>".
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

enum class DiffusersKind { kTransformer, kVae };

struct DiffusersModel {
  DiffusersKind kind = DiffusersKind::kTransformer;
  std::string class_name;  // diffusers' `_class_name`
  // family, depth, width, heads, channels, text and pooled widths, and the diffusers-specific
  // fields (positions, micro-conditions, qk norm); for a VAE the vae_* fields, in_channels (the
  // latent channels) and vae_downsample. text_tokens is not in config.json: the caller sets it
  // from the inputs.
  ModelConfig config;
};

// Reads `dir`/config.json.
DiffusersModel ReadDiffusersConfig(const std::filesystem::path& dir);
// The same from parsed JSON; `file` names it in errors.
DiffusersModel DiffusersConfigFromJson(const nlohmann::json& json, const std::string& file);

// The model a trial computes when it names a weights folder (`model: {preset: P, weights: DIR}`):
// `model` (P with its overrides) must have the architecture `folder` describes (family, blocks,
// widths, channels, text and pooled widths, guidance, rotary axes, qk norm, dual-attention blocks, micro-conditions);
// the folder's position-table settings replace the preset's. Throws std::invalid_argument
// naming `file`, diffusers' key and both values for the first field that differs.
ModelConfig ModelWithDiffusersWeights(const ModelConfig& model, const DiffusersModel& folder,
                                      const std::string& file);
// The same for a VAE folder (`vae_weights: DIR`): an AutoencoderKL with `model`'s latent channels
// and downsampling; its widths, depth, scaling and shift replace the preset's.
ModelConfig ModelWithDiffusersVae(const ModelConfig& model, const DiffusersModel& folder,
                                  const std::string& file);

}  // namespace ditbench

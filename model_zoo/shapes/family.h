// What ditbench knows about a DiT family without LibTorch: its presets, how a diffusers
// config.json of its class reads, the rules a resolved model of it must meet, and its analytic
// cost. One row per family in model_zoo/shapes/family.cc (the LibTorch half, the module and its
// weight names, is model_zoo/families/family_models.h).
//
// Adding a family: a ModelFamily value (model_zoo/shapes/model_config.h), its row here and in
// family_models.cc, its own files (model_zoo/shapes/<family>_shapes.{h,cc} and
// model_zoo/families/<family>.{h,cc}), and their lines in model_zoo/CMakeLists.txt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model_zoo/shapes/model_config.h"

namespace ditbench {

class ConfigKeys;  // model_zoo/shapes/config_keys.h

struct FamilyShapes {
  ModelFamily family;
  std::string_view name;             // as FamilyName prints it
  std::string_view diffusers_class;  // diffusers' `_class_name` of its transformer
  std::string_view text_dim_key;     // the key of that class's config.json giving text_dim
  // The family's presets, in the order `plan` and errors list them.
  std::vector<ModelConfig> (*presets)();
  // The ModelConfig a config.json of `diffusers_class` describes; reads every key the class
  // takes through `keys`, failing (ConfigKeys::Fail) on values ditbench does not compute.
  ModelConfig (*from_diffusers)(ConfigKeys& keys);
  // What is wrong with a resolved model of this family beyond the common rules (say, a rotary
  // split that does not match the head dimension); empty when nothing is.
  std::string (*problem)(const ModelConfig& model);
  // Analytic FLOPs of one transformer forward of one sample over `image_tokens` tokens.
  double (*forward_flops)(const ModelConfig& model, double image_tokens);
  // Exact parameter count of the model zoo's module.
  std::int64_t (*parameter_count)(const ModelConfig& model);
  // Whether model_zoo/families/family_models.cc has its LibTorch module: without one its trials
  // are planned (shapes, cost, memory) but refused as unsupported before launch.
  bool has_module;
  // Whether its module splits heads and MLP over a `tp` degree (model_zoo/parallel/
  // tensor_parallel.h): without it a trial with tp above 1 is refused before launch.
  bool tensor_parallel;
};

// Whether `family`'s module takes a tp degree, and those that do ("pixart, sd3"), for errors.
bool TensorParallelFamily(ModelFamily family);
std::string TensorParallelFamilies();

// The `problem` of a family without single-stream blocks: a model that sets single_blocks.
std::string NoSingleStreamBlocks(const ModelConfig& model);

// Every family, in ModelFamily order.
const std::vector<FamilyShapes>& FamilyShapesTable();
const FamilyShapes& ShapesOf(ModelFamily family);

// Multiply-adds of a [m x k] by [k x n] product, as FLOPs.
inline double Matmul(double m, double k, double n) { return 2.0 * m * k * n; }
// Parameters of a linear layer with bias.
inline std::int64_t LinearParameters(std::int64_t in, std::int64_t out) { return in * out + out; }
// FLOPs of the conditioning embedders' first layer from 256 sinusoidal timestep features.
inline constexpr double kTimestepFeatures = 256;

}  // namespace ditbench

// HunyuanVideo's shapes without LibTorch: presets, the config.json of diffusers'
// HunyuanVideoTransformer3DModel, and analytic cost (model_zoo/shapes/family.h). Its blocks are
// Flux's (model_zoo/shapes/joint_shapes.h) after a token refiner on the text. Its LibTorch module
// is model_zoo/families/hunyuan_video.h.
#pragma once

#include "model_zoo/shapes/family.h"

namespace ditbench {

FamilyShapes HunyuanVideoShapes();

// The token refiner's MLP ratio: diffusers builds HunyuanVideoTokenRefiner with its default
// whatever the transformer's mlp_ratio (which sets the double- and single-stream blocks').
inline constexpr int kHunyuanRefinerMlpRatio = 4;

}  // namespace ditbench

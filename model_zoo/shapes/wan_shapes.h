// Wan's shapes without LibTorch (Wan 2.1 text-to-video, Wan 2.2 TI2V-5B): presets, the
// config.json of diffusers' WanTransformer3DModel, and analytic cost (model_zoo/shapes/family.h).
// Its LibTorch module is model_zoo/families/wan.h (Wan 2.2 TI2V-5B's per-token timesteps are not
// in it: the 5B preset runs with one timestep per sample).
#pragma once

#include "model_zoo/shapes/family.h"

namespace ditbench {

FamilyShapes WanShapes();

}  // namespace ditbench

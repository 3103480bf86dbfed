// Wan's shapes without LibTorch (Wan 2.1 text-to-video, Wan 2.2 TI2V-5B): presets, the
// config.json of diffusers' WanTransformer3DModel, and analytic cost (model_zoo/shapes/family.h).
// This build has no LibTorch module for it yet: its trials plan but do not run.
#pragma once

#include "model_zoo/shapes/family.h"

namespace ditbench {

FamilyShapes WanShapes();

}  // namespace ditbench

// PixArt's shapes without LibTorch: presets, its diffusers class's config.json, and analytic
// cost (model_zoo/shapes/family.h). The module is model_zoo/families/pixart.h.
#pragma once

#include "model_zoo/shapes/family.h"

namespace ditbench {

FamilyShapes PixArtShapes();

}  // namespace ditbench

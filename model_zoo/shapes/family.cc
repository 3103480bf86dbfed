#include "model_zoo/shapes/family.h"

#include <stdexcept>

#include "model_zoo/shapes/flux_shapes.h"
#include "model_zoo/shapes/hunyuan_video_shapes.h"
#include "model_zoo/shapes/pixart_shapes.h"
#include "model_zoo/shapes/sd3_shapes.h"
#include "model_zoo/shapes/wan_shapes.h"

namespace ditbench {

std::string NoSingleStreamBlocks(const ModelConfig& model) {
  return model.single_blocks != 0 ? "single_blocks applies to Flux models only" : "";
}

const std::vector<FamilyShapes>& FamilyShapesTable() {
  static const std::vector<FamilyShapes> table = [] {
    std::vector<FamilyShapes> rows = {PixArtShapes(), SD3Shapes(), FluxShapes(),
                                         WanShapes(), HunyuanVideoShapes()};
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].family != static_cast<ModelFamily>(i))
        throw std::logic_error("model_zoo/shapes/family.cc: rows out of ModelFamily order");
    return rows;
  }();
  return table;
}

const FamilyShapes& ShapesOf(ModelFamily family) {
  return FamilyShapesTable().at(static_cast<std::size_t>(family));
}

bool TensorParallelFamily(ModelFamily family) { return ShapesOf(family).tensor_parallel; }

std::string TensorParallelFamilies() {
  std::string names;
  for (const FamilyShapes& f : FamilyShapesTable())
    if (f.tensor_parallel) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

}  // namespace ditbench

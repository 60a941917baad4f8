// What a pipeline rank knows beyond its own stages.
#pragma once

#include <optional>
#include <vector>

#include "seam/model.h"
#include "seam/pipeline.h"

namespace seam::bind {

// The nearest stages (no-ops skipped) before the rank's first layer and from
// its last layer on, as the shared declaration function declares them.
struct Neighbours {
  std::optional<StageRef> before;
  std::optional<StageRef> after;
};
Neighbours NeighboursOf(const Model& m, LayerRange range);

// A rank whose built stages disagree with the declaration function is an
// error naming the first differing fact.
Status CheckBuiltStages(const Model& m, LayerRange range, const std::vector<std::vector<StageDecl>>& built,
                        int pp_rank);

}  // namespace seam::bind

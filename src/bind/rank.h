// What a pipeline rank knows beyond its own stages.
#pragma once

#include <optional>
#include <span>
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

// A rank's own stages with its neighbours on either side, found in one walk
// over the declarations: the layers before the rank's, its own, then on
// until a stage after it does something.
struct RankStages {
  std::vector<StageRef> around;  // the neighbour before, the own stages, the neighbour after
  Neighbours neighbours;
  std::span<const StageRef> own() const {
    const size_t begin = neighbours.before ? 1 : 0;
    const size_t end = around.size() - (neighbours.after ? 1 : 0);
    return std::span<const StageRef>(around).subspan(begin, end - begin);
  }
};
RankStages StagesAround(const Model& m, LayerRange range);

// A rank whose built stages disagree with the declaration function is an
// error naming the first differing fact.
Status CheckBuiltStages(const Model& m, LayerRange range, const std::vector<std::vector<StageDecl>>& built,
                        int pp_rank);

}  // namespace seam::bind

// seam/pipeline.h — which layers each pipeline rank holds.
//
// `pp` ranks split the layers evenly with the remainder on the last ranks
// (as SGLang's get_pp_indices does); `pp_split` gives the counts instead.
//
//   Expected<std::vector<LayerRange>> r = SplitLayers({.pp = 2, .pp_split = {1, 3}}, 4);
//   // r: {0, 1}, {1, 4}
#pragma once

#include <vector>

#include "seam/topology.h"

namespace seam {

struct LayerRange {
  int first = 0;  // inclusive
  int last = 0;   // exclusive
  bool operator==(const LayerRange&) const = default;
};

// The layers of every pipeline rank of a model with `layers` layers.
Expected<std::vector<LayerRange>> SplitLayers(const ParallelConfig& cfg, int layers);

}  // namespace seam

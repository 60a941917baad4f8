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

// Every way to cut `layers` layers into 1..max_ranks pipeline ranks of at
// least one layer each, as layer counts per rank: every subset of the
// boundaries between layers, the uncut stack ({layers}) first.
std::vector<std::vector<int>> LayerSplits(int layers, int max_ranks);

}  // namespace seam

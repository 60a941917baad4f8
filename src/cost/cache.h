// What an attention or mixer stage keeps per token and per sequence on one
// rank: the memory model counts it, the work model reads it every decode step.
#pragma once

#include "seam/model.h"
#include "seam/topology.h"

namespace seam {

// Bytes per token and per sequence an attention or mixer stage caches on
// one rank.
struct CacheRow {
  double per_token = 0;
  double per_sequence = 0;
};

CacheRow CacheOf(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, double kv_bytes);

}  // namespace seam

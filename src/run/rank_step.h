// One rank's share of one step of a run, keeping what it holds of each
// request in `cache` for the steps after it (a plain run's step is its
// only one: seam/runtime/exec.h's RunRankOf).
#pragma once

#include "run/rank_cache.h"
#include "seam/runtime/exec.h"

namespace seam::exec {

RankOutput RunRankStep(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                       const RunOptions& options, int rank, Comm& comm, RankCache& cache);

}  // namespace seam::exec

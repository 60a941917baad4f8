// The pieces of a trace check (seam/runtime/trace_check.h) shared between
// its files.
#pragma once

#include <vector>

#include "seam/runtime/trace_check.h"

namespace seam {

// Why a batch of `given` rows counts does not fit the configuration: one
// per DP group, or under context parallelism one per CP rank of each.
std::string BatchShapeError(size_t given, const ParallelConfig& cfg);

// The first `most` planned collectives of global rank `rank` (of the
// configuration, not of a replica), at rows per DP group (per shard under
// context parallelism) `group_rows`.
std::vector<PlannedCollective> PlannedFor(const Model& m, const Pipeline& plans, const std::vector<StageRef>& stages,
                                          std::span<const int> group_rows, int rank, size_t most = SIZE_MAX);

// The rank's trace aligned with one pass of its planned collectives, and
// how many of the trace's events the pass took (the rest: later passes).
struct Aligned {
  RankCheck check;
  size_t consumed = 0;
};
Aligned AlignRank(const ParallelConfig& cfg, const std::vector<PlannedCollective>& plan, const RankTrace& trace);

// The divergence of a call past the plan's last collective that no later
// pass explains.
TraceDivergence PastThePlan(const TraceEvent& e, int planned);

// Whether the aligner passes the call over as the engine's own bookkeeping
// (an integer dtype, or a float call smaller than one of `smallest_row`'s rows).
bool IsBookkeeping(const TraceEvent& e, int64_t smallest_row);

}  // namespace seam

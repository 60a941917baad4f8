// The calls a rank's plan makes on its Comm at a batch, one for each
// collective step, with the shapes the interpreter passes. The record
// backend tallies them on a Comm that moves nothing (no tensor is made, so
// a plan is counted at any size); a trace check compares them with what an
// engine's ranks called.
//
// Only the all-to-all's sizes depend on values (which experts each token
// takes); here each token takes experts spread evenly: the t-th row of the
// attention rows takes experts t*k .. t*k+k-1 (mod the expert count).
#pragma once

#include <cstdint>
#include <vector>

#include "run/interpreter.h"
#include "seam/plan_walk.h"

namespace seam::exec {

struct PlannedCall {
  const Step* step = nullptr;  // the plan's step it implements
  StepPlace where;
  CommCall call;  // what the rank passes in, as a trace records it (its parts: each member's rows)
  bool operator==(const PlannedCall&) const = default;
};

// Every call of `plan`'s line for the batch's variant, in order, on the
// rank; only the first `most` of them where fewer are wanted.
std::vector<PlannedCall> PlannedCalls(const RunContext& ctx, const Plan& plan, int rank, size_t most = SIZE_MAX);

}  // namespace seam::exec

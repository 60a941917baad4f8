// seam/verify.h — the invariants of a bound plan (DESIGN.md §5), checked by
// running its steps symbolically: every step's rows, owed sums and groups are
// replayed from the stack entry, and each disagreement is reported with the
// stage, the side, the step and the invariant it breaks.
//
//   std::vector<Violation> v = Verify(plan);
//   if (!v.empty()) std::cerr << Describe(v);
#pragma once

#include <string>
#include <vector>

#include "seam/plan.h"

namespace seam {

enum class Invariant {
  kResidualRowsAgree = 1,  // both sides of every boundary agree on the residual's rows
  kSumOnce = 2,            // every owed sum completes once, over its group, before any read
  kHandoff = 3,            // a handoff carries the attention rows with all sums complete
  kAwayFromCut = 4,        // stages away from a cut bind as they do uncut
  kCutRejects = 5,         // a cut rejects only what the uncut stack rejects
  kStageRows = 6,          // each stage receives the rows it declared
  kGroupFitsRows = 7,      // collectives name the right group for their rows
};

struct Violation {
  int pp_rank = 0;
  Variant variant = Variant::kOrdinary;
  int stage = -1;        // model-wide stage index; -1 for the final norm
  std::string side;      // "receive", "arrival", "entry", "compute", "exit", "final", "send"
  int step = -1;         // index within the side; -1 for a boundary fact
  Invariant invariant = Invariant::kResidualRowsAgree;
  std::string message;
};

// The invariants of one pipeline rank's plan (1, 2, 3 for its own receive
// and send, 6, 7).
std::vector<Violation> Verify(const Plan& plan);

// Every rank's invariants, and that each handoff's sends and receives pair
// up slice for slice (invariant 3).
std::vector<Violation> VerifyPipeline(const Pipeline& ranks);

// Invariant 4: every stage away from a cut binds exactly as it does in the
// uncut plan. Near a cut a stage may differ: on the sending rank from its
// last FFN before the cut (or its first stage), on the receiving rank up to
// and including its first FFN (or its last stage); an FFN fixes where the
// residual is, so everything past it binds as uncut.
std::vector<Violation> CompareWithUncut(const Plan& uncut, const Pipeline& ranks);

std::string Describe(const Violation& v);
std::string Describe(const std::vector<Violation>& violations);  // one per line

}  // namespace seam

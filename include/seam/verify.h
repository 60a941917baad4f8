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
  Variant variant = Variant::kOrdinary;
  int stage = -1;        // model-wide stage index; -1 for the final norm
  std::string side;      // "arrival", "entry", "compute", "exit", "final"
  int step = -1;         // index within the side; -1 for a boundary fact
  Invariant invariant = Invariant::kResidualRowsAgree;
  std::string message;
};

std::vector<Violation> Verify(const Plan& plan);

std::string Describe(const Violation& v);
std::string Describe(const std::vector<Violation>& violations);  // one per line

}  // namespace seam

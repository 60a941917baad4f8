// The verifier's checks beyond the symbolic replay, one file each.
#pragma once

#include <vector>

#include "seam/verify.h"

namespace seam::verify {

// Invariant 8: the plan agrees with itself, its model and its configuration:
// a valid header, the batch variants the configuration asks for, contiguous
// stages over the header's layers, the compute each declaration requires,
// every step's legal operand, group, rows and sums, and every width.
// False when the header is too broken to replay the plan against.
bool CheckStructure(const Plan& plan, std::vector<Violation>& out);

// Invariant 10: each line moves exactly the bytes its stages need, counted
// seam by seam from the declarations and the configuration alone.
void CheckBytes(const Plan& plan, const LinePlan& line, std::vector<Violation>& out);

}  // namespace seam::verify

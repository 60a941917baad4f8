// A rank's plan on a backend that moves no data: every collective and
// transfer of the plan at its shape, with no weights and no kernels.
//
// Only the all-to-all's sizes depend on values (which experts each token
// takes); here each token takes experts spread evenly: the t-th row of the
// attention rows takes experts t*k .. t*k+k-1 (mod the expert count).
#pragma once

#include "run/interpreter.h"

namespace seam::exec {

void RecordRank(const RunContext& ctx, const Plan& plan, Comm& comm);

}  // namespace seam::exec

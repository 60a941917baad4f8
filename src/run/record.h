// A rank's plan on a backend that moves no data: every collective and
// transfer of the plan at its shape (run/calls.h), with no weights and no
// kernels.
#pragma once

#include "run/interpreter.h"

namespace seam::exec {

void RecordRank(const RunContext& ctx, const Plan& plan, Comm& comm);

}  // namespace seam::exec

#include "run/record.h"

#include "run/calls.h"

namespace seam::exec {

void RecordRank(const RunContext& ctx, const Plan& plan, Comm& comm) {
  for (const PlannedCall& c : PlannedCalls(ctx, plan, comm.rank())) comm.Tally(c.call);
}

}  // namespace seam::exec

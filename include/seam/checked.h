// seam/checked.h — binding, then verifying what was bound.
//
// The binder does not call its verifier: the verifier sits beside it and
// must be able to catch a wrong binder. Callers that want both (the CLI, the
// executor's matrix, the tests) bind and then verify; these do the two in
// one call and turn any violation into a failed check.
//
//   Expected<Pipeline> plans = BindPipelineChecked(model, {.tp = 4, .pp = 2});
#pragma once

#include "seam/bind.h"

namespace seam {

Expected<Plan> BindChecked(const Model& model, const ParallelConfig& cfg, int pp_rank = 0,
                           const BindOptions& options = {});
Expected<Pipeline> BindPipelineChecked(const Model& model, const ParallelConfig& cfg, const BindOptions& options = {});

}  // namespace seam

// seam/bind.h — binding a model to a parallel configuration.
//
// Bind is a pure function: one pass over the pipeline rank's stages, carrying
// the arrival (value rows, owed sum, update kind) and the residual's rows. For
// every stage and batch variant it selects the entry steps and the exit steps
// and records them in an immutable Plan. What it cannot serve is rejected
// with an error that names the stage, the rule and what to do instead.
//
//   Expected<Plan> plan = Bind(model, {.tp = 4, .attn_dp = 2, .dense_tp = 1,
//                                      .moe = MoeMode::kA2a});
//   if (!plan) std::cerr << plan.error().message << "\n";
#pragma once

#include "seam/model.h"
#include "seam/plan.h"

namespace seam {

struct BindOptions {
#ifdef NDEBUG
  bool verify = false;  // release builds trust the binder; tests turn this on
#else
  bool verify = true;   // debug builds check every plan they bind
#endif
};

Expected<Plan> Bind(const Model& model, const ParallelConfig& cfg, int pp_rank = 0,
                    const BindOptions& options = {});

}  // namespace seam

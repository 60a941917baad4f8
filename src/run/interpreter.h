// The plan interpreter: one rank's line of a plan, step by step.
#pragma once

#include <optional>
#include <vector>

#include "numerics/stages.h"
#include "seam/batch.h"
#include "seam/comm.h"
#include "seam/plan.h"

namespace seam::exec {

struct RunContext {
  const Model& model;
  const Weights& weights;
  const BatchLayout& layout;
  Numerics numerics;
  Variant variant = Variant::kOrdinary;
  std::vector<StageRef> stages;  // every stage of the model, by index
};

// Runs the rank's line of `plan`. On the last pipeline rank, attention-TP
// rank 0 of each DP group returns that group's final hidden rows.
std::optional<Tensor> RunRank(const RunContext& ctx, const Plan& plan, Comm& comm);

}  // namespace seam::exec

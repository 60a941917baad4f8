// The plan interpreter: one rank's line of a plan, step by step.
#pragma once

#include <optional>
#include <vector>

#include "numerics/stages.h"
#include "run/rank_cache.h"
#include "seam/plan.h"
#include "seam/runtime/batch.h"
#include "seam/runtime/comm.h"

namespace seam::exec {

struct RunContext {
  const Model& model;
  const Weights& weights;
  const BatchLayout& layout;
  Numerics numerics;
  Variant variant = Variant::kOrdinary;
  std::vector<StageRef> stages;  // every stage of the model, by index
  RankCache& cache;              // what the rank keeps of each request between steps
};

// What attention-TP rank 0 of each DP group returns on the last pipeline
// rank: its group's final hidden rows and, where the plan has an LM head,
// their logits over the whole vocabulary.
struct FinalRows {
  Tensor hidden;
  std::optional<Tensor> logits;
};

// The vocabulary split over the LM head's group: member i of n holds columns
// [i * chunk, (i + 1) * chunk) with chunk = ceil(vocab / n), cut to the
// vocabulary; the last shares are padded (as engines pad the vocabulary) so
// every member's is `chunk` wide.
RowSpan VocabColumns(int vocab, int members, int member);

// Runs the rank's line of `plan`.
std::optional<FinalRows> RunRank(const RunContext& ctx, const Plan& plan, Comm& comm);

}  // namespace seam::exec

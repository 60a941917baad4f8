// seam/bind.h — binding a model to a parallel configuration.
//
// Bind is a pure function: one pass over a pipeline rank's stages, carrying
// the arrival (value rows, owed sum, update kind) and the residual's rows. For
// every stage and batch variant it selects the entry steps and the exit steps
// and records them in an immutable Plan; a later rank starts by receiving
// from the previous one, every rank but the last ends by sending to the next.
// What it cannot serve is rejected with an error that names the stage, the
// rule and what to do instead.
//
//   Expected<Plan> plan = Bind(model, {.tp = 4, .attn_dp = 2, .dense_tp = 1,
//                                      .moe = MoeMode::kA2a});
//   Expected<Pipeline> all = BindPipeline(model, {.tp = 4, .pp = 2, .pp_split = {1, 3}});
#pragma once

#include <optional>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"

namespace seam {

// Bind returns the plan it binds; to verify it too, see seam/checked.h.
struct BindOptions {
  // Complete a sum, add and norm as one fused step where nothing moves in
  // between; false binds the three as separate steps (the same bits).
  bool fuse = true;
  // The dtypes activations cross the wire in (the plan's bytes; the binder's
  // steps do not depend on them).
  WireDtypes wire;
  // The stages the rank actually built, one list per layer it holds; checked
  // against the model's declaration function when given.
  std::optional<std::vector<std::vector<StageDecl>>> built;
  // The LM head's width where the model has no sizes (the stages a plan
  // declares, rebound); otherwise the model's vocabulary.
  std::optional<int> vocab;
};

// The plan of one pipeline rank; it learns its neighbours from the model's
// declaration function.
Expected<Plan> Bind(const Model& model, const ParallelConfig& cfg, int pp_rank = 0, const BindOptions& options = {});

// What Bind refuses this rank for, without binding it: Bind fails exactly
// when this does, with the same error (binding itself refuses nothing once
// the rank's layers, sharding and stages around it are accepted).
Status CheckRank(const Model& model, const ParallelConfig& cfg, int pp_rank = 0, const BindOptions& options = {});

// What a receiving rank's binding reads of the stage before its layers (its
// sender's last): whether that stage writes the residual when a handoff
// follows it, so the handoff carries the residual alone. The receiver asks
// it of the stage at the cut; the sender's exit writes exactly then, by the
// exit rules of its kind (a handoff whose two sides disagree fails
// VerifyPipeline). Nothing else of that stage enters the binding; it can
// still refuse the rank, which CheckRank tells.
bool WritesAtHandoff(const StageDecl& sender_last, const ParallelConfig& cfg);

// Every rank's plan, in rank order.
Expected<Pipeline> BindPipeline(const Model& model, const ParallelConfig& cfg, const BindOptions& options = {});

}  // namespace seam

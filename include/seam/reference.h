// seam/reference.h — the unsharded model, and how every run rounds and sums.
//
// The reference runs a model and its weights on one rank, one token at a
// time, with the same numerics as a sharded run: the same storage dtype and
// the same canonical K-blocks for every row-parallel product. What a run of
// bound plans gives is compared with it bit for bit.
//
//   Expected<Tensor> ref = RunReference(model, weights, batch, NumericsOf(cfg, Dtype::kBf16));
#pragma once

#include <vector>

#include "seam/batch.h"
#include "seam/model.h"
#include "seam/tensor.h"
#include "seam/topology.h"
#include "seam/weights.h"

namespace seam {

// How a run rounds and sums: its storage dtype, the order a MoE sums its
// experts in (per K-block for TP-MoE, per expert for a2a), and the number
// of canonical K-blocks every row-parallel product is split into
// (CanonicalKBlocks: 8, or tp where that is larger).
struct RunNumerics {
  Dtype dtype = Dtype::kF32;
  MoeMode moe_order = MoeMode::kTp;
  int k_blocks = kDefaultKBlocks;
};
RunNumerics NumericsOf(const ParallelConfig& cfg, Dtype dtype);

// The final hidden states of the unsharded model, one token at a time.
// `routes`, when given, receives per token (in batch order) the experts
// every MoE stage chose for it, stage after stage.
Expected<Tensor> RunReference(const Model& m, const Weights& w, const Batch& b, const RunNumerics& n,
                              std::vector<std::vector<int>>* routes = nullptr);

}  // namespace seam

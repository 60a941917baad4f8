// seam/runtime/reference.h — the unsharded model, and how every run rounds and sums.
//
// The reference runs a model and its weights on one rank, one token at a
// time, with the same numerics as a sharded run: the same storage dtype and
// the same canonical K-blocks for every row-parallel product. What a run of
// bound plans gives is compared with it bit for bit.
//
//   Expected<Tensor> ref = RunReference(model, weights, batch, NumericsOf(cfg, Dtype::kBf16));
#pragma once

#include <vector>

#include "seam/model.h"
#include "seam/runtime/batch.h"
#include "seam/runtime/tensor.h"
#include "seam/runtime/weights.h"
#include "seam/topology.h"

namespace seam {

// The order a MoE's output is summed in: per canonical K-block, the routed
// experts' products in routing order (how TP-MoE ranks, each holding a
// K-slice of every expert, sum it), or expert by expert (how an a2a combine,
// with every expert whole on its owner, sums it).
enum class MoeSumOrder { kPerKBlock, kPerExpert };

// How a run rounds and sums: its storage dtype, its MoE's sum order, and the
// number of canonical K-blocks every row-parallel product is split into
// (CanonicalKBlocks: 8, or tp where that is larger).
struct RunNumerics {
  Dtype dtype = Dtype::kF32;
  MoeSumOrder moe_order = MoeSumOrder::kPerKBlock;
  int k_blocks = kDefaultKBlocks;
};
RunNumerics NumericsOf(const ParallelConfig& cfg, Dtype dtype);

// The final hidden states of the unsharded model, one token at a time.
// `routes`, when given, receives per token (in batch order) the experts
// every MoE stage chose for it, stage after stage.
Expected<Tensor> RunReference(const Model& m, const Weights& w, const Batch& b, const RunNumerics& n,
                              std::vector<std::vector<int>>* routes = nullptr);

// The unsharded LM head: each row of the final hidden states times the
// whole vocabulary's matrix, [tokens, vocabulary], rounded to the dtype.
Tensor ReferenceLogits(const Tensor& hidden, const Weights& w, Dtype dtype);

}  // namespace seam

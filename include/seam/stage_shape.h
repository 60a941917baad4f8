// seam/stage_shape.h — what a stage computes on and owes, per kind and
// configuration, stated once.
//
// A stage reads its normed input on some rows and its output lands on the
// same rows; where its weights are split over a group, its output is a
// partial sum over that group. The binder's contracts, the verifier's
// replay and the executor's kernels all read this one table; the binder
// adds its variant rules on top (an input-scattered attention takes its
// slice and gathers its projection itself).
//
//   const StageShape s = ShapeOf(decl, cfg);   // s.rows, s.sum, s.shard
#pragma once

#include <optional>

#include "seam/layout.h"
#include "seam/model.h"
#include "seam/stage.h"
#include "seam/topology.h"

namespace seam {

struct StageShape {
  Rows rows;                   // the rows it reads its input on and its output lands on
  Owed sum = Owed::kNothing;   // the group its output is a partial sum over (Owe() says whether
                               // that group is big enough to owe anything)
  std::optional<Group> shard;  // the group its weights are split over; none: replicated
};

// The shape of a stage that computes (every kind but a no-op).
StageShape ShapeOf(const StageDecl& d, const ParallelConfig& cfg);

// The embedding's: vocabulary-parallel over the TP group, a partial sum on
// every row, where attention is TP (SGLang's VocabParallelEmbedding); whole
// on every rank, looked up on its attention rows, under attention DP or
// context parallelism
// (SGLang turns the split off there).
StageShape EmbeddingShape(const ParallelConfig& cfg);

// The LM head's: its vocabulary split over `shard`, computed on `rows`. The
// whole TP group on every row where attention is TP, and under attention DP
// after gathering every DP group's rows (SGLang's dp_gather); with
// dp_lm_head, each DP group's attention-TP ranks on its own rows.
StageShape LmHeadShape(const ParallelConfig& cfg);

// The elements per token one rank's attention keeps in its cache and, under
// context parallelism, gathers from its CP peers: the K and V of the KV
// heads it holds (one each, replicated, once attention TP exceeds them), or
// MLA's latent and rotary key part, whole on every rank. A stack without
// dims (bound for its boundaries alone) keeps K and V as wide as the hidden size.
int CacheWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg);

// Decode context parallelism: the elements per token of one rank's query
// heads (each qk wide: MLA's nope and rope parts) that its DCP peers
// gather, and of the partial outputs it receives from each peer for them,
// a maximum, a sum and v_dim weighted values a head. Without dims a rank's
// heads are as wide as its share of the hidden size, one head.
int QueryWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg);
int PartialWidth(const StageDecl& d, const ModelDims* dims, int hidden, const ParallelConfig& cfg);

}  // namespace seam

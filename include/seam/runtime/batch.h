// seam/runtime/batch.h — a batch of requests, and where its rows sit on each rank.
//
// Requests go to attention-DP groups round robin (request i to group
// i % attn_dp); the ranks order rows DP-group-major: group 0's requests in
// order, then group 1's. The attention rows of a group are its requests'
// tokens; a rank's slice is its attn_tp_rank-th chunk of ceil(rows/attn_tp)
// rows, the last chunks shorter or empty. A group or a slice may hold no
// rows: every rank still runs every step.
//
//   Batch b = RandomBatch(/*tokens=*/12, /*requests=*/3, /*vocab=*/256, /*seed=*/7);
//   BatchLayout l = LayoutOf(b, cfg.attn_dp);
//   RowSpan s = SpanOf(l, cfg, Rows::Slice(cfg), CoordOf(cfg, rank));
#pragma once

#include <cstdint>
#include <vector>

#include "seam/layout.h"

namespace seam {

struct Batch {
  std::vector<std::vector<int>> requests;  // token ids; positions count from 0
  int tokens() const;
};

// `tokens` tokens split at random into `requests` requests of at least one
// token each, ids uniform below `vocab`; deterministic in `seed`.
Expected<Batch> RandomBatch(int tokens, int requests, int vocab, uint64_t seed);

struct BatchLayout {
  int tokens = 0;
  std::vector<int> group_offset;  // per DP group: its first row
  std::vector<int> group_rows;    // per DP group: its row count
  // Per row, in DP-major order:
  std::vector<int> token_ids;
  std::vector<int> positions;
  std::vector<int> request_start;  // the row of its request's first token
  std::vector<int> batch_index;    // its row in the batch's own order
};
BatchLayout LayoutOf(const Batch& b, int attn_dp);

// The DP-major rows a rank holds on a layout.
RowSpan SpanOf(const BatchLayout& l, const ParallelConfig& cfg, Rows rows, const RankCoord& c);

}  // namespace seam

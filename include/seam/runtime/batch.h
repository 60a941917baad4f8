// seam/runtime/batch.h — a batch of requests, and where its rows sit on each rank.
//
// Requests go to attention-DP groups round robin (request i to group
// i % attn_dp) unless the batch places them (a step of a generation:
// seam/runtime/generate.h); the ranks order rows DP-group-major: group 0's
// requests in order, then group 1's. The attention rows of a group are its requests'
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

// Where a request's tokens in a batch sit: the request they belong to (the
// cache they read and extend, seam/runtime/generate.h), the position of the
// first of them, and the attention-DP group that holds the request.
struct RequestPlace {
  int id = 0;
  int position = 0;
  int group = 0;
};

struct Batch {
  std::vector<std::vector<int>> requests;  // token ids
  // Empty, or one per request. Without places a batch is whole requests:
  // request i is id i, from position 0, on group i % attn_dp.
  std::vector<RequestPlace> places;
  int tokens() const;
  RequestPlace PlaceOf(size_t request, int attn_dp) const;
};

// `tokens` tokens split at random into `requests` requests of at least one
// token each, ids uniform below `vocab`; deterministic in `seed`.
Expected<Batch> RandomBatch(int tokens, int requests, int vocab, uint64_t seed);

// One request a length, ids uniform below `vocab`; deterministic in `seed`.
Expected<Batch> RandomPrompts(const std::vector<int>& lengths, int vocab, uint64_t seed);

struct BatchLayout {
  int tokens = 0;
  std::vector<int> group_offset;  // per DP group: its first row
  std::vector<int> group_rows;    // per DP group: its row count
  // Per row, in DP-major order:
  std::vector<int> token_ids;
  std::vector<int> positions;      // in its request, counted from its first token
  std::vector<int> request_id;     // RequestPlace::id
  std::vector<int> request_start;  // the row of its request's first token in this batch
  std::vector<int> batch_index;    // its row in the batch's own order
};
BatchLayout LayoutOf(const Batch& b, int attn_dp);

// The DP-major rows a rank holds on a layout.
RowSpan SpanOf(const BatchLayout& l, const ParallelConfig& cfg, Rows rows, const RankCoord& c);

}  // namespace seam

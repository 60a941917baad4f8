// seam/runtime/batch.h — a batch of requests, and where its rows sit on each rank.
//
// Requests go to attention-DP groups round robin (request i to group
// i % attn_dp) unless the batch places them (a step of a generation:
// seam/runtime/generate.h); the ranks order rows shard-major (an
// attention-row shard is one CP rank of one DP group, seam/topology.h):
// group 0's shards, then group 1's. Under context parallelism each
// request's tokens in the batch are cut zig-zag, as SGLang and vLLM cut a
// prefill: into 2 x cp blocks (the remainder to the lowest blocks), CP rank
// c holding blocks c and 2 x cp - 1 - c, so every rank has early and late
// tokens. A shard's attention rows are its share of its group's requests'
// tokens, in request order; a rank's slice is its attn_tp_rank-th chunk of
// ceil(rows/attn_tp) rows, the last chunks shorter or empty. A group, a
// shard or a slice may hold no rows: every rank still runs every step.
//
//   Batch b = RandomBatch(/*tokens=*/12, /*requests=*/3, /*vocab=*/256, /*seed=*/7);
//   BatchLayout l = LayoutOf(b, cfg.attn_dp, cfg.cp);
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
  std::vector<int> group_offset;  // per shard (DP group x CP rank): its first row
  std::vector<int> group_rows;    // per shard: its row count
  // Per row, in shard-major order:
  std::vector<int> token_ids;
  std::vector<int> positions;      // in its request, counted from its first token
  std::vector<int> request_id;     // RequestPlace::id
  std::vector<int> request_start;  // the row of its request's first token in this batch and shard
  std::vector<int> batch_index;    // its row in the batch's own order
};
BatchLayout LayoutOf(const Batch& b, int attn_dp, int cp = 1);

// The positions, counted from 0, that CP rank c of `cp` holds of `tokens`
// consecutive tokens of one request: blocks c and 2 x cp - 1 - c of 2 x cp.
std::vector<std::vector<int>> ZigZagShards(int tokens, int cp);

// The shard-major rows a rank holds on a layout.
RowSpan SpanOf(const BatchLayout& l, const ParallelConfig& cfg, Rows rows, const RankCoord& c);

}  // namespace seam

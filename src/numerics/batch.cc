#include "seam/runtime/batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace seam {

int Batch::tokens() const {
  int n = 0;
  for (const auto& r : requests) n += static_cast<int>(r.size());
  return n;
}

Expected<Batch> RandomBatch(int tokens, int requests, int vocab, uint64_t seed) {
  if (requests < 1) return InvalidArgument(fmt::format("--requests {} must be at least 1", requests));
  if (tokens < requests) {
    return InvalidArgument(
        fmt::format("--tokens {} cannot fill {} requests of at least one token each", tokens, requests));
  }
  if (vocab < 1) return InvalidArgument(fmt::format("a vocabulary of {} tokens", vocab));
  std::mt19937_64 rng(seed);
  // Cut points: requests - 1 distinct cuts among the tokens - 1 gaps.
  std::vector<int> gaps(static_cast<size_t>(tokens - 1));
  for (int i = 0; i < tokens - 1; ++i) gaps[static_cast<size_t>(i)] = i + 1;
  std::shuffle(gaps.begin(), gaps.end(), rng);
  std::vector<int> cuts(gaps.begin(), gaps.begin() + (requests - 1));
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(tokens);
  Batch b;
  int start = 0;
  std::uniform_int_distribution<int> id(0, vocab - 1);
  for (int cut : cuts) {
    std::vector<int> ids;
    for (int t = start; t < cut; ++t) ids.push_back(id(rng));
    b.requests.push_back(std::move(ids));
    start = cut;
  }
  return b;
}

Expected<Batch> RandomPrompts(const std::vector<int>& lengths, int vocab, uint64_t seed) {
  if (vocab < 1) return InvalidArgument(fmt::format("a vocabulary of {} tokens", vocab));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> id(0, vocab - 1);
  Batch b;
  for (int length : lengths) {
    if (length < 1) return InvalidArgument(fmt::format("a prompt of {} tokens", length));
    std::vector<int> ids(static_cast<size_t>(length));
    for (int& t : ids) t = id(rng);
    b.requests.push_back(std::move(ids));
  }
  return b;
}

RequestPlace Batch::PlaceOf(size_t request, int attn_dp) const {
  if (!places.empty()) return places[request];
  return {static_cast<int>(request), 0, static_cast<int>(request % static_cast<size_t>(attn_dp))};
}

std::vector<std::vector<int>> ZigZagShards(int tokens, int cp) {
  std::vector<std::vector<int>> out(static_cast<size_t>(cp));
  const int blocks = 2 * cp, base = tokens / blocks, extra = tokens % blocks;
  int at = 0;
  std::vector<RowSpan> spans;
  for (int b = 0; b < blocks; ++b) {
    const int size = base + (b < extra ? 1 : 0);  // the remainder to the lowest blocks
    spans.push_back({at, at + size});
    at += size;
  }
  for (int c = 0; c < cp; ++c) {
    for (const RowSpan& sp : {spans[static_cast<size_t>(c)], spans[static_cast<size_t>(blocks - 1 - c)]}) {
      for (int t = sp.begin; t < sp.end; ++t) out[static_cast<size_t>(c)].push_back(t);
    }
  }
  return out;
}

BatchLayout LayoutOf(const Batch& b, int attn_dp, int cp) {
  BatchLayout l;
  l.tokens = b.tokens();
  std::vector<int> batch_start;
  int at = 0;
  for (const auto& r : b.requests) {
    batch_start.push_back(at);
    at += static_cast<int>(r.size());
  }
  // Each request's tokens of this batch, cut into its CP ranks' shares once.
  std::vector<std::vector<std::vector<int>>> shares;
  for (const auto& r : b.requests) shares.push_back(ZigZagShards(static_cast<int>(r.size()), cp));
  for (int d = 0; d < attn_dp; ++d) {
    for (int c = 0; c < cp; ++c) {
      l.group_offset.push_back(static_cast<int>(l.token_ids.size()));
      for (size_t i = 0; i < b.requests.size(); ++i) {
        const RequestPlace place = b.PlaceOf(i, attn_dp);
        if (place.group != d) continue;
        const int start = static_cast<int>(l.token_ids.size());
        for (int p : shares[i][static_cast<size_t>(c)]) {
          l.token_ids.push_back(b.requests[i][static_cast<size_t>(p)]);
          l.positions.push_back(place.position + p);
          l.request_id.push_back(place.id);
          l.request_start.push_back(start);
          l.batch_index.push_back(batch_start[i] + p);
        }
      }
      l.group_rows.push_back(static_cast<int>(l.token_ids.size()) - l.group_offset.back());
    }
  }
  return l;
}

RowSpan SpanOf(const BatchLayout& l, const ParallelConfig& cfg, Rows rows, const RankCoord& c) {
  RowSpan s{0, l.tokens};
  if (rows.dp()) {
    const auto shard = static_cast<size_t>(ShardOf(cfg, c));
    s = {l.group_offset[shard], l.group_offset[shard] + l.group_rows[shard]};
  }
  if (rows.attn_tp()) {
    const RowSpan chunk = EvenSpans(s.rows(), cfg.attn_tp())[static_cast<size_t>(c.attn_tp_rank)];
    s = {s.begin + chunk.begin, s.begin + chunk.end};
  }
  return s;
}

}  // namespace seam

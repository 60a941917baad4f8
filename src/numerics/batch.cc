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

BatchLayout LayoutOf(const Batch& b, int attn_dp) {
  BatchLayout l;
  l.tokens = b.tokens();
  std::vector<int> batch_start;
  int at = 0;
  for (const auto& r : b.requests) {
    batch_start.push_back(at);
    at += static_cast<int>(r.size());
  }
  for (int d = 0; d < attn_dp; ++d) {
    l.group_offset.push_back(static_cast<int>(l.token_ids.size()));
    for (size_t i = 0; i < b.requests.size(); ++i) {
      const RequestPlace place = b.PlaceOf(i, attn_dp);
      if (place.group != d) continue;
      const int start = static_cast<int>(l.token_ids.size());
      for (size_t p = 0; p < b.requests[i].size(); ++p) {
        l.token_ids.push_back(b.requests[i][p]);
        l.positions.push_back(place.position + static_cast<int>(p));
        l.request_id.push_back(place.id);
        l.request_start.push_back(start);
        l.batch_index.push_back(batch_start[i] + static_cast<int>(p));
      }
    }
    l.group_rows.push_back(static_cast<int>(l.token_ids.size()) - l.group_offset.back());
  }
  return l;
}

RowSpan SpanOf(const BatchLayout& l, const ParallelConfig& cfg, Rows rows, const RankCoord& c) {
  RowSpan s{0, l.tokens};
  if (rows.dp()) {
    s = {l.group_offset[static_cast<size_t>(c.dp_rank)],
         l.group_offset[static_cast<size_t>(c.dp_rank)] + l.group_rows[static_cast<size_t>(c.dp_rank)]};
  }
  if (rows.attn_tp()) {
    const RowSpan chunk = EvenSpans(s.rows(), cfg.attn_tp())[static_cast<size_t>(c.attn_tp_rank)];
    s = {s.begin + chunk.begin, s.begin + chunk.end};
  }
  return s;
}

}  // namespace seam

#include "run/rank_cache.h"

#include <fmt/format.h>
#include <limits>

namespace seam::exec {

CacheRows& RankCache::Attention(int stage, int request, int width, int stride, int residue) {
  CacheRows& rows = attention_.try_emplace({request, stage}, width, stride, residue).first->second;
  SEAM_CHECK(rows.stride() == stride && rows.residue() == residue, "a cache read with another DCP split");
  return rows;
}

MixerKernel::State& RankCache::Mixer(int stage, int request, const MixerKernel& k, int position, int count) {
  auto it = mixers_.find({request, stage});
  if (it == mixers_.end()) {
    SEAM_CHECK(position == 0, fmt::format("request {} continues from position {} with no state", request, position));
    it = mixers_.emplace(std::pair{request, stage}, MixerState{k.NewState(), 0}).first;
  }
  SEAM_CHECK(it->second.next == position,
             fmt::format("request {}'s state is at position {}, not {}", request, it->second.next, position));
  it->second.next = position + count;
  return it->second.state;
}

void RankCache::Drop(int request) {
  const auto first = std::pair{request, std::numeric_limits<int>::min()};
  const auto last = std::pair{request, std::numeric_limits<int>::max()};
  attention_.erase(attention_.lower_bound(first), attention_.upper_bound(last));
  mixers_.erase(mixers_.lower_bound(first), mixers_.upper_bound(last));
}

int64_t RankCache::bytes() const {
  int64_t n = 0;
  for (const auto& [key, rows] : attention_) n += rows.bytes();
  for (const auto& [key, m] : mixers_) {
    n += static_cast<int64_t>((m.state.conv.size() + m.state.recurrent.size()) * sizeof(float));
  }
  return n;
}

}  // namespace seam::exec

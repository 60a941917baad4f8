#include "numerics/request_cache.h"

#include <fmt/format.h>

namespace seam::exec {

void CacheRows::Append(const Tensor& entries, int first, int last, int position) {
  SEAM_CHECK(entries.cols() == width_, "cache entries of another width");
  SEAM_CHECK(position == next_,
             fmt::format("a request's tokens from position {} extend a cache of {}", position, next_));
  for (int r = first; r < last; ++r, ++position) {
    if (position % stride_ == residue_) rows_.insert(rows_.end(), entries.row(r), entries.row(r) + width_);
  }
  next_ = position;
}

void AttendRequest(const AttentionKernel& k, const AttentionKernel::Projected& p, int first, int last,
                   std::span<const int> positions, CacheRows& cache, Tensor& out) {
  if (first == last) return;
  cache.Append(p.entries, first, last, positions[static_cast<size_t>(first)]);
  k.AttendCached(p, first, last, positions, cache.data(), cache.count(), out);
}

}  // namespace seam::exec

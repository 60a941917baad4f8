#include "numerics/request_cache.h"

#include <fmt/format.h>

namespace seam::exec {

void CacheRows::Append(const Tensor& entries, int first, int last, int position) {
  SEAM_CHECK(entries.cols() == width_, "cache entries of another width");
  SEAM_CHECK(position == count(),
             fmt::format("a request's tokens from position {} extend a cache of {}", position, count()));
  rows_.insert(rows_.end(), entries.row(first), entries.row(first) + static_cast<size_t>(last - first) * width_);
}

void AttendRequest(const AttentionKernel& k, const AttentionKernel::Projected& p, int first, int last,
                   std::span<const int> positions, CacheRows& cache, Tensor& out) {
  if (first == last) return;
  cache.Append(p.entries, first, last, positions[static_cast<size_t>(first)]);
  k.AttendCached(p, first, last, positions, cache.data(), cache.count(), out);
}

}  // namespace seam::exec

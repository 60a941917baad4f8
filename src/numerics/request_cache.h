// What a stage keeps of one request between its tokens: the attention's
// cache entries (one row a position, AttentionKernel::cache_width() wide)
// or a mixer's state. The reference keeps one per stage as it feeds a
// request token by token; a rank keeps one per stage it holds and request
// its DP group serves, across the steps of a generation (run/rank_cache.h).
#pragma once

#include <cstdint>
#include <vector>

#include "numerics/mixer.h"
#include "numerics/stages.h"

namespace seam::exec {

class CacheRows {
 public:
  // Under decode context parallelism a rank holds the positions residue,
  // residue + stride, ... of each request (stride = dcp); else every one.
  explicit CacheRows(int width, int stride = 1, int residue = 0) : width_(width), stride_(stride), residue_(residue) {}

  // Rows [first, last) of `entries` are the request's tokens at positions
  // next() onwards: a cache grows in order, never with a gap or twice. It
  // keeps the rows at the positions it holds.
  void Append(const Tensor& entries, int first, int last, int position);
  const float* data() const { return rows_.data(); }
  // The entries it holds, and the positions the request has reached.
  int count() const { return width_ == 0 ? 0 : static_cast<int>(rows_.size() / static_cast<size_t>(width_)); }
  int next() const { return next_; }
  int stride() const { return stride_; }
  int residue() const { return residue_; }
  int64_t bytes() const { return static_cast<int64_t>(rows_.size() * sizeof(float)); }

 private:
  int width_ = 0;
  int stride_ = 1;
  int residue_ = 0;
  int next_ = 0;
  std::vector<float> rows_;
};

// Rows [first, last) of one request at `positions`: their entries appended
// to its cache, then each row's attention over it.
void AttendRequest(const AttentionKernel& k, const AttentionKernel::Projected& p, int first, int last,
                   std::span<const int> positions, CacheRows& cache, Tensor& out);

}  // namespace seam::exec

// The fixed binary tree over equal-shaped parts: the one order every sum in
// seam follows (a row-parallel product's K-blocks, a collective's members).
#include "seam/runtime/tree_sum.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "seam/error.h"

namespace seam {

Tensor TreeSum(std::span<const Tensor> parts) {
  SEAM_CHECK(!parts.empty() && std::has_single_bit(parts.size()), "tree sum: the part count is not a power of two");
  const Tensor& head = parts.front();
  std::vector<const float*> data;
  for (const Tensor& t : parts) {
    SEAM_CHECK(t.rows() == head.rows() && t.cols() == head.cols(), "tree sum: parts differ in shape");
    data.push_back(t.data());
  }
  if (parts.size() == 1) return head;
  Tensor out(head.rows(), head.cols());
  TreeSumInto(data, out.size(), out.data());
  return out;
}

void TreeSumInto(std::span<const float* const> parts, size_t len, float* out) {
  const size_t n = parts.size();
  SEAM_CHECK(n > 0 && std::has_single_bit(n), "tree sum: the part count is not a power of two");
  if (n == 1) {
    std::copy(parts[0], parts[0] + len, out);
    return;
  }
  // A block of elements at a time, so the partial sums stay in cache: level
  // one sums pairs of parts, each later level pairs of those sums, in order.
  constexpr size_t kBlock = 512;
  std::vector<float> sums(n / 2 * kBlock);
  for (size_t at = 0; at < len; at += kBlock) {
    const size_t m = std::min(kBlock, len - at);
    for (size_t i = 0; i < n / 2; ++i) {
      const float* a = parts[2 * i] + at;
      const float* b = parts[2 * i + 1] + at;
      float* d = sums.data() + i * kBlock;
      for (size_t e = 0; e < m; ++e) d[e] = a[e] + b[e];
    }
    for (size_t count = n / 2; count > 1; count /= 2) {
      for (size_t i = 0; i < count / 2; ++i) {
        const float* a = sums.data() + 2 * i * kBlock;
        const float* b = a + kBlock;
        float* d = sums.data() + i * kBlock;
        for (size_t e = 0; e < m; ++e) d[e] = a[e] + b[e];
      }
    }
    std::copy(sums.data(), sums.data() + m, out + at);
  }
}

}  // namespace seam

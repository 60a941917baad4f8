// seam/runtime/tree_sum.h — the canonical order of every sum.
//
// Parts are summed by the fixed binary tree over their order, so a sum's
// bits depend on its parts and their order alone, never on who adds them:
// the row-parallel product's K-blocks and the collectives' members use it.
//
//   Tensor total = TreeSum(parts);   // ((p0+p1)+(p2+p3)) + ...
#pragma once

#include <cstddef>
#include <span>

#include "seam/runtime/tensor.h"

namespace seam {

// Sums tensors of equal shape by the fixed binary tree over their order:
// pairs (0,1), (2,3), ... then pairs of those sums. The count must be a
// power of two.
Tensor TreeSum(std::span<const Tensor> parts);
// The same tree over `parts[i][0..len)`, written to out[0..len): for parts
// that sit in one receive buffer (the MPI backend's reduce-scatter).
void TreeSumInto(std::span<const float* const> parts, size_t len, float* out);

}  // namespace seam

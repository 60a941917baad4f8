// seam/runtime/gemm.h — the row- and column-invariant matrix product.
//
// y[m][n] = sum over k of x[m][k] * w[n][k], with w stored as [out, in]
// (a Linear layer's weight). Every element is accumulated in one fixed order
// that depends only on k: eight lanes (lane j takes k = j, j+8, ... in
// ascending order) summed as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)); no fused
// multiply-add. So an element's bits never depend on how many rows or
// columns share the call, on where they sit in it, or on the CPU the
// program runs on: a single token, a batch, a column shard and the whole
// matrix all give the same numbers.
//
//   Tensor y = Gemm(x, w);                        // [M, N] = [M, K] x [N, K]^T
//   Tensor part = TreeSum(GemmBlocks(x, w, 4));   // four K-blocks, tree-summed
#pragma once

#include <span>
#include <vector>

#include "seam/runtime/tensor.h"
#include "seam/runtime/tree_sum.h"  // how GemmBlocks' parts are summed

namespace seam {

// y = x * w^T. x is [M, K], w is [N, K]; y is [M, N].
Tensor Gemm(const Tensor& x, const Tensor& w);

// The product split over K into `blocks` equal consecutive K-blocks, one
// product per block (x is [M, K], w is [N, K], K divisible by `blocks`).
// Summing them with TreeSum gives the canonical product of a row-parallel
// layer; a rank that holds a power-of-two-aligned run of the canonical
// blocks forms the subtree of that sum, so the tree over the ranks' subtrees
// has the bits of the whole.
std::vector<Tensor> GemmBlocks(const Tensor& x, const Tensor& w, int blocks);

}  // namespace seam

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
//   Tensor part = Gemm(x, MatrixView(w).Rows(0, 64));  // a shard, read in place
//   Tensor part = TreeSum(GemmBlocks(x, w, 4));   // four K-blocks, tree-summed
#pragma once

#include <span>
#include <vector>

#include "seam/runtime/tensor.h"
#include "seam/runtime/tree_sum.h"  // how GemmBlocks' parts are summed

namespace seam {

// y = x * w^T. x is [M, K], w is [N, K]; y is [M, N]. w may be a window
// on a larger weight (a rank's shard), of floats or of bf16 values kept in
// 16 bits: it is read in place, and bf16 values are widened exactly, so
// their product has the bits of the same values held as floats.
Tensor Gemm(const Tensor& x, MatrixView w);

// The product with w's rows given in parts, stacked in order: the columns
// of y are each part's product side by side, with the bits Gemm gives the
// stacked weight (a rank's rows of a projection it holds in pieces).
Tensor GemmStacked(const Tensor& x, std::span<const MatrixView> parts);

// The product split over K into `blocks` equal consecutive K-blocks, one
// product per block (x is [M, K], w is [N, K], K divisible by `blocks`).
// Summing them with TreeSum gives the canonical product of a row-parallel
// layer; a rank that holds a power-of-two-aligned run of the canonical
// blocks forms the subtree of that sum, so the tree over the ranks' subtrees
// has the bits of the whole.
std::vector<Tensor> GemmBlocks(const Tensor& x, MatrixView w, int blocks);

}  // namespace seam

// The canonical order of a sum, written out from the design (docs/design.md §6)
// without calling the code under test, so a test can state the bits a
// collective or a row-parallel product must give.
//
// A sum is split into B canonical K-blocks (B a power of two, 8 by
// default) and its value is the fixed binary tree over the blocks in
// order: the tree over the first half plus the tree over the second half,
// down to single blocks. A group of n members (n a power of two dividing
// B) holds B/n consecutive blocks each, member i (its position in the
// group, not its rank number) the blocks [i*B/n, (i+1)*B/n); its partial is
// the tree over its own blocks, a subtree of the whole; a reduce-scatter
// exchanges the partials and sums them by the same tree over group
// positions, an all-reduce is a reduce-scatter plus an all-gather. So
// every member ends with the tree over all B blocks.
//
// Floating-point addition commutes, so a mirrored tree (the leaves
// reversed, or the two halves swapped) gives the same bits; what changes
// them is a different association: a tree whose leaves start elsewhere (at
// the calling member's own position, say) or a left-to-right sum. OrderMatters checks
// that a test's values tell those apart.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "seam/layout.h"
#include "seam/runtime/tensor.h"

namespace seam::testing {

// The tree over the leaves in order (a power-of-two count): left half +
// right half, recursively.
inline float TreeOf(std::span<const float> leaves) {
  if (leaves.size() == 1) return leaves[0];
  const size_t half = leaves.size() / 2;
  return TreeOf(leaves.first(half)) + TreeOf(leaves.subspan(half));
}

// The same tree with its leaves rotated to start at `start`: what a member
// that starts the sum at its own position would compute.
inline float RotatedTreeOf(std::span<const float> leaves, size_t start) {
  std::vector<float> rotated;
  for (size_t i = 0; i < leaves.size(); ++i) rotated.push_back(leaves[(start + i) % leaves.size()]);
  return TreeOf(rotated);
}

inline float LeftToRight(std::span<const float> leaves) {
  float sum = leaves[0];
  for (size_t i = 1; i < leaves.size(); ++i) sum = sum + leaves[i];
  return sum;
}

// A value distinct per (seed, element, block), of either sign and spread
// over 2^-8 .. 2^8 with a full mantissa, so that sums of them round
// differently when associated differently.
inline float LeafValue(uint32_t seed, int element, int block) {
  uint64_t z = (uint64_t{seed} << 40) ^ (static_cast<uint64_t>(element) << 16) ^ static_cast<uint64_t>(block);
  z += 0x9e3779b97f4a7c15ULL;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const uint32_t sign = static_cast<uint32_t>(z >> 63) << 31;
  const uint32_t exponent = static_cast<uint32_t>(127 - 8 + (z >> 32) % 17) << 23;
  const uint32_t mantissa = static_cast<uint32_t>(z) & 0x7fffffu;
  const uint32_t bits = sign | exponent | mantissa;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// A [rows, cols] sum of `blocks` canonical K-blocks per element.
class BlockSums {
 public:
  BlockSums(int rows, int cols, int blocks, uint32_t seed) : rows_(rows), cols_(cols), blocks_(blocks), seed_(seed) {}
  int rows() const { return rows_; }
  int cols() const { return cols_; }

  // The blocks of element (row, col) in canonical order.
  std::vector<float> Leaves(int row, int col) const {
    std::vector<float> out;
    for (int b = 0; b < blocks_; ++b) out.push_back(LeafValue(seed_, row * cols_ + col, b));
    return out;
  }

  // What the member at `position` of `members` contributes: the tree over
  // its own consecutive blocks.
  Tensor Partial(int position, int members) const {
    return Each([&](std::span<const float> leaves) { return TreeOf(MemberLeaves(leaves, position, members)); });
  }

  // The canonical sum: the tree over every block.
  Tensor Whole() const {
    return Each([](std::span<const float> leaves) { return TreeOf(leaves); });
  }

  // The members' partials summed by a tree that starts at `start`.
  Tensor RotatedAt(int members, int start) const {
    return Each([&](std::span<const float> leaves) {
      return RotatedTreeOf(Partials(leaves, members), static_cast<size_t>(start));
    });
  }

  // The members' partials summed left to right.
  Tensor LeftToRightOver(int members) const {
    return Each([&](std::span<const float> leaves) { return LeftToRight(Partials(leaves, members)); });
  }

 private:
  template <class Fn>
  Tensor Each(Fn fn) const {
    Tensor out(rows_, cols_);
    for (int r = 0; r < rows_; ++r) {
      for (int c = 0; c < cols_; ++c) out.at(r, c) = fn(Leaves(r, c));
    }
    return out;
  }

  std::span<const float> MemberLeaves(std::span<const float> leaves, int position, int members) const {
    const size_t each = leaves.size() / static_cast<size_t>(members);
    return leaves.subspan(static_cast<size_t>(position) * each, each);
  }

  std::vector<float> Partials(std::span<const float> leaves, int members) const {
    std::vector<float> out;
    for (int i = 0; i < members; ++i) out.push_back(TreeOf(MemberLeaves(leaves, i, members)));
    return out;
  }

  int rows_;
  int cols_;
  int blocks_;
  uint32_t seed_;
};

// One or two rows per member, none empty, so every member sums something
// and a row sent to the wrong member lands at another offset.
inline std::vector<RowSpan> UnequalSpans(int n) {
  std::vector<RowSpan> spans;
  int at = 0;
  for (int i = 0; i < n; ++i) {
    const int rows = i % 2 == 0 ? 2 : 1;
    spans.push_back({at, at + rows});
    at += rows;
  }
  return spans;
}

inline bool DiffersInRow(const Tensor& a, const Tensor& b, int row) {
  return std::memcmp(a.row(row), b.row(row), static_cast<size_t>(a.cols()) * sizeof(float)) != 0;
}

// Whether the values tell the canonical order from every wrong one in
// every row (so whichever rows a member sums, a wrong order on it shows):
// the tree started at another member position, and, with more than two
// members, the left-to-right sum. Two rotations cannot be told apart by
// any values, since addition commutes: with two members every order of
// the two partials, and with more the tree started halfway (its two halves
// swapped, a mirror at the top) give the canonical bits.
inline bool OrderMatters(const BlockSums& s, int members) {
  const Tensor whole = s.Whole();
  for (int r = 0; r < s.rows(); ++r) {
    for (int start = 1; start < members && members > 2; ++start) {
      if (start == members / 2) continue;  // the mirror: the same bits
      if (!DiffersInRow(whole, s.RotatedAt(members, start), r)) return false;
    }
    if (members > 2 && !DiffersInRow(whole, s.LeftToRightOver(members), r)) return false;
  }
  return true;
}

}  // namespace seam::testing

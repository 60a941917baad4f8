// The collectives on simulated ranks sum in the order the design fixes:
// the expected bits come from canonical_order.h (written from docs/design.md §6),
// never from the code under test, for per-member values chosen so that
// any other association gives other bits. A backend that started each
// member's tree at its own position, or summed left to right, fails here;
// so does a row-parallel product whose K-blocks combine in another order.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "comm/canonical_order.h"
#include "seam/runtime/comm.h"
#include "seam/runtime/gemm.h"

// The test's own statement of the product must not be contracted into FMAs.
#pragma GCC optimize("fp-contract=off")

namespace seam {
namespace {

using testing::BlockSums;
using testing::UnequalSpans;

// Elements per row: enough that every row has one whose bits a wrong order changes.
constexpr int kCols = 32;

// Member positions hold rank numbers in this order: the identity, and one
// that lists the ranks out of order (the tree follows group order).
std::vector<RankGroup> GroupsOf(int n) {
  RankGroup in_order, shuffled;
  for (int i = 0; i < n; ++i) {
    in_order.ranks.push_back(i);
    shuffled.ranks.push_back((i * 3 + 1) % n);  // a permutation for n = 2, 4, 8
  }
  return {in_order, shuffled};
}

struct Case {
  int members;
  int k_blocks;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.members << " members, " << c.k_blocks << " K-blocks"; }

class CanonicalOrder : public ::testing::TestWithParam<Case> {};

TEST_P(CanonicalOrder, TheValuesTellTheCanonicalTreeFromEveryOtherOrder) {
  const auto [n, blocks] = GetParam();
  // Were this false, a backend summing in another order could pass the tests below.
  EXPECT_TRUE(testing::OrderMatters(BlockSums(2 * n, kCols, blocks, 1), n));
  EXPECT_TRUE(testing::OrderMatters(BlockSums(UnequalSpans(n).back().end, kCols, blocks, 2), n));
}

TEST_P(CanonicalOrder, AllReduceGivesEveryMemberTheTreeOverTheKBlocks) {
  const auto [n, blocks] = GetParam();
  const BlockSums s(2 * n, kCols, blocks, 1);
  for (const RankGroup& g : GroupsOf(n)) {
    std::mutex mu;
    std::map<int, Tensor> got;
    ASSERT_TRUE(RunOnRanks(Backend::kThreads, n, [&](int rank, Comm& comm) {
                  Tensor sum = comm.AllReduce(g, s.Partial(g.IndexOf(rank), n));
                  const std::lock_guard<std::mutex> lock(mu);
                  got[rank] = std::move(sum);
                }).ok());
    for (int rank : g.ranks)
      EXPECT_EQ(got[rank], s.Whole()) << "rank " << rank << " of " << ::testing::PrintToString(g.ranks);
  }
}

TEST_P(CanonicalOrder, ReduceScatterGivesEachMemberItsRowsOfTheTree) {
  const auto [n, blocks] = GetParam();
  const std::vector<RowSpan> spans = UnequalSpans(n);
  const BlockSums s(spans.back().end, kCols, blocks, 2);
  const Tensor whole = s.Whole();
  for (const RankGroup& g : GroupsOf(n)) {
    std::mutex mu;
    std::map<int, Tensor> got;
    ASSERT_TRUE(RunOnRanks(Backend::kThreads, n, [&](int rank, Comm& comm) {
                  Tensor part = comm.ReduceScatter(g, s.Partial(g.IndexOf(rank), n), spans);
                  const std::lock_guard<std::mutex> lock(mu);
                  got[rank] = std::move(part);
                }).ok());
    for (int i = 0; i < n; ++i) {
      const RowSpan sp = spans[static_cast<size_t>(i)];
      EXPECT_EQ(got[g.ranks[static_cast<size_t>(i)]], whole.RowRange(sp.begin, sp.end))
          << "member " << i << " of " << ::testing::PrintToString(g.ranks);
    }
  }
}

// seam/runtime/gemm.h's contract for one element, written out: lane j takes
// k = j, j + 8, ... in order, the lanes summed ((0+1)+(2+3))+((4+5)+(6+7)).
float LaneDot(const float* x, const float* w, int k) {
  float lane[8] = {};
  for (int i = 0; i < k; ++i) lane[i % 8] = lane[i % 8] + x[i] * w[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

Tensor Spread(int rows, int cols, uint32_t seed) {
  Tensor t(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) t.at(r, c) = testing::LeafValue(seed, r, c);
  }
  return t;
}

TEST_P(CanonicalOrder, ARowParallelProductCombinesItsKBlocksByTheTree) {
  // y = x w^T over K = blocks x 12 (a block width that is no multiple of
  // the eight lanes); member i holds K columns [i K/n, (i+1) K/n), forms
  // its blocks' subtree, and the all-reduce combines the members'.
  const auto [n, blocks] = GetParam();
  constexpr int kBlockWidth = 12;
  const int k = blocks * kBlockWidth;
  const Tensor x = Spread(5, k, 11), w = Spread(7, k, 12);
  Tensor expected(x.rows(), w.rows());
  int rows_told_apart = 0;
  for (int m = 0; m < x.rows(); ++m) {
    bool told_apart = false;
    for (int c = 0; c < w.rows(); ++c) {
      std::vector<float> per_block;
      for (int b = 0; b < blocks; ++b) {
        per_block.push_back(LaneDot(x.row(m) + b * kBlockWidth, w.row(c) + b * kBlockWidth, kBlockWidth));
      }
      expected.at(m, c) = testing::TreeOf(per_block);
      told_apart |=
          testing::LeftToRight(per_block) != expected.at(m, c) && LaneDot(x.row(m), w.row(c), k) != expected.at(m, c);
    }
    rows_told_apart += told_apart;
  }
  // Were a row's blocks summable in any order with the same bits, it would prove nothing.
  ASSERT_EQ(rows_told_apart, x.rows());
  for (const RankGroup& g : GroupsOf(n)) {
    std::mutex mu;
    std::map<int, Tensor> got;
    ASSERT_TRUE(RunOnRanks(Backend::kThreads, n, [&](int rank, Comm& comm) {
                  const int i = g.IndexOf(rank), share = k / n;
                  const Tensor xi = x.ColRange(i * share, (i + 1) * share), wi = w.ColRange(i * share, (i + 1) * share);
                  Tensor y = comm.AllReduce(g, TreeSum(GemmBlocks(xi, wi, blocks / n)));
                  const std::lock_guard<std::mutex> lock(mu);
                  got[rank] = std::move(y);
                }).ok());
    for (int rank : g.ranks)
      EXPECT_EQ(got[rank], expected) << "rank " << rank << " of " << ::testing::PrintToString(g.ranks);
  }
}

// 8 canonical K-blocks (the default) and 16 (another power of two a run
// accepts), over groups of 2, 4 and 8 members.
INSTANTIATE_TEST_SUITE_P(Groups, CanonicalOrder,
                         ::testing::Values(Case{2, 8}, Case{4, 8}, Case{8, 8}, Case{2, 16}, Case{4, 16}, Case{8, 16}),
                         [](const auto& i) {
                           return "members" + std::to_string(i.param.members) + "_kblocks" +
                                  std::to_string(i.param.k_blocks);
                         });

}  // namespace
}  // namespace seam

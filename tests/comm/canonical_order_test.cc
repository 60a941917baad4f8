// The collectives on simulated ranks sum in the order the design fixes:
// the expected bits come from canonical_order.h (written from DESIGN.md §6),
// never from the code under test, for per-member values chosen so that
// any other association gives other bits. A backend that started each
// member's tree at its own position, or summed left to right, fails here.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "comm/canonical_order.h"
#include "seam/comm.h"

namespace seam {
namespace {

using testing::BlockSums;

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

// One or two rows per member, none empty, so every member sums something.
std::vector<RowSpan> UnequalSpans(int n) {
  std::vector<RowSpan> spans;
  int at = 0;
  for (int i = 0; i < n; ++i) {
    const int rows = i % 2 == 0 ? 2 : 1;
    spans.push_back({at, at + rows});
    at += rows;
  }
  return spans;
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
    for (int rank : g.ranks) EXPECT_EQ(got[rank], s.Whole()) << "rank " << rank << " of " << ::testing::PrintToString(g.ranks);
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

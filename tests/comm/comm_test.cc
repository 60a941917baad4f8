// The collectives on simulated ranks: canonical tree sums, gathers of
// unequal rows, all-to-all, point to point, failures that never hang, and
// the record backend's counts.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <new>
#include <stdexcept>

#include "seam/runtime/comm.h"
#include "seam/runtime/gemm.h"

namespace seam {
namespace {

// A value unique to (rank, row, column), so a misrouted row shows up.
float Unique(int rank, int row, int col) { return static_cast<float>(rank * 10000 + row * 100 + col) * 0.001f; }

Tensor Filled(int rank, int rows, int cols) {
  Tensor t(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) t.at(r, c) = Unique(rank, r, c);
  }
  return t;
}

RankGroup All(int n) {
  RankGroup g;
  for (int r = 0; r < n; ++r) g.ranks.push_back(r);
  return g;
}

std::vector<Tensor> Partials(const RankGroup& g, int rows, int cols) {
  std::vector<Tensor> out;
  for (int r : g.ranks) out.push_back(Filled(r, rows, cols));
  return out;
}

TEST(Comm, AllReduceIsTheTreeSumOnEveryMember) {
  const RankGroup g = All(4);
  const Tensor expected = TreeSum(Partials(g, 5, 3));
  std::mutex mu;
  std::vector<Tensor> got(4);
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 4, [&](int rank, Comm& comm) {
                Tensor sum = comm.AllReduce(g, Filled(rank, 5, 3));
                const std::lock_guard<std::mutex> lock(mu);
                got[static_cast<size_t>(rank)] = std::move(sum);
              }).ok());
  for (const Tensor& t : got) EXPECT_EQ(t, expected);
}

TEST(Comm, ReduceScatterSumsInGroupOrderNotRankOrder) {
  // The group lists rank 3 first: its partial is the tree's first leaf.
  const RankGroup g{{3, 1, 2, 0}};
  std::vector<Tensor> leaves = Partials(g, 4, 2);
  const Tensor expected = TreeSum(leaves);
  const std::vector<RowSpan> spans = {{0, 1}, {1, 3}, {3, 3}, {3, 4}};  // unequal, one empty
  std::mutex mu;
  std::map<int, Tensor> got;
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 4, [&](int rank, Comm& comm) {
                Tensor part = comm.ReduceScatter(g, Filled(rank, 4, 2), spans);
                const std::lock_guard<std::mutex> lock(mu);
                got[rank] = std::move(part);
              }).ok());
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    EXPECT_EQ(got[g.ranks[i]], expected.RowRange(spans[i].begin, spans[i].end)) << "member " << i;
  }
}

TEST(Comm, AllGatherConcatenatesUnequalRowsInGroupOrder) {
  const RankGroup g = All(3);
  const std::vector<int> rows_of = {2, 0, 3};
  std::mutex mu;
  std::vector<Tensor> got(3);
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 3, [&](int rank, Comm& comm) {
                Tensor all = comm.AllGather(g, Filled(rank, rows_of[static_cast<size_t>(rank)], 4), rows_of);
                const std::lock_guard<std::mutex> lock(mu);
                got[static_cast<size_t>(rank)] = std::move(all);
              }).ok());
  const Tensor parts[] = {Filled(0, 2, 4), Filled(1, 0, 4), Filled(2, 3, 4)};
  const Tensor expected = ConcatRows(parts);
  for (const Tensor& t : got) EXPECT_EQ(t, expected);
}

TEST(Comm, DisjointGroupsRunTheirCollectivesIndependently) {
  std::mutex mu;
  std::vector<Tensor> got(4);
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 4, [&](int rank, Comm& comm) {
                const RankGroup pair = rank < 2 ? RankGroup{{0, 1}} : RankGroup{{2, 3}};
                Tensor s = comm.AllReduce(pair, Filled(rank, 2, 2));
                s = comm.AllReduce(All(4), s);
                const std::lock_guard<std::mutex> lock(mu);
                got[static_cast<size_t>(rank)] = std::move(s);
              }).ok());
  const Tensor a[] = {Filled(0, 2, 2), Filled(1, 2, 2)};
  const Tensor b[] = {Filled(2, 2, 2), Filled(3, 2, 2)};
  const Tensor pa = TreeSum(a), pb = TreeSum(b);
  const Tensor expected = TreeSum(std::vector<Tensor>{pa, pa, pb, pb});
  for (const Tensor& t : got) EXPECT_EQ(t, expected);
}

TEST(Comm, AllToAllDeliversEachMembersTensorToItsDestination) {
  const RankGroup g = All(3);
  std::mutex mu;
  std::map<int, std::vector<Tensor>> got;
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 3, [&](int rank, Comm& comm) {
                std::vector<Tensor> to_each;
                for (int j = 0; j < 3; ++j) to_each.push_back(Filled(rank * 3 + j, j + rank, 2));
                auto from = comm.AllToAll(g, std::move(to_each));
                const std::lock_guard<std::mutex> lock(mu);
                got[rank] = std::move(from);
              }).ok());
  for (int me = 0; me < 3; ++me) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[me][static_cast<size_t>(j)], Filled(j * 3 + me, me + j, 2));
  }
}

TEST(Comm, SendAndRecvKeepTheirOrderPerPair) {
  std::mutex mu;
  std::vector<Tensor> got;
  ASSERT_TRUE(RunOnRanks(Backend::kThreads, 2, [&](int rank, Comm& comm) {
                if (rank == 0) {
                  comm.Send(1, Filled(7, 2, 3));
                  comm.Send(1, Filled(8, 1, 3));
                } else {
                  Tensor a = comm.Recv(0, 2, 3);
                  Tensor b = comm.Recv(0, 1, 3);
                  const std::lock_guard<std::mutex> lock(mu);
                  got = {a, b};
                }
              }).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Filled(7, 2, 3));
  EXPECT_EQ(got[1], Filled(8, 1, 3));
}

TEST(Comm, AFailingRankFailsTheRunNamingItWithoutAHang) {
  const auto start = std::chrono::steady_clock::now();
  const Status s = RunOnRanks(Backend::kThreads, 4, [&](int rank, Comm& comm) {
    if (rank == 2) throw std::runtime_error("bad input on this rank");
    comm.AllReduce(All(4), Filled(rank, 2, 2));  // the others wait for rank 2
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedCheck);
  EXPECT_EQ(s.error().message, "rank 2 failed: bad input on this rank");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Comm, ARankThatNeverArrivesTimesOutTheOthers) {
  const Status s = RunOnRanks(
      Backend::kThreads, 2,
      [&](int rank, Comm& comm) {
        if (rank == 0) comm.Barrier(All(2));  // rank 1 never joins
      },
      0.2);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kDeadlineExceeded);  // a timeout is not a failed check
  EXPECT_EQ(s.error().message, "rank 0 failed: rank 0 waited more than 0.2 s for the group's members to arrive");
}

// An allocation a rank cannot make is bad input (the sizes do not fit this
// machine), not the rank's runtime check failing; the other ranks still end.
TEST(Comm, ARankOutOfMemoryIsBadInputNotAFailedCheck) {
  const Status s = RunOnRanks(
      Backend::kThreads, 2,
      [&](int rank, Comm& comm) {
        if (rank == 1) throw std::bad_alloc();
        comm.Barrier(All(2));
      },
      5.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.error().message, "rank 1 failed: " + OutOfMemory().message);
}

TEST(Comm, ABugOnARankIsAnInternalErrorNotAFailedCheck) {
  const Status s = RunOnRanks(
      Backend::kThreads, 2,
      [&](int rank, Comm& comm) {
        SEAM_CHECK(rank != 1, "a broken invariant");
        comm.Barrier(All(2));
      },
      5.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_TRUE(s.error().message.starts_with("rank 1 failed: internal error at ")) << s.error().message;
}

TEST(Comm, AMemberSendingAnotherShapeThanExpectedFailsTheRun) {
  // Each rank's own arguments are consistent; they disagree on rank 1's rows.
  const Status s = RunOnRanks(Backend::kThreads, 2, [&](int rank, Comm& comm) {
    const std::vector<int> rows_of = {1, rank == 0 ? 2 : 3};
    comm.AllGather(All(2), Filled(rank, rows_of[static_cast<size_t>(rank)], 2), rows_of);
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("rank 1 sent [3, 2] where rank 0 expected [2, 2]"), std::string::npos)
      << s.error().message;
}

TEST(Comm, ArgumentsThatDisagreeWithTheRanksOwnTensorAreRejected) {
  const Status s = RunOnRanks(Backend::kRecord, 1,
                              [&](int, Comm& comm) { comm.AllGather(All(1), Filled(0, 3, 2), std::vector<int>{2}); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("all-gather of another row count"), std::string::npos) << s.error().message;
}

TEST(Comm, TheRecordBackendCountsCallsAndElementsWithoutMovingData) {
  std::mutex mu;
  std::vector<CommStats> stats(2);
  std::vector<Tensor> got(2);
  ASSERT_TRUE(RunOnRanks(Backend::kRecord, 2, [&](int rank, Comm& comm) {
                Tensor s = comm.AllReduce(All(2), Filled(rank, 4, 3));
                if (rank == 0) comm.Send(1, s);
                if (rank == 1) comm.Recv(0, 4, 3);
                const std::lock_guard<std::mutex> lock(mu);
                got[static_cast<size_t>(rank)] = s;
                stats[static_cast<size_t>(rank)] = comm.stats();
              }).ok());
  // Each rank sends its other half (2 rows x 3) to reduce, then its 2 rows to gather.
  EXPECT_EQ(stats[0].ops.at(CommOp::kReduceScatter).elements_sent, 6);
  EXPECT_EQ(stats[0].ops.at(CommOp::kAllGather).elements_sent, 6);
  EXPECT_EQ(stats[0].ops.at(CommOp::kSend).elements_sent, 12);
  EXPECT_EQ(stats[1].ops.at(CommOp::kRecv).calls, 1);
  EXPECT_EQ(stats[0].calls(), 3);
  // No data moved: what came from the other rank is zeros.
  EXPECT_EQ(got[0].rows(), 4);
  EXPECT_EQ(got[0].RowRange(2, 4), Tensor(2, 3));
}

}  // namespace
}  // namespace seam

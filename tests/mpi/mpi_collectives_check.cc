// Under mpirun: the MPI backend's canonical collectives give the bits the
// design fixes (tests/comm/canonical_order.h, written from docs/design.md §6,
// not from the code under test). The job runs as tp = N (attention DP 2
// from N = 4), and every rank sums over each of its groups (the whole TP
// group, its attention-TP group, its attention-DP peers): an all-reduce
// and a reduce-scatter of unequal spans, for 8 and 16 canonical K-blocks.
// Each rank prints one line and exits 1 if any sum had other bits.
//
//   mpirun -np 4 mpi_collectives_check
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "comm/canonical_order.h"
#include "seam/runtime/mpi.h"

namespace seam {
namespace {

using testing::BlockSums;
using testing::UnequalSpans;

// The first element whose bits differ, or "" when none does.
std::string FirstDifference(const Tensor& got, const Tensor& expected) {
  if (got.rows() != expected.rows() || got.cols() != expected.cols()) {
    return fmt::format("shape [{}, {}] where [{}, {}] was expected", got.rows(), got.cols(), expected.rows(),
                       expected.cols());
  }
  for (int r = 0; r < got.rows(); ++r) {
    if (!testing::DiffersInRow(got, expected, r)) continue;
    for (int c = 0; c < got.cols(); ++c) {
      if (got.at(r, c) != expected.at(r, c)) {
        return fmt::format("({}, {}) is {:a} where the canonical tree gives {:a}", r, c, got.at(r, c),
                           expected.at(r, c));
      }
    }
  }
  return "";
}

struct Checked {
  int sums = 0;
  std::vector<std::string> failures;
};

void CheckGroup(Comm& comm, const RankGroup& g, std::string_view name, int k_blocks, Checked& out) {
  const int n = g.size();
  const int me = g.IndexOf(comm.rank());
  const std::vector<RowSpan> spans = UnequalSpans(n);
  const uint32_t seed = static_cast<uint32_t>(g.ranks.front() * 64 + n * 4 + k_blocks);
  const BlockSums all(2 * n, 32, k_blocks, seed), some(spans.back().end, 32, k_blocks, seed + 1);
  const auto note = [&](std::string_view op, const std::string& diff) {
    ++out.sums;
    if (!diff.empty()) out.failures.push_back(fmt::format("{} over {} ({} K-blocks): {}", op, name, k_blocks, diff));
  };
  if (!testing::OrderMatters(all, n) || !testing::OrderMatters(some, n)) {
    out.failures.push_back(fmt::format("the values over {} cannot tell the orders apart", name));
  }
  note("all-reduce", FirstDifference(comm.AllReduce(g, all.Partial(me, n)), all.Whole()));
  const RowSpan mine = spans[static_cast<size_t>(me)];
  note("reduce-scatter",
       FirstDifference(comm.ReduceScatter(g, some.Partial(me, n), spans), some.Whole().RowRange(mine.begin, mine.end)));
}

int Run(int argc, char** argv) {
  MpiProcess mpi(&argc, &argv);
  const ParallelConfig cfg{.tp = mpi.size(), .attn_dp = mpi.size() >= 4 ? 2 : 1};
  const std::unique_ptr<Comm> comm = MakeMpiComm(mpi, cfg, MpiOptions{.timeout_seconds = 20});
  Checked checked;
  // Every rank visits the groups in the same order, so the calls match up.
  for (const auto& [group, name] : {std::pair{Group::kTp, "tp"}, {Group::kAttnTp, "attn_tp"}, {Group::kDp, "dp"}}) {
    const RankGroup g{GroupRanks(cfg, group, mpi.rank())};
    if (g.size() < 2) continue;
    for (int k_blocks : {8, 16}) CheckGroup(*comm, g, name, k_blocks, checked);
  }
  for (const std::string& f : checked.failures) std::printf("rank %d: %s\n", mpi.rank(), f.c_str());
  if (!checked.failures.empty()) return 1;
  std::printf("rank %d: %d sums in the canonical order\n", mpi.rank(), checked.sums);
  return 0;
}

}  // namespace
}  // namespace seam

int main(int argc, char** argv) {
  try {
    return seam::Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_collectives_check: %s\n", e.what());
    return 2;
  }
}

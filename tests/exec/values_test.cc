// Values across pipeline cuts, the seed PR's second test generalised: every
// stack of two and three stages and every ordering of the four kinds, cut at
// every set of boundaries into up to four ranks, under the sweep's
// configurations with `ar` and `rs`. The sender, to_pp, the transport,
// from_pp and the receiver run on simulated ranks; the output must equal the
// uncut run and the reference bit for bit, every owed sum must complete once
// (the record backend counts the reductions), and the receiver sums nothing
// it receives.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec_testing.h"
#include "seam/pipeline.h"
#include "seam/sweep.h"

namespace seam {
namespace {

using testing::RunnableStack;

std::vector<std::string> Stacks() {
  const std::string kinds = "AMFE";
  std::vector<std::string> out;
  for (char a : kinds) {
    for (char b : kinds) {
      out.push_back({a, b});
      for (char c : kinds) out.push_back({a, b, c});
    }
  }
  std::string perm = "AEFM";  // sorted, for next_permutation
  do {
    out.push_back(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return out;
}

class ValuesAcrossCuts : public ::testing::TestWithParam<SweepConfig> {};

}  // namespace

void PrintTo(const SweepConfig& c, std::ostream* os) { *os << c.name; }

namespace {

TEST_P(ValuesAcrossCuts, EqualTheUncutRunAndTheReferenceBitForBit) {
  const Batch b = testing::MustBatch(10, 3);
  int cuts = 0;
  for (Reduction r : {Reduction::kAr, Reduction::kRs}) {
    ParallelConfig cfg = GetParam().cfg;
    cfg.reduction = r;
    for (const std::string& letters : Stacks()) {
      if (cfg.input_scattered && letters.find('M') != std::string::npos) continue;  // rejected: mixers
      const Model m = RunnableStack(letters);
      const Weights w = testing::MustWeights(m, Dtype::kBf16);
      const Tensor ref = testing::MustReference(m, cfg, w, b, Dtype::kBf16);
      const Tensor uncut = testing::MustRun(m, cfg, w, b, Dtype::kBf16).hidden;
      ASSERT_EQ(uncut, ref) << letters << " " << Describe(cfg);
      for (const std::vector<int>& split : LayerSplits(m.num_layers, 4)) {
        if (split.size() == 1) continue;
        const ParallelConfig cut = testing::Cut(cfg, split);
        ASSERT_EQ(testing::MustRun(m, cut, w, b, Dtype::kBf16).hidden, uncut) << letters << " " << Describe(cut);
        ++cuts;
        if (letters.size() != 3) continue;
        // Every owed sum completes exactly once, and nothing received is summed.
        Expected<Pipeline> plans = BindPipeline(m, cut);
        const testing::Ran rec = testing::MustRun(m, cut, w, b, Dtype::kBf16, Backend::kRecord);
        for (int rank = 0; rank < WorldSize(cut); ++rank) {
          const Plan& p = (*plans)[static_cast<size_t>(CoordOf(cut, rank).pp_rank)];
          const Variant v = cut.input_scattered ? Variant::kInputScattered : Variant::kOrdinary;
          EXPECT_EQ(testing::ReduceScatters(rec.ranks[static_cast<size_t>(rank)]), testing::OwedSumsOf(p, v))
              << letters << " " << Describe(cut) << " rank " << rank;
        }
      }
    }
  }
  EXPECT_GT(cuts, 100);
}

TEST(ValuesAcrossCuts, ARankHoldingOnlyNoOpLayersPassesTheRowsOnUnchanged) {
  const Batch b = testing::MustBatch(10, 3);
  const Model m = RunnableStack("AFNNAF");
  const Weights w = testing::MustWeights(m, Dtype::kBf16);
  for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
    const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = r};
    const Tensor ref = testing::MustReference(m, cfg, w, b, Dtype::kBf16);
    EXPECT_EQ(testing::MustRun(m, testing::Cut(cfg, {2, 2, 2}), w, b, Dtype::kBf16).hidden, ref) << Name(r);
  }
}

INSTANTIATE_TEST_SUITE_P(SweepGrid, ValuesAcrossCuts, ::testing::ValuesIn(DefaultSweepConfigs()),
                         [](const auto& i) {
                           std::string n = i.param.name;
                           std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return n;
                         });

}  // namespace
}  // namespace seam

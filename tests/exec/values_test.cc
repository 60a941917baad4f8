// Values across pipeline cuts, the seed PR's second test generalised: every
// stack of one to three stages and every ordering of the four kinds, cut at
// every set of boundaries into up to four ranks, under the sweep's
// configurations with `ar` and `rs`, in fp32 and in bf16. The sender, to_pp,
// the transport, from_pp and the receiver run on simulated ranks; the output
// must equal the uncut run and the reference bit for bit. Apart from the
// values, on every rank of every run, uncut and cut, every owed sum must
// complete exactly once (the collectives count the reductions), so the
// receiver sums nothing it receives.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "exec_testing.h"
#include "seam/pipeline.h"
#include "seam/sweep.h"

namespace seam {
namespace {

using testing::RunnableStack;

// Every stack of one, two and three of the kinds AMFE, every ordering of all
// four, and four-stage stacks without a mixer (input-scattered batches reject
// mixers): each size from 1 to the longest the tests bind, in every
// configuration.
std::vector<std::string> Stacks() {
  const std::string kinds = "AMFE";
  std::vector<std::string> out;
  for (char a : kinds) {
    out.push_back({a});
    for (char b : kinds) {
      out.push_back({a, b});
      for (char c : kinds) out.push_back({a, b, c});
    }
  }
  std::string perm = "AEFM";  // sorted, for next_permutation
  do {
    out.push_back(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
  for (const char* letters : {"AEAF", "AFAE", "EAFA", "FAEA"}) out.push_back(letters);
  return out;
}

// The configuration cut at every set of boundaries into up to four ranks.
std::vector<ParallelConfig> Cuts(const ParallelConfig& cfg, int layers) {
  std::vector<ParallelConfig> out;
  for (const std::vector<int>& split : LayerSplits(layers, 4)) {
    if (split.size() > 1) out.push_back(testing::Cut(cfg, split));
  }
  return out;
}

bool Runs(const ParallelConfig& cfg, const std::string& letters) {
  // Rejected: mixers on input-scattered batches and under context parallelism.
  return !((cfg.input_scattered || cfg.cp > 1) && letters.find('M') != std::string::npos);
}

std::string TestName(std::string n) {
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(c); }, '_');
  return n;
}

class ValuesAcrossCuts : public ::testing::TestWithParam<std::tuple<SweepConfig, Dtype>> {};

}  // namespace

void PrintTo(const SweepConfig& c, std::ostream* os) { *os << c.name; }

namespace {

// Binds every pipeline rank (verified), runs the plans on threads and
// checks on every rank that each sum its plan owes completed exactly once:
// one reduce-scatter per owed sum (an all-reduce is a reduce-scatter and an
// all-gather), so a sum taken twice or never taken shows in the count even
// where the values could not tell. Returns the final hidden states.
Tensor RunCountingSums(const Model& m, const ParallelConfig& cfg, const Weights& w, const Batch& b, Dtype d) {
  const Pipeline plans = testing::MustBindPipeline(m, cfg);
  const Expected<RunOutput> out = RunPlans(m, plans, w, b, {.dtype = d});
  if (!out) throw std::runtime_error("run: " + out.error().message);
  const Variant v = cfg.input_scattered ? Variant::kInputScattered : Variant::kOrdinary;
  for (int rank = 0; rank < WorldSize(cfg); ++rank) {
    const Plan& p = plans[static_cast<size_t>(CoordOf(cfg, rank).pp_rank)];
    EXPECT_EQ(testing::ReduceScatters(out->ranks[static_cast<size_t>(rank)]), testing::OwedSumsOf(p, v))
        << m.name << " " << Describe(cfg) << " rank " << rank << ": sums completed vs sums owed";
  }
  return out->hidden;
}

TEST_P(ValuesAcrossCuts, EqualTheUncutRunAndTheReferenceBitForBit) {
  const auto& [config, dtype] = GetParam();
  const Batch b = testing::MustBatch(10, 3);
  int cuts = 0;
  int sizes[5] = {0, 0, 0, 0, 0};
  for (const std::string& letters : Stacks()) {
    if (!Runs(config.cfg, letters)) continue;
    const Model m = RunnableStack(letters);
    const Weights w = testing::MustWeights(m, dtype);
    // The reference does not depend on the reduction policy.
    const Tensor ref = testing::MustReference(m, config.cfg, w, b, dtype);
    for (Reduction r : {Reduction::kAr, Reduction::kRs}) {
      const ParallelConfig cfg = testing::WithReduction(config.cfg, r);
      const Tensor uncut = RunCountingSums(m, cfg, w, b, dtype);
      ASSERT_EQ(uncut, ref) << letters << " " << Describe(cfg);
      for (const ParallelConfig& cut : Cuts(cfg, m.num_layers)) {
        ASSERT_EQ(RunCountingSums(m, cut, w, b, dtype), uncut) << letters << " " << Describe(cut);
        ++cuts;
      }
    }
    ++sizes[letters.size()];
  }
  EXPECT_GT(cuts, 100);
  for (size_t size = 1; size <= 4; ++size) EXPECT_GT(sizes[size], 0) << "no stack of " << size << " stages ran";
}

TEST(ValuesAcrossCuts, ARankHoldingOnlyNoOpLayersPassesTheRowsOnUnchanged) {
  const Batch b = testing::MustBatch(10, 3);
  const Model m = RunnableStack("AFNNAF");
  for (Dtype d : {Dtype::kF32, Dtype::kBf16}) {
    const Weights w = testing::MustWeights(m, d);
    for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
      const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = r};
      const Tensor ref = testing::MustReference(m, cfg, w, b, d);
      EXPECT_EQ(testing::MustRun(m, testing::Cut(cfg, {2, 2, 2}), w, b, d).hidden, ref) << Name(r) << " " << Name(d);
    }
  }
}

// The sweep's configurations that bind the stacks run here; the one that
// only shows what input-scattered batches reject (a2a MoE) has nothing to run.
std::vector<SweepConfig> RunnableSweepConfigs() {
  std::vector<SweepConfig> out;
  for (const SweepConfig& c : DefaultSweepConfigs()) {
    if (!(c.cfg.input_scattered && c.cfg.moe == MoeMode::kA2a)) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(SweepGrid, ValuesAcrossCuts,
                         ::testing::Combine(::testing::ValuesIn(RunnableSweepConfigs()),
                                            ::testing::Values(Dtype::kF32, Dtype::kBf16)),
                         [](const auto& i) {
                           return TestName(std::get<0>(i.param).name + "_" + std::string(Name(std::get<1>(i.param))));
                         });

}  // namespace
}  // namespace seam

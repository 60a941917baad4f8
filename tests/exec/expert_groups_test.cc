// Expert groups apart from TP (--ep): the all-to-all runs inside groups of
// ep consecutive TP ranks, each group holds every expert, and the plan, its
// bytes, the verifier, the executor and the record backend all follow it.
#include <gtest/gtest.h>

#include <functional>

#include "exec_testing.h"
#include "seam/runtime/exec.h"
#include "seam/verify.h"

namespace seam {
namespace {

using testing::MustBatch;
using testing::MustBind;
using testing::MustReference;
using testing::MustRun;
using testing::MustWeights;
using testing::StackOf;

const ParallelConfig kTp4Ep2{.tp = 4, .moe = MoeMode::kA2a, .ep = 2};

std::vector<Step> StepsOfKind(const Plan& p, StepKind k) {
  std::vector<Step> out;
  for (const StagePlan& s : p.lines().front().stages) {
    for (const Step& step : s.compute) {
      if (step.kind == k) out.push_back(step);
    }
  }
  return out;
}

TEST(ExpertGroups, TheAllToAllRunsOverTheExpertGroupWhenItIsApartFromTp) {
  const Plan p = MustBind(StackOf("A E A F"), kTp4Ep2);
  EXPECT_EQ(p.config().ep, 2);
  EXPECT_EQ(ShortString(p.lines().front().stages[1].compute),
            "a2a-dispatch(ep) input slice; compute slice; a2a-combine(ep) value slice");
  // ep equal to tp is the TP group, as plans without --ep always named it.
  const Plan whole = MustBind(StackOf("A E A F"), {.tp = 4, .moe = MoeMode::kA2a, .ep = 4});
  EXPECT_EQ(ShortString(whole.lines().front().stages[1].compute),
            "a2a-dispatch(tp) input slice; compute slice; a2a-combine(tp) value slice");
  EXPECT_EQ(whole, MustBind(StackOf("A E A F"), {.tp = 4, .moe = MoeMode::kA2a}));
}

TEST(ExpertGroups, AnExpertGroupOfOneRankExchangesNothing) {
  const Plan p = MustBind(StackOf("A E A F"), {.tp = 4, .moe = MoeMode::kA2a, .ep = 1});
  EXPECT_EQ(ShortString(p.lines().front().stages[1].compute), "compute slice");
  EXPECT_TRUE(Verify(p).empty()) << Describe(Verify(p));
}

// Each row goes to the other ep - 1 members' experts: (ep-1)/ep of its top_k
// copies leave the rank, each way, whatever tp is.
TEST(ExpertGroups, TheAllToAllMovesTheExpertGroupsShareOfTheSlice) {
  const Model m = DeepseekModel(3, 64, 3);
  const Plan p2 = MustBind(m, kTp4Ep2, {.wire = testing::kFp32Wire});
  const Plan p4 = MustBind(m, {.tp = 4, .moe = MoeMode::kA2a}, {.wire = testing::kFp32Wire});
  const std::vector<Step> d2 = StepsOfKind(p2, StepKind::kDispatch), d4 = StepsOfKind(p4, StepKind::kDispatch);
  ASSERT_FALSE(d2.empty());
  ASSERT_EQ(d2.size(), d4.size());
  const double top_k = d2.front().width / 64.0;
  EXPECT_DOUBLE_EQ(BytesPerToken(d2.front(), p2.header()), 1.0 / 2 * 1.0 / 4 * top_k * 64 * 4);
  EXPECT_DOUBLE_EQ(BytesPerToken(d4.front(), p4.header()), 3.0 / 4 * 1.0 / 4 * top_k * 64 * 4);
  EXPECT_TRUE(Verify(p2).empty()) << Describe(Verify(p2));
}

// A plan that runs its all-to-all over the whole TP group where the
// configuration names expert groups of two is refused.
TEST(ExpertGroups, TheVerifierRefusesAnAllToAllOverAnotherGroup) {
  const Plan p = MustBind(StackOf("A E A F"), kTp4Ep2);
  std::vector<LinePlan> lines = p.lines();
  for (Step& s : lines[0].stages[1].compute) {
    if (s.kind == StepKind::kDispatch) s.group = Group::kTp;
  }
  const std::vector<Violation> v = Verify(Plan(p.header(), lines));
  ASSERT_FALSE(v.empty());
  EXPECT_NE(Describe(v).find("a2a-dispatch runs over the expert group (ep) on slices"), std::string::npos)
      << Describe(v);
}

// Unique values per rank and row: a row sent to the wrong group's expert
// copy, or folded back onto another row, changes the bits.
TEST(ExpertGroups, RunBitIdenticalToTheReferenceForEveryExpertGroupSize) {
  const Model m = DeepseekModel(4, 64, 3);
  const Weights w = MustWeights(m, Dtype::kBf16);
  const Batch b = MustBatch(24, 3);
  for (int ep : {1, 2, 4, 8}) {
    for (int attn_dp : {1, 2}) {
      const ParallelConfig cfg{.tp = 8, .attn_dp = attn_dp, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = ep};
      EXPECT_EQ(MustRun(m, cfg, w, b, Dtype::kBf16).hidden, MustReference(m, cfg, w, b, Dtype::kBf16))
          << "ep " << ep << " attn_dp " << attn_dp;
    }
  }
}

// The record backend sends within the expert group only: of a slice's k
// slots per row, the ones whose expert lives on another member of the group.
TEST(ExpertGroups, TheRecordBackendExchangesWithinTheExpertGroup) {
  const Model m = *CatalogueModel("qwen3-moe");
  ASSERT_EQ(m.dims->experts, 8);
  const testing::Ran record =
      MustRun(m, {.tp = 8, .moe = MoeMode::kA2a, .ep = 4}, Weights(), MustBatch(64, 2), Dtype::kF32, Backend::kRecord);
  int64_t want = 0;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (s.decl.kind != StageKind::kSparseFfn) continue;
    const int64_t k = s.decl.top_k;
    // 8 rows a slice, k slots each, spread evenly over 4 owners: 3/4 leave.
    want += 6 * k * (m.hidden + 1) + 6 * k * m.hidden;
  }
  ASSERT_GT(want, 0);
  for (size_t r = 0; r < record.ranks.size(); ++r) {
    EXPECT_EQ(record.ranks[r].ops.at(CommOp::kAllToAll).elements_sent, want) << "rank " << r;
  }
}

}  // namespace
}  // namespace seam

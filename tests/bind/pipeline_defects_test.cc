// The five defects of the seed PR as plan-level regression tests, each next
// to a test that the plan with the old behaviour is caught by the verifier.
#include <gtest/gtest.h>

#include <functional>
#include <type_traits>

#include "defect_plans.h"
#include "seam/bind.h"
#include "seam/owed_sum.h"
#include "seam/pipeline.h"
#include "seam/runtime/tensor.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::Cut;
using testing::MustBind;
using testing::MustBindPipeline;
using testing::StackOf;
using testing::StageOf;

constexpr Variant kOrd = Variant::kOrdinary;
constexpr Variant kScat = Variant::kInputScattered;

bool Reports(const std::vector<Violation>& v, Invariant inv) {
  for (const Violation& x : v) {
    if (x.invariant == inv) return true;
  }
  return false;
}

Model Zaya1Shaped() { return Zaya1Model(6); }  // A E A E A E, single-stage appends

// ---- (1) an append after an always-partial attention ----

TEST(Defect1, AnAppendAfterAnAlwaysPartialAttentionIsBoundWithTheResidualRowsThatAttentionRanOn) {
  for (const ParallelConfig& cfg :
       {ParallelConfig{.tp = 2, .moe = MoeMode::kA2a}, ParallelConfig{.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a}}) {
    std::vector<Pipeline> pipelines = {{MustBind(Zaya1Shaped(), cfg)}};
    for (const std::vector<int>& split : LayerSplits(6, 3)) {
      if (split.size() > 1) pipelines.push_back(MustBindPipeline(Zaya1Shaped(), Cut(cfg, split)));
    }
    for (const Pipeline& p : pipelines) {
      for (const Plan& rank : p) {
        const std::vector<StagePlan>& stages = rank.line(kOrd)->stages;
        for (size_t i = 1; i < stages.size(); ++i) {
          if (!IsAlwaysPartialAttention(stages[i - 1].decl)) continue;
          EXPECT_EQ(stages[i].arrives.residual, stages[i - 1].residual)
              << Describe(cfg) << " stage " << stages[i].index;
          EXPECT_EQ(stages[i].arrives, stages[i - 1].departs);
        }
      }
    }
  }
}

TEST(Defect1, APlanThatSlicesTheAttentionsResidualASecondTimeIsCaught) {
  const testing::DefectCase c = testing::Defect1();
  EXPECT_TRUE(VerifyPipeline(c.fixed).empty());
  EXPECT_TRUE(Reports(VerifyPipeline(c.old), Invariant::kResidualRowsAgree)) << Describe(VerifyPipeline(c.old));
}

// ---- (2) a stack or rank ending on attentions after an FFN on its own rows ----

TEST(Defect2, AStackOrRankEndingOnAlwaysPartialAttentionsAfterAnFfnOnItsRowsReturnsTheResidual) {
  const ParallelConfig cfg{.tp = 2, .moe = MoeMode::kA2a};
  const Plan stack = MustBind(StackOf("A E A"), cfg);
  EXPECT_EQ(ShortString(StageOf(stack, kOrd, 1).exit), "add slice; ag(attn_tp) residual slice->full");
  EXPECT_EQ(StageOf(stack, kOrd, 2).residual, Rows::Full());
  const Pipeline rank = MustBindPipeline(StackOf("A E A A F"), Cut(cfg, {4, 1}));
  EXPECT_EQ(ShortString(StageOf(rank[0], kOrd, 1).exit), "add slice; ag(attn_tp) residual slice->full");
  EXPECT_EQ(rank[0].line(kOrd)->end.arrives.residual, Rows::Full());
}

TEST(Defect2, APlanThatLeavesTheResidualOnTheSliceBeforeTrailingAttentionsIsCaught) {
  const testing::DefectCase c = testing::Defect2();
  EXPECT_TRUE(VerifyPipeline(c.fixed).empty());
  EXPECT_TRUE(Reports(VerifyPipeline(c.old), Invariant::kResidualRowsAgree)) << Describe(VerifyPipeline(c.old));
}

// ---- (3) a later rank's batch comes from positions ----

template <class T>
concept HasSize = requires(const T& t) {
  t.size();
};
template <class T>
concept HasRows = requires(const T& t) {
  t.rows();
};
template <class T>
concept HasData = requires(const T& t) {
  t.data();
};

TEST(Defect3, ALaterRanksBatchComesFromPositionsNotFromAnOwedSumHandle) {
  using Handle = OwedSum<std::vector<float>>;
  static_assert(!HasSize<Handle> && !HasRows<Handle> && !HasData<Handle>, "an owed sum has no size to read");
  static_assert(!std::is_copy_constructible_v<Handle>, "an owed sum completes once");
  static_assert(!std::is_convertible_v<Handle, std::vector<float>>, "an owed sum is not a tensor");
  using OwedTensor = OwedSum<Tensor>;  // what the interpreter holds
  static_assert(!HasRows<OwedTensor> && !HasData<OwedTensor> && !std::is_convertible_v<OwedTensor, Tensor>,
                "an owed tensor cannot be read as a tensor");
  Handle owed({1.0f, 2.0f}, Owed::kAttnTp);
  EXPECT_EQ(owed.group(), Owed::kAttnTp);
  const std::vector<float> done = std::move(owed).Complete([](std::vector<float> v, Owed) {
    for (float& x : v) x *= 2;
    return v;
  });
  EXPECT_EQ(done, (std::vector<float>{2.0f, 4.0f}));
  // No later rank ever starts with an owed sum to read: nothing it receives owes one.
  for (const std::vector<int>& split : {std::vector<int>{2, 2}, std::vector<int>{1, 3}}) {
    const Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2, .input_scattered = true}, split));
    for (Variant v : {kOrd, kScat}) {
      const Boundary& first = p[1].line(v)->stages.front().arrives;
      ASSERT_TRUE(first.value.has_value());
      EXPECT_EQ(first.value->owed, Owed::kNothing);
    }
  }
}

TEST(Defect3, APlanWhoseReceiverDeclaresAnOwedSumIsCaught) {
  const testing::DefectCase c = testing::Defect3();
  EXPECT_TRUE(VerifyPipeline(c.fixed).empty());
  EXPECT_TRUE(Reports(VerifyPipeline(c.old), Invariant::kHandoff)) << Describe(VerifyPipeline(c.old));
}

// ---- (4) an FFN before a handoff keeps one set of residual rows ----

// The FFN's residual rows while it runs are the rows its exit and the send start from.
void ExpectOneSetOfRows(const Pipeline& p, Variant v) {
  const LinePlan& line = *p[0].line(v);
  const StagePlan& ffn = line.stages.back();
  ASSERT_TRUE(IsFfn(ffn.decl));
  for (const Step& s : ffn.exit) {
    if (s.operand == Operand::kResidual && s.kind != StepKind::kAdd) {
      EXPECT_EQ(s.rows_in, *ffn.residual);
    }
  }
  EXPECT_EQ(ffn.departs.residual, ffn.residual);
  EXPECT_EQ(line.end.arrives.residual, ffn.residual);
}

TEST(Defect4, AnFfnBeforeAHandoffKeepsOneSetOfResidualRowsUnderInputScatteredAttention) {
  const ParallelConfig cfg{.tp = 2, .input_scattered = true, .reduction = Reduction::kRs};
  const Pipeline p = MustBindPipeline(LlamaModel(4), Cut(cfg, {2, 2}));
  ExpectOneSetOfRows(p, kScat);
  EXPECT_EQ(ShortString(p[0].line(kScat)->end.steps),
            "rs(tp) value full->slice; slice residual full->slice; send(pp) value slice; send(pp) residual slice");
}

TEST(Defect4, DeepseekUnderAttentionDpWithAFullyDataParallelDenseFfnBindsAtBothSplits) {
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 1};
  for (const std::vector<int>& split : {std::vector<int>{2, 2}, std::vector<int>{1, 3}}) {
    const Pipeline p = MustBindPipeline(DeepseekModel(4, 64, 3), Cut(cfg, split));
    ExpectOneSetOfRows(p, kOrd);
    EXPECT_TRUE(CompareWithUncut(MustBind(DeepseekModel(4, 64, 3), cfg), p).empty());
  }
}

TEST(Defect4, AnFfnWhoseExitStartsFromOtherRowsThanItsEntryLeftIsCaught) {
  const testing::DefectCase c = testing::Defect4();
  EXPECT_TRUE(VerifyPipeline(c.fixed).empty());
  EXPECT_TRUE(Reports(VerifyPipeline(c.old), Invariant::kResidualRowsAgree)) << Describe(VerifyPipeline(c.old));
}

// ---- (5) to_pp leaves no owed sum ----

TEST(Defect5, ToPpCompletesEverySumBeforeTheTransport) {
  // Nemotron-H cut between a mixer and the FFN after it: the mixer declares its sum, to_pp completes it.
  const Pipeline nemotron = MustBindPipeline(NemotronHModel("M-M*M-", 128).value(), Cut({.tp = 2}, {3, 3}));
  EXPECT_EQ(ShortString(StageOf(nemotron[0], kOrd, 2).exit), "leave(attn_tp) value full");
  EXPECT_EQ(ShortString(nemotron[0].line(kOrd)->end.steps),
            "rs(attn_tp) value full->slice; slice residual full->slice; send(pp) value slice; send(pp) residual slice");
  // DeepSeek with input-scattered attention and a reduce-scatter boundary reduction.
  const ParallelConfig scattered{.tp = 2, .input_scattered = true, .reduction = Reduction::kRs};
  for (const std::vector<int>& split : {std::vector<int>{2, 2}, std::vector<int>{1, 3}}) {
    const Pipeline p = MustBindPipeline(DeepseekModel(4, 64, 3), Cut(scattered, split));
    for (Variant v : {kOrd, kScat}) {
      for (const Step& s : p[0].line(v)->end.steps) {
        if (s.kind == StepKind::kSend) {
          EXPECT_EQ(s.owed_before, Owed::kNothing) << ShortString(s);
        }
      }
      EXPECT_TRUE(p[1].line(v)->stages.front().arrives.value.has_value());
    }
  }
}

TEST(Defect5, APlanThatSendsADeclaredPartialSumIsCaught) {
  const testing::DefectCase c = testing::Defect5();
  EXPECT_TRUE(VerifyPipeline(c.fixed).empty());
  EXPECT_TRUE(Reports(VerifyPipeline(c.old), Invariant::kHandoff)) << Describe(VerifyPipeline(c.old));
}

}  // namespace
}  // namespace seam

// The structural diff: empty for equal plans, and otherwise one line per
// difference that names its place (header field, variant, stage, side, step).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seam/bind.h"
#include "seam/plan_io.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using Lines = std::vector<std::string>;

// llama [A F][A F] under tp=2:
//   stage 0: start-residual full; norm full | compute full owes attn_tp | leave(attn_tp) value full
//   stage 1: ar+add+norm(attn_tp) full | compute full owes tp | leave(tp) value full
//   stage 2: ar+add+norm(tp) full | compute full owes attn_tp | leave(attn_tp) value full
//   stage 3: ar+add+norm(attn_tp) full | compute full owes tp | leave(tp) value full
//   final:   ar+add+norm(tp) full
Plan Llama() { return MustBind(LlamaModel(2), {.tp = 2}); }

// The plan with its ordinary line edited by `edit`.
template <class F>
Plan Edited(const Plan& p, F edit) {
  std::vector<LinePlan> lines = p.lines();
  edit(lines[0]);
  return Plan(p.header(), std::move(lines));
}

template <class F>
Plan WithHeader(const Plan& p, F edit) {
  PlanHeader h = p.header();
  edit(h);
  return Plan(std::move(h), p.lines());
}

TEST(PlanDiff, EqualPlansHaveNoDifferences) {
  const Plan a = Llama();
  EXPECT_EQ(Diff(a, a), Lines{});
  EXPECT_EQ(Diff(a, Llama()), Lines{});
  const Plan d = MustBind(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  EXPECT_EQ(Diff(d, Plan(d.header(), d.lines())), Lines{});
  const Plan s = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  EXPECT_EQ(Diff(s, s), Lines{});
}

TEST(PlanDiff, ChangedConfigIsListedAsTheConfigLine) {
  const Plan a = Llama();
  const Plan b = WithHeader(a, [](PlanHeader& h) { h.config.reduction = Reduction::kRs; });
  EXPECT_EQ(Diff(a, b), (Lines{"config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
                               "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=rs pp=1"}));
}

TEST(PlanDiff, ChangedHeaderFactsAreEachListedByName) {
  const Plan a = Llama();
  const Plan b = WithHeader(a, [](PlanHeader& h) {
    h.model = "llama-edited";
    h.hidden = 128;
    h.wire.act = WireDtype::kFp32;
    h.last_layer = 3;
  });
  EXPECT_EQ(Diff(a, b), (Lines{"model: llama != llama-edited", "hidden: 64 != 128", "act_dtype: bf16 != fp32",
                               "layers: 0..2 != 0..3"}));
}

TEST(PlanDiff, ChangedStepIsListedWithItsVariantStageSideAndIndex) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[1].entry[0].group = Group::kTp; });
  EXPECT_EQ(Diff(a, b),
            Lines{"ordinary stage 1 entry[0]: ar+add+norm(attn_tp) value full -> full, owes attn_tp -> -, width 64 != "
                  "ar+add+norm(tp) value full -> full, owes attn_tp -> -, width 64"});
}

TEST(PlanDiff, ChangedWidthIsListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[3].compute[0].width = 32; });
  EXPECT_EQ(Diff(a, b), Lines{"ordinary stage 3 compute[0]: compute input full -> full, owes - -> tp, width 64 != "
                              "compute input full -> full, owes - -> tp, width 32"});
}

// A difference the short text does not show (the operand of a fused step) is
// still listed at its place.
TEST(PlanDiff, StepDifferingOnlyInAFieldTheShortTextHidesIsStillListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[1].entry[0].operand = Operand::kResidual; });
  const Lines d = Diff(a, b);
  ASSERT_EQ(d.size(), 1U);
  EXPECT_EQ(d[0].rfind("ordinary stage 1 entry[0]: ", 0), 0U) << d[0];
}

TEST(PlanDiff, MissingStepIsListedAsNone) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[2].exit.clear(); });
  EXPECT_EQ(Diff(a, b), Lines{"ordinary stage 2 exit[0]: leave(attn_tp) value full -> full, owes attn_tp -> attn_tp, width 64 != (none)"});
  EXPECT_EQ(Diff(b, a), Lines{"ordinary stage 2 exit[0]: (none) != leave(attn_tp) value full -> full, owes attn_tp -> attn_tp, width 64"});
}

TEST(PlanDiff, MissingFinalStepIsListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.end.steps.clear(); });
  EXPECT_EQ(Diff(a, b), Lines{"ordinary final[0]: ar+add+norm(tp) value full -> full, owes tp -> -, width 64 != (none)"});
}

TEST(PlanDiff, MissingStageIsListedByPosition) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages.pop_back(); });
  EXPECT_EQ(Diff(a, b), Lines{"ordinary: only one plan has stage position 3"});
}

TEST(PlanDiff, ChangedBoundaryAndDeclarationAreListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) {
    l.stages[0].decl = MixerStage();
    l.stages[1].arrives.value->owed = Owed::kTp;
    l.end.arrives.residual = std::nullopt;
  });
  EXPECT_EQ(Diff(a, b), (Lines{"ordinary stage 0 declaration differs (attention vs mixer)",
                               "ordinary stage 1 arrives: value full owes attn_tp, residual full != "
                               "value full owes tp, residual full",
                               "ordinary final arrives: value full owes tp, residual full != "
                               "value full owes tp, residual none"}));
}

TEST(PlanDiff, SeveralDifferencesAreListedInPlanOrder) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) {
    l.stages[3].exit[0].group = Group::kAttnTp;
    l.stages[0].entry[1].width = 8;
  });
  const Lines d = Diff(a, b);
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0], "ordinary stage 0 entry[1]: norm residual full -> full, owes - -> -, width 64 != "
            "norm residual full -> full, owes - -> -, width 8");
  EXPECT_EQ(d[1], "ordinary stage 3 exit[0]: leave(tp) value full -> full, owes tp -> tp, width 64 != "
            "leave(attn_tp) value full -> full, owes tp -> tp, width 64");
}

TEST(PlanDiff, MissingVariantIsListedForTheSideThatLacksIt) {
  const Plan scattered = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  // The same header, only the input-scattered line removed.
  const Plan ordinary_only(scattered.header(), {*scattered.line(Variant::kOrdinary)});
  EXPECT_EQ(Diff(scattered, ordinary_only), Lines{"only the first plan has input-scattered batches"});
  EXPECT_EQ(Diff(ordinary_only, scattered), Lines{"only the second plan has input-scattered batches"});
}

TEST(PlanDiff, PlanWithInputScatteredAgainstOneWithoutListsConfigAndVariant) {
  const Plan plain = Llama();
  const Plan scattered = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  EXPECT_EQ(Diff(plain, scattered),
            (Lines{"config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
                   "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar input-scattered pp=1",
                   "only the second plan has input-scattered batches"}));
}

TEST(PlanDiff, AttentionDpAgainstPlainTpListsTheMovedRowsAndTheExtraSteps) {
  // Under attn_dp=2 the attention runs on its DP group's rows and the dense
  // FFN gathers them over dp: the rows change at every stage and steps appear.
  const Plan tp2 = Llama();
  const Plan dp = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2});
  const Lines d = Diff(tp2, dp);
  ASSERT_GE(d.size(), 3U);
  EXPECT_EQ(d[0], "config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
                  "tp=4 attn_dp=2 (attn_tp=2) dense_tp=4 moe=tp reduction=ar pp=1");
  EXPECT_EQ(d[1], "ordinary stage 0 arrives: value full, residual none != value attn, residual none");
  EXPECT_NE(std::find(d.begin(), d.end(), "ordinary stage 1 entry[1]: (none) != ag(dp) input attn -> full, owes - -> -, width 64"),
            d.end());
  EXPECT_EQ(d.back(), "ordinary final[1]: (none) != norm residual attn -> attn, owes - -> -, width 64");
}

}  // namespace
}  // namespace seam

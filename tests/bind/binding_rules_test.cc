// The binder's rules beyond the stage-kind grid, each named after what it
// guarantees.
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/pipeline.h"
#include "seam/sharding.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using testing::StackOf;
using testing::StageOf;

constexpr Variant kOrd = Variant::kOrdinary;

std::string Entry(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).entry); }
std::string Exit(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).exit); }
std::string Final(const Plan& p) { return ShortString(p.line(kOrd)->end.steps); }

// ---- mixers are exit-scoped ----

TEST(MixerRule, BeforeAnFfnTheMixerHandsItsSumOnAsDeclared) {
  const Plan p = MustBind(StackOf("M F"), {.tp = 2});
  EXPECT_EQ(Exit(p, 0), "leave(attn_tp) value full");
  EXPECT_EQ(Entry(p, 1), "ar+add+norm(attn_tp) full");
  const Plan dp = MustBind(StackOf("M F"), {.tp = 4, .attn_dp = 2});
  EXPECT_EQ(Exit(dp, 0), "leave(attn_tp) value attn");
  EXPECT_EQ(Entry(dp, 1), "ar+add+norm(attn_tp) attn; ag(dp) input attn->full");
}

TEST(MixerRule, AtTheStackEndTheMixerCompletesAtItsExit) {
  const Plan p = MustBind(StackOf("A F M"), {.tp = 2});
  EXPECT_EQ(Exit(p, 2), "ar(attn_tp) value full");
  EXPECT_EQ(Final(p), "add full; norm full");
}

TEST(MixerRule, AMixerCompletingWithTheResidualOnTheSliceReduceScattersOntoIt) {
  const Plan p = MustBind(StackOf("A E M"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "");  // a mixer is not an always-partial attention: no return
  EXPECT_EQ(Entry(p, 2), "add slice; norm slice; ag(attn_tp) input slice->full");
  EXPECT_EQ(Exit(p, 2), "rs(attn_tp) value full->slice");
  EXPECT_EQ(Final(p), "add slice; ag(attn_tp) residual slice->full; norm full");
}

// ---- an FFN on its own rows returns the residual where the attention rows are needed ----

TEST(SliceFfnRule, AnFfnOnItsSliceReturnsTheResidualAtTheStackEnd) {
  const Plan p = MustBind(StackOf("A E"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "add slice; ag(attn_tp) residual slice->full");
  EXPECT_EQ(Final(p), "norm full");
}

TEST(SliceFfnRule, SeveralTrailingAttentionsAndNoOpsStillGetTheResidualOnTheAttentionRows) {
  const Plan p = MustBind(StackOf("A E A N A"), {.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "add slice; ag(attn_tp) residual slice->attn");
  EXPECT_EQ(Entry(p, 2), "norm attn");
  EXPECT_EQ(Entry(p, 4), "ar+add+norm(attn_tp) attn");
  EXPECT_EQ(Final(p), "ar+add+norm(attn_tp) attn");
}

TEST(SliceFfnRule, AnFfnOnItsSliceStaysThereWhenAnotherFfnFollowsTheAttentions) {
  const Plan p = MustBind(StackOf("A E A A E"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "");
  EXPECT_EQ(StageOf(p, kOrd, 2).residual, Rows::Slice(p.config()));
}

TEST(SliceFfnRule, AnFfnOnItsSliceReturnsBeforeAReadOfEveryRow) {
  const Model m{
      .name = "reads", .num_layers = 4, .hidden = 64, .layer = [](int i) {
        const StageDecl all_rows = AttentionStage({.read = ReadKind::kAllRows});
        const StageDecl stages[] = {AttentionStage(), SparseFfnStage({.top_k = 2}), all_rows, DenseFfnStage()};
        return std::vector{stages[i]};
      }};
  const Plan p = MustBind(m, {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "add slice; ag(attn_tp) residual slice->full");
  EXPECT_EQ(Entry(p, 2), "norm full");
}

TEST(ReadRule, AnAttentionThatReadsEveryRowBringsTheResidualToTheAttentionRows) {
  const Model m{.name = "reads", .num_layers = 5, .hidden = 64, .layer = [](int i) {
                  const StageDecl all_rows = AttentionStage({.read = ReadKind::kAllRows});
                  const StageDecl stages[] = {AttentionStage(), SparseFfnStage({.top_k = 2}), AttentionStage(),
                                              all_rows, DenseFfnStage()};
                  return std::vector{stages[i]};
                }};
  const Plan p = MustBind(m, {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Entry(p, 3), "rs(attn_tp) value full->slice; add slice; ag(attn_tp) residual slice->full; norm full");
  EXPECT_EQ(StageOf(p, kOrd, 3).residual, Rows::Full());
}

// ---- how a TP FFN's sum completes under each boundary reduction ----

TEST(ReductionRule, RsvReturnsWholeDpGroupsWhenAttentionTpIsOneRank) {
  const Plan p = MustBind(StackOf("A F A"), {.tp = 4, .attn_dp = 4, .reduction = Reduction::kRsv});
  EXPECT_EQ(Exit(p, 1), "rsv(tp) value full->attn");
  const Plan both = MustBind(StackOf("A F A"), {.tp = 4, .attn_dp = 4, .reduction = Reduction::kRsRsv});
  EXPECT_EQ(Exit(both, 1), "rsv(tp) value full->attn");
}

TEST(ReductionRule, RsvPermitsOnlyTheAllReduceWhenAttentionTpExceedsOneRank) {
  const Plan p = MustBind(StackOf("A F A"), {.tp = 4, .attn_dp = 2, .reduction = Reduction::kRsv});
  EXPECT_EQ(Exit(p, 1), "ar(tp) value full; slice value full->attn");
  const Plan both = MustBind(StackOf("A F A"), {.tp = 4, .attn_dp = 2, .reduction = Reduction::kRsRsv});
  EXPECT_EQ(Exit(both, 1), "rs(tp) value full->slice; ag(attn_tp) value slice->attn");
}

TEST(ReductionRule, ATpFfnUnderAttentionDpStaysOnTheSliceWhenTheNextEntryAddsThere) {
  const Plan p =
      MustBind(StackOf("A F E A"), {.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a, .reduction = Reduction::kRs});
  EXPECT_EQ(Exit(p, 1), "rs(tp) value full->slice");
  EXPECT_EQ(Entry(p, 2), "slice residual attn->slice; add slice; norm slice");
}

TEST(ReductionRule, ATpFfnLeavesItsSumToAReduceScatterOnlyUnderRs) {
  const ParallelConfig cfg{.tp = 4, .moe = MoeMode::kA2a};
  const Plan ar = MustBind(StackOf("A F E A"), cfg);
  EXPECT_EQ(Exit(ar, 1), "ar(tp) value full");
  EXPECT_EQ(Entry(ar, 2), "slice value full->slice; slice residual full->slice; add slice; norm slice");
  const Plan rs = MustBind(StackOf("A F E A"), testing::WithReduction(cfg, Reduction::kRs));
  EXPECT_EQ(Exit(rs, 1), "leave(tp) value full");
  EXPECT_EQ(Entry(rs, 2), "rs(tp) value full->slice; slice residual full->slice; add slice; norm slice");
}

TEST(ReductionRule, AnAttentionTpDenseFfnCompletesOverAttentionTpWithoutADpMove) {
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 2};
  const Plan p = MustBind(StackOf("A F A F"), cfg);
  EXPECT_EQ(Entry(p, 1), "ar+add+norm(attn_tp) attn");
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 1).compute), "compute attn owes attn_tp");
  EXPECT_EQ(Exit(p, 1), "leave(attn_tp) value attn");
  EXPECT_EQ(Entry(p, 2), "ar+add+norm(attn_tp) attn");
  // Before an entry on the slice it needs `rs` to leave its sum.
  const ParallelConfig a2a{.tp = 4, .attn_dp = 2, .dense_tp = 2, .moe = MoeMode::kA2a};
  EXPECT_EQ(Exit(MustBind(StackOf("A F E"), a2a), 1), "ar(attn_tp) value attn");
  EXPECT_EQ(Exit(MustBind(StackOf("A F E"), testing::WithReduction(a2a, Reduction::kRs)), 1),
            "leave(attn_tp) value attn");
}

// ---- the stack entry ----

TEST(StackEntryRule, AStackStartingWithATpFfnUnderAttentionDpGathersItsInputOverDp) {
  const Plan p = MustBind(StackOf("F A"), {.tp = 4, .attn_dp = 2});
  EXPECT_EQ(Entry(p, 0), "start-residual attn; norm attn; ag(dp) input attn->full");
}

TEST(StackEntryRule, AnInputScatteredStackStartingWithAnFfnCompletesTheEmbeddingSum) {
  const Plan p = MustBind(StackOf("F A F"), {.tp = 2, .input_scattered = true});
  EXPECT_EQ(ShortString(StageOf(p, Variant::kInputScattered, 0).entry),
            "ar(tp) value full; start-residual full; norm full");
}

// The vocabulary-parallel embedding owes its TP sum, which the first entry
// completes straight onto the slice.
TEST(StackEntryRule, AStackStartingOnTheSliceReduceScattersTheEmbeddingOntoIt) {
  const Plan p = MustBind(StackOf("E A"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Entry(p, 0), "rs(tp) value full->slice; start-residual slice; norm slice");
}

// Under attention DP every rank holds the whole table: the lookup is complete
// on the attention rows and the first entry moves nothing.
TEST(StackEntryRule, UnderAttentionDpTheEmbeddingIsWholeOnEveryRank) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .attn_dp = 2});
  EXPECT_EQ(ShortString(p.lines().front().start), "embed attn");
  EXPECT_EQ(Entry(p, 0), "start-residual attn; norm attn");
}

// ---- non-additive (hyper-connection) updates ----

Model HyperConnectionStack(std::string_view letters) {
  std::vector<StageDecl> stages;
  const UpdateKind hc = UpdateKind::kHyperConnection;
  for (char c : letters) {
    if (c == 'R') stages.push_back(AttentionStage({.sum = AttentionSum::kReducesItself, .update = hc}));
    if (c == 'M') stages.push_back(MixerStage({.update = hc}));
    if (c == 'F') stages.push_back(DenseFfnStage({.update = hc}));
    if (c == 'E') stages.push_back(SparseFfnStage({.top_k = 2, .update = hc}));
  }
  return {.name = "hc",
          .num_layers = static_cast<int>(stages.size()),
          .hidden = 64,
          .residual_streams = 4,
          .layer = [stages](int i) { return std::vector{stages[static_cast<size_t>(i)]}; }};
}

TEST(HyperConnectionRule, EachStageWritesAtItsExitOnceItsSumIsCompleteAndNeverLeavesOne) {
  const Plan p = MustBind(HyperConnectionStack("R F M F"), {.tp = 2, .reduction = Reduction::kRs});
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 0).compute), "compute full owes attn_tp; ar(attn_tp) value full");
  EXPECT_EQ(Exit(p, 0), "add full");
  EXPECT_EQ(Entry(p, 1), "norm full");
  EXPECT_EQ(Exit(p, 1), "ar(tp) value full; add full");
  EXPECT_EQ(Exit(p, 2), "ar(attn_tp) value full; add full");
  EXPECT_EQ(Final(p), "norm full");
  for (const StagePlan& s : p.line(kOrd)->stages) EXPECT_FALSE(s.departs.value.has_value()) << s.index;
}

TEST(HyperConnectionRule, UnderAttentionDpATpFfnReturnsOverDpBeforeItWrites) {
  const Plan p = MustBind(HyperConnectionStack("R F R"), {.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs});
  EXPECT_EQ(Exit(p, 1), "rs(tp) value full->slice; ag(attn_tp) value slice->attn; add attn");
}

TEST(HyperConnectionRule, AnFfnOnItsSliceWritesThereAndTheStreamsTravelWithTheResidual) {
  const Plan p = MustBind(HyperConnectionStack("R E R E"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Exit(p, 1), "add slice");
  EXPECT_EQ(Entry(p, 2), "norm slice; ag(attn_tp) input slice->full");
  EXPECT_EQ(Exit(p, 3), "add slice; ag(attn_tp) residual slice->full");
  // The residual gather moves all four streams: 1/2 x 4 x 128 B (bf16).
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 3).exit.back(), p.header()), 256);
}

TEST(HyperConnectionRule, ACutSendsTheWrittenStreamsAndNoSeparateValue) {
  const Model m = HyperConnectionStack("R F R F");
  for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
    const Pipeline p = testing::MustBindPipeline(m, testing::Cut({.tp = 2, .reduction = r}, {2, 2}));
    for (const Step& s : p[0].line(kOrd)->end.steps) EXPECT_EQ(s.operand, Operand::kResidual) << ShortString(s);
    for (const Step& s : p[1].line(kOrd)->start) EXPECT_EQ(s.operand, Operand::kResidual) << ShortString(s);
    // The slice of four streams: 1/2 x 4 x 128 B (bf16) per token.
    EXPECT_EQ(BytesPerToken(p[0].line(kOrd)->end.steps.back(), p[0].header()), 256);
    EXPECT_TRUE(CompareWithUncut(MustBind(m, {.tp = 2, .reduction = r}), p).empty()) << Name(r);
  }
}

int FusedSteps(const Plan& p) {
  int n = 0;
  for (const StagePlan& s : p.line(kOrd)->stages) {
    for (const Step& step : s.entry) n += step.kind == StepKind::kAllReduceAddNorm ? 1 : 0;
  }
  return n;
}

TEST(HyperConnectionRule, NoStageFusesItsWriteIntoTheNextAddAndNorm) {
  // The same stack with plain adds fuses; with hyper-connections nothing does.
  EXPECT_GT(FusedSteps(MustBind(StackOf("A F A F"), {.tp = 2})), 0);
  EXPECT_EQ(FusedSteps(MustBind(HyperConnectionStack("R F R F"), {.tp = 2})), 0);
}

// ---- the shape of plans ----

TEST(PlanShape, NoOpStagesAreTransparentToTheirNeighbours) {
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs};
  const Plan with = MustBind(StackOf("A F N A F"), cfg);
  const Plan without = MustBind(StackOf("A F A F"), cfg);
  EXPECT_EQ(StageOf(with, kOrd, 3).entry, StageOf(without, kOrd, 2).entry);
  EXPECT_EQ(StageOf(with, kOrd, 1).exit, StageOf(without, kOrd, 1).exit);
}

TEST(PlanShape, OneRankGroupsAreDroppedWhenAttentionTpIsOneRank) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .attn_dp = 4});
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 0).compute), "compute attn");
  EXPECT_EQ(Exit(p, 0), "");
  EXPECT_EQ(Entry(p, 1), "add attn; norm attn; ag(dp) input attn->full");
}

TEST(PlanShape, ASingleRankPlanHasNoCollectives) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    const Plan p = MustBind(m, {.tp = 1, .moe = MoeDispatchesA2a(m) ? MoeMode::kA2a : MoeMode::kTp});
    EXPECT_EQ(BytesPerToken(*p.line(kOrd), p.header()), 0) << e.name;
    for (const StagePlan& s : p.line(kOrd)->stages) {
      for (const auto* steps : {&s.entry, &s.compute, &s.exit}) {
        for (const Step& step : *steps) EXPECT_FALSE(IsCollective(step.kind)) << e.name << " " << ShortString(step);
      }
    }
  }
}

TEST(PlanShape, EveryCatalogueModelBindsCleanlyOrIsRejectedByARuleAcrossTheGrid) {
  int bound = 0;
  int rejected = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (int tp : {1, 2, 3, 4, 6, 8}) {
      for (int dp = 1; dp <= tp; ++dp) {
        if (tp % dp != 0) continue;
        for (int dense : {tp, tp / dp, 1}) {
          for (MoeMode moe : {MoeMode::kTp, MoeMode::kA2a}) {
            for (bool scattered : {false, true}) {
              if (scattered && (tp == 1 || dp > 1)) continue;
              for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
                const ParallelConfig cfg{.tp = tp,
                                         .attn_dp = dp,
                                         .dense_tp = dense,
                                         .moe = moe,
                                         .input_scattered = scattered,
                                         .reduction = r};
                const Expected<Plan> p = BindChecked(m, cfg, 0);
                if (p.ok()) {
                  ++bound;
                  continue;
                }
                ++rejected;
                if (const Status sharding = CheckSharding(m, cfg); !sharding.ok()) {
                  EXPECT_EQ(p.error().message, sharding.error().message);  // tp 3 and 6: heads or sum groups
                  continue;
                }
                const bool no_dispatch = moe == MoeMode::kA2a && !MoeDispatchesA2a(m);
                EXPECT_TRUE(scattered || no_dispatch) << e.name << " " << Describe(cfg) << ": " << p.error().message;
                EXPECT_NE(p.error().message.find(no_dispatch ? "(rule: a2a MoE needs a dispatch/combine in the model)"
                                                             : "(rule: input-scattered eligibility)"),
                          std::string::npos)
                    << p.error().message;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(bound, 1000);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace seam

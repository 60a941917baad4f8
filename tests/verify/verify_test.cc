// The verifier catches each single-rank invariant when a bound plan is
// rewritten to break it.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "seam/bind.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using testing::StackOf;

// A new plan with the ordinary line's stage `index` edited.
Plan WithStage(const Plan& p, int index, const std::function<void(StagePlan&)>& edit) {
  std::vector<LinePlan> lines = p.lines();
  for (StagePlan& s : lines[0].stages) {
    if (s.index == index) edit(s);
  }
  return Plan(p.header(), lines);
}

Plan WithFinal(const Plan& p, const std::function<void(EndPlan&)>& edit) {
  std::vector<LinePlan> lines = p.lines();
  edit(lines[0].end);
  return Plan(p.header(), lines);
}

// True when a violation of `inv` is reported at this stage and side.
bool Reports(const std::vector<Violation>& v, Invariant inv, int stage, std::string_view side) {
  for (const Violation& x : v) {
    if (x.invariant == inv && x.stage == stage && Name(x.side) == side) return true;
  }
  return false;
}

const ParallelConfig kDeepseekCfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};

TEST(Verify, BoundPlansHaveNoViolations) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    ParallelConfig cfg = kDeepseekCfg;
    if (!MoeDispatchesA2a(m)) cfg.moe = MoeMode::kTp;
    const Plan p = MustBind(m, cfg);
    EXPECT_TRUE(Verify(p).empty()) << e.name << "\n" << Describe(Verify(p));
  }
}

// Invariant 1: both sides of every boundary agree on the residual's rows.
TEST(Verify, CatchesABoundaryWhoseSidesDisagreeOnTheResidualRows) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 2, [](StagePlan& s) { s.arrives.residual = Rows::FromAxes(true, false); });
  const std::vector<Violation> v = Verify(broken);
  ASSERT_TRUE(Reports(v, Invariant::kResidualRowsAgree, 2, "arrival")) << Describe(v);
  EXPECT_EQ(Describe(v.front()),
            "rank 0 ordinary stage 2 arrival: invariant 1 (both sides of a boundary agree on the residual's rows): the "
            "residual is on slice but the stage was bound for it on attn");
}

TEST(Verify, CatchesAResidualSlicedASecondTime) {
  // Defect 1's plan: the append after the attention re-slices a residual that is already on the slice.
  const Plan p = MustBind(StackOf("A E A F"), {.tp = 2, .moe = MoeMode::kA2a});
  const Plan broken = WithStage(p, 3, [&](StagePlan& s) {
    s.entry.insert(s.entry.begin(), Step{StepKind::kSlice, Operand::kResidual, std::nullopt, Rows::Full(),
                                         Rows::Slice(p.config()), Owed::kNothing, Owed::kNothing, 64});
  });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_TRUE(Reports(v, Invariant::kResidualRowsAgree, 3, "entry")) << Describe(v);
}

// Invariant 1 at a stage's entry: the stage runs with the residual where
// its entry leaves it; nothing else of the plan changes.
TEST(Verify, CatchesAStageThatRecordsItsResidualOnOtherRowsThanItsEntryLeavesIt) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  ASSERT_EQ(testing::StageOf(p, Variant::kOrdinary, 1).residual, Rows::Full());
  const Plan broken = WithStage(p, 1, [&](StagePlan& s) { s.residual = Rows::Slice(p.config()); });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 1 entry: invariant 1 (both sides of a boundary agree on the residual's rows): the "
            "entry leaves the residual on full but the stage runs with it on slice\n");
}

// Invariant 2: every owed sum completes once, over its own group, before any read.
TEST(Verify, CatchesASumTakenTwice) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithStage(p, 1, [](StagePlan& s) {
    s.entry.insert(s.entry.begin(), Step{StepKind::kAllReduce, Operand::kValue, Group::kAttnTp, Rows::Full(),
                                         Rows::Full(), Owed::kAttnTp, Owed::kNothing, 64});
  });
  const std::vector<Violation> v = Verify(broken);
  ASSERT_TRUE(Reports(v, Invariant::kSumOnce, 1, "entry")) << Describe(v);
  bool twice = false;
  for (const Violation& x : v) twice |= x.message.find("the sum is taken twice") != std::string::npos;
  EXPECT_TRUE(twice) << Describe(v);
}

TEST(Verify, CatchesAPartialSumAddedBeforeItCompletes) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithStage(p, 1, [](StagePlan& s) {
    s.entry = {Step{StepKind::kAdd, Operand::kResidual, std::nullopt, Rows::Full(), Rows::Full(), Owed::kNothing,
                    Owed::kNothing, 64},
               Step{StepKind::kNorm, Operand::kResidual, std::nullopt, Rows::Full(), Rows::Full(), Owed::kNothing,
                    Owed::kNothing, 64}};
  });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_TRUE(Reports(v, Invariant::kSumOnce, 1, "entry")) << Describe(v);
}

TEST(Verify, CatchesASumNeverCompletedBeforeTheFinalNorm) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithFinal(p, [](EndPlan& f) { f.steps.clear(); });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_TRUE(Reports(v, Invariant::kSumOnce, -1, "final")) << Describe(v);
}

// Invariant 6: each stage receives the rows it declared.
TEST(Verify, CatchesAStageThatReceivesOtherRowsThanItDeclares) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  // Drop the attention's gather of its input: it would compute on its slice.
  const Plan broken = WithStage(p, 2, [](StagePlan& s) {
    s.entry.pop_back();
    s.input = s.residual;
    s.compute[0].rows_in = *s.residual;
  });
  const std::vector<Violation> v = Verify(broken);
  ASSERT_TRUE(Reports(v, Invariant::kStageRows, 2, "compute")) << Describe(v);
}

// Invariant 7: collectives name the right group for their rows.
TEST(Verify, CatchesAnAttentionSumCompletedOverTheWholeTpGroupUnderAttentionDp) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.entry[0].group = Group::kTp; });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_TRUE(Reports(v, Invariant::kGroupFitsRows, 1, "entry")) << Describe(v);
  EXPECT_TRUE(Reports(v, Invariant::kSumOnce, 1, "entry")) << Describe(v);
}

TEST(Verify, CatchesAGatherOverTheWrongGroup) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 2, [](StagePlan& s) { s.entry.back().group = Group::kDp; });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_TRUE(Reports(v, Invariant::kGroupFitsRows, 2, "entry")) << Describe(v);
}

TEST(Verify, CatchesACollectiveWithoutAGroup) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithFinal(p, [](EndPlan& f) { f.steps[0].group.reset(); });
  EXPECT_TRUE(Reports(Verify(broken), Invariant::kGroupFitsRows, -1, "final"));
}

}  // namespace
}  // namespace seam

namespace seam {
namespace {

using testing::Cut;
using testing::MustBindPipeline;
using testing::StageOf;

Plan EditedRank(const Plan& p, const std::function<void(LinePlan&)>& edit) {
  std::vector<LinePlan> lines = p.lines();
  edit(lines[0]);
  return Plan(p.header(), lines);
}

bool ReportsAny(const std::vector<Violation>& v, Invariant inv) {
  for (const Violation& x : v) {
    if (x.invariant == inv) return true;
  }
  return false;
}

const ParallelConfig kCutCfg = Cut({.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}, {1, 3});

// Invariant 3: a handoff carries the attention rows with every sum complete.
TEST(VerifyPipeline, BoundPipelinesHaveNoViolations) {
  EXPECT_TRUE(VerifyPipeline(MustBindPipeline(DeepseekModel(4, 64, 3), kCutCfg)).empty());
}

TEST(VerifyPipeline, CatchesSendsAndReceivesThatDoNotPairUp) {
  Pipeline p = MustBindPipeline(NemotronHModel("M-*-", 128).value(), Cut({.tp = 4}, {3, 1}));
  p[1] = EditedRank(p[1], [](LinePlan& l) {
    l.start.erase(l.start.begin());  // the value slice is never received
    l.start.erase(l.start.begin() + 1);
  });
  const std::vector<Violation> v = VerifyPipeline(p);
  ASSERT_TRUE(ReportsAny(v, Invariant::kHandoff)) << Describe(v);
  bool pairing = false;
  for (const Violation& x : v) {
    pairing |= x.message ==
               "rank 0 sends value on slice x128, residual on slice x128 but rank 1 receives residual on "
               "slice x128";
  }
  EXPECT_TRUE(pairing) << Describe(v);
}

// The handoff's violations, one per line: what invariant 3 reports of a pipeline.
std::string HandoffOf(const std::vector<Violation>& v) {
  std::vector<Violation> out;
  for (const Violation& x : v) {
    if (x.invariant == Invariant::kHandoff) out.push_back(x);
  }
  return Describe(out);
}

// A Nemotron-H pipeline whose rank 0 sends the value's slice, then the residual's.
Pipeline ValueAndResidualHandoff() {
  Pipeline p = MustBindPipeline(NemotronHModel("M-*-", 128).value(), Cut({.tp = 4}, {3, 1}));
  EXPECT_EQ(ShortString(p[1].lines()[0].start),
            "recv(pp) value slice; recv(pp) residual slice; ag(attn_tp) value slice->full; ag(attn_tp) residual "
            "slice->full");
  return p;
}

TEST(VerifyPipeline, ReceiverTakingTransportsInAnotherOrderIsRejected) {
  Pipeline p = ValueAndResidualHandoff();
  p[1] = EditedRank(p[1], [](LinePlan& l) { std::swap(l.start[0], l.start[1]); });
  EXPECT_EQ(HandoffOf(VerifyPipeline(p)),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): rank 0 "
            "sends value on slice x128, residual on slice x128 but rank 1 receives residual on slice x128, value on "
            "slice x128\n");
}

TEST(VerifyPipeline, ReceiverTakingATransportOfAnotherOperandIsRejected) {
  Pipeline p = ValueAndResidualHandoff();
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start[0].operand = Operand::kResidual; });
  const std::string handoff = HandoffOf(VerifyPipeline(p));
  EXPECT_NE(handoff.find("rank 0 sends value on slice x128, residual on slice x128 but rank 1 receives residual on "
                         "slice x128, residual on slice x128"),
            std::string::npos)
      << handoff;
}

TEST(VerifyPipeline, ReceiverTakingATransportOfOtherRowsIsRejected) {
  Pipeline p = ValueAndResidualHandoff();
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start[1].rows_in = Rows::Full(); });
  const std::string handoff = HandoffOf(VerifyPipeline(p));
  EXPECT_NE(handoff.find("rank 0 sends value on slice x128, residual on slice x128 but rank 1 receives value on "
                         "slice x128, residual on full x128"),
            std::string::npos)
      << handoff;
}

TEST(VerifyPipeline, ReceiverTakingATransportOfAnotherWidthIsRejected) {
  Pipeline p = ValueAndResidualHandoff();
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start[0].width = 64; });
  const std::string handoff = HandoffOf(VerifyPipeline(p));
  EXPECT_NE(handoff.find("rank 0 sends value on slice x128, residual on slice x128 but rank 1 receives value on "
                         "slice x64, residual on slice x128"),
            std::string::npos)
      << handoff;
}

TEST(VerifyPipeline, CatchesAHandoffThatDoesNotSendTheResidual) {
  Pipeline p = MustBindPipeline(DeepseekModel(4, 64, 3), kCutCfg);
  p[0] = EditedRank(p[0], [](LinePlan& l) { l.end.steps.clear(); });
  EXPECT_TRUE(ReportsAny(Verify(p[0]), Invariant::kHandoff)) << Describe(Verify(p[0]));
}

TEST(VerifyPipeline, CatchesASendOfRowsOtherThanTheSlice) {
  Pipeline p = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  p[0] = EditedRank(p[0], [](LinePlan& l) {
    l.end.steps.erase(l.end.steps.begin(), l.end.steps.begin() + 2);  // no reduce-scatter, no slice
    for (Step& s : l.end.steps) s.rows_in = s.rows_out = Rows::Full();
  });
  const std::vector<Violation> v = Verify(p[0]);
  EXPECT_TRUE(ReportsAny(v, Invariant::kHandoff)) << Describe(v);
}

TEST(VerifyPipeline, CatchesARankThatEndsTheWrongWay) {
  Pipeline p = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.end.kind = EndKind::kSend; });
  EXPECT_TRUE(ReportsAny(Verify(p[1]), Invariant::kHandoff));
}

// Invariant 4: stages away from a cut bind as they do uncut.
TEST(CompareWithUncut, StagesNearTheCutMayDifferFromUncut) {
  const Plan uncut =
      testing::MustBind(DeepseekModel(4, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  const Pipeline cut = MustBindPipeline(DeepseekModel(4, 64, 3), kCutCfg);
  // The first FFN after the cut slices the residual the receiver gathered.
  EXPECT_NE(StageOf(cut[1], Variant::kOrdinary, 3).entry, StageOf(uncut, Variant::kOrdinary, 3).entry);
  EXPECT_TRUE(CompareWithUncut(uncut, cut).empty()) << Describe(CompareWithUncut(uncut, cut));
}

TEST(CompareWithUncut, CatchesAStageAwayFromTheCutThatBindsDifferently) {
  const Plan uncut =
      testing::MustBind(DeepseekModel(4, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  Pipeline cut = MustBindPipeline(DeepseekModel(4, 64, 3), kCutCfg);
  cut[1] = EditedRank(cut[1], [](LinePlan& l) { l.stages[5].exit.clear(); });  // stage 7 forgets its return
  const std::vector<Violation> v = CompareWithUncut(uncut, cut);
  ASSERT_EQ(v.size(), 1u) << Describe(v);
  EXPECT_EQ(Describe(v[0]),
            "rank 1 ordinary stage 7 binding: invariant 4 (stages away from a cut bind as they do uncut): binds "
            "differently than uncut: exit '' departing written, residual attn vs uncut 'add slice; ag(attn_tp) "
            "residual slice->attn' departing written, residual attn");
}

// The ranks together hold every stage of the uncut plan: no more, no fewer.
TEST(CompareWithUncut, CatchesACutThatHoldsFewerStagesThanUncut) {
  const Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = EditedRank(cut[1], [](LinePlan& l) { l.stages.pop_back(); });
  EXPECT_EQ(Describe(CompareStageCounts(uncut, cut)),
            "rank 0 ordinary header: invariant 4 (stages away from a cut bind as they do uncut): the cut plans hold "
            "3 stages, the uncut plan 4\n");
}

TEST(CompareWithUncut, CatchesACutThatHoldsMoreStagesThanUncut) {
  const Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = EditedRank(cut[1], [](LinePlan& l) { l.stages.push_back(l.stages.back()); });
  EXPECT_EQ(Describe(CompareStageCounts(uncut, cut)),
            "rank 0 ordinary header: invariant 4 (stages away from a cut bind as they do uncut): the cut plans hold "
            "5 stages, the uncut plan 4\n");
}

// A tp-2 llama cut after its first layer: the sender's FFN completes its
// sum before the handoff (uncut it leaves it to the next attention) and the
// receiver's attention has nothing left to complete. Those two parts differ
// at the cut; nothing is handed on beyond it.
TEST(CompareWithUncut, CountsThePartsThatDifferAtTheCut) {
  const Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});
  const Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  CutCoverage c;
  EXPECT_TRUE(CompareWithUncut(uncut, cut, &c).empty());
  EXPECT_EQ(c.stages, 4);
  EXPECT_EQ(c.parts, 12);
  EXPECT_EQ(c.at_cut_stages, 2);
  EXPECT_EQ(c.at_cut_parts, 2);
  EXPECT_EQ(c.handed_on_stages, 0);
  EXPECT_EQ(c.handed_on_parts, 0);
}

// Under attention DP with an a2a MoE the receiver gathers the residual to
// the attention rows where uncut it stays on the slice: the difference is
// handed on to stages after the receiver's first, and counted exempt.
TEST(CompareWithUncut, CountsTheDifferencesHandedOnBeyondTheCut) {
  const Plan uncut =
      testing::MustBind(DeepseekModel(4, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  const Pipeline cut = MustBindPipeline(DeepseekModel(4, 64, 3), kCutCfg);
  CutCoverage c;
  EXPECT_TRUE(CompareWithUncut(uncut, cut, &c).empty()) << Describe(CompareWithUncut(uncut, cut));
  EXPECT_EQ(c.stages, 8);
  EXPECT_GT(c.handed_on_parts, 0);
  EXPECT_LT(c.handed_on_stages, c.stages);
}

TEST(CompareWithUncut, CatchesAStageThatComputesOnOtherRows) {
  const Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = EditedRank(cut[1], [](LinePlan& l) { l.stages[0].input = Rows::FromAxes(false, true); });
  const std::vector<Violation> v = CompareWithUncut(uncut, cut);
  ASSERT_EQ(v.size(), 1u) << Describe(v);
  EXPECT_EQ(Describe(v[0]),
            "rank 1 ordinary stage 2 binding: invariant 4 (stages away from a cut bind as they do uncut): binds "
            "differently than uncut: compute 'compute full owes attn_tp' on slice vs uncut 'compute full owes attn_tp' "
            "on full");
}

// An entry may differ only where what arrives differs.
TEST(CompareWithUncut, CatchesAnEntryThatDiffersWhereItsArrivalDoesNot) {
  const Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = EditedRank(cut[1], [](LinePlan& l) { l.stages[1].entry.pop_back(); });
  const std::vector<Violation> v = CompareWithUncut(uncut, cut);
  ASSERT_EQ(v.size(), 1u) << Describe(v);
  EXPECT_EQ(Describe(v[0]),
            "rank 1 ordinary stage 3 binding: invariant 4 (stages away from a cut bind as they do uncut): binds "
            "differently than uncut: entry '' vs uncut 'ar+add+norm(attn_tp) full'");
}

}  // namespace
}  // namespace seam

// Each check of the walker and of the replay, on a bound plan broken one
// way, with its exact report: a check weakened or dropped fails its test.
namespace seam {
namespace {

// The violations of one invariant, one per line.
std::string OfInvariant(const std::vector<Violation>& v, Invariant inv) {
  std::vector<Violation> out;
  for (const Violation& x : v) {
    if (x.invariant == inv) out.push_back(x);
  }
  return Describe(out);
}

Step Local(StepKind kind, Operand op, Rows from, Rows to, int width = 64) {
  return {kind, op, std::nullopt, from, to, Owed::kNothing, Owed::kNothing, width};
}

const ParallelConfig kTp2{.tp = 2};
const ParallelConfig kTp2Cut = Cut({.tp = 2}, {1, 1});

// ---- a rank's start ----

TEST(VerifyStart, CatchesAFirstRankThatDoesMoreThanEmbed) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = EditedRank(
      p, [](LinePlan& l) { l.start.push_back(Local(StepKind::kSlice, Operand::kValue, Rows::Full(), Rows::Full())); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kHandoff),
            "rank 0 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the first pipeline rank starts with its embedding alone\n");
}

TEST(VerifyStart, CatchesALaterRankThatReceivesNothing) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start.clear(); });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "a later pipeline rank receives nothing\n"
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the received slices are not gathered back to the attention rows\n");
}

TEST(VerifyStart, CatchesALaterRankThatEmbedsTokens) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  const Step embed = p[0].lines()[0].start[0];
  p[1] = EditedRank(p[1], [&](LinePlan& l) { l.start.insert(l.start.begin(), embed); });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "a later pipeline rank embeds tokens\n");
}

TEST(VerifyStart, CatchesAReceiverThatSumsWhatItReceives) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[1] = EditedRank(p[1], [](LinePlan& l) {
    l.start[0].owed_after = Owed::kAttnTp;
    l.start[2] = Step{StepKind::kAllReduce, Operand::kValue, Group::kAttnTp, l.start[2].rows_in,
                      l.start[2].rows_in,   Owed::kAttnTp,   Owed::kNothing, 64};
  });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start[0]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): the receiver declares a sum over attn_tp on what it receives\n"
            "rank 1 ordinary start[2]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): the receiver sums what it receives\n"
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the received slices are not gathered back to the attention rows\n");
}

TEST(VerifyStart, CatchesReceivedSlicesThatAreNotGatheredBack) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start.pop_back(); });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the received slices are not gathered back to the attention rows\n");
}

// ---- a stage ----

TEST(VerifyStage, CatchesAnEntryThatHandsComputeOtherRowsThanTheStageRecords) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [&](StagePlan& s) { s.input = Rows::Slice(p.config()); });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 1 entry: invariant 6 (each stage receives the rows it declared): the entry "
            "hands compute full rows but the stage records slice\n");
}

TEST(VerifyStage, CatchesAnArrivalOwingAnotherSumThanWasHandedOn) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.arrives.value->owed = Owed::kTp; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 1 arrival: invariant 2 (every owed sum completes once, over its group, before "
            "any read): the value owes attn_tp but the stage was bound for one owing tp\n"
            "rank 0 ordinary stage 1 entry[0]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): ar+add+norm expects the value to owe attn_tp but it owes tp\n");
}

TEST(VerifyStage, CatchesAnArrivalOnOtherRowsThanWereHandedOn) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [&](StagePlan& s) { s.arrives.value->rows = Rows::Slice(p.config()); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary stage 1 arrival: invariant 6 (each stage receives the rows it declared): the value "
            "on full owing attn_tp but the stage was bound for a value on slice owing attn_tp\n"
            "rank 0 ordinary stage 1 entry[0]: invariant 6 (each stage receives the rows it declared): "
            "ar+add+norm expects the value on full rows but it is on slice\n");
}

TEST(VerifyStage, CatchesANoOpStageThatRunsSteps) {
  const Model m = CatalogueModel("nemotron-nas").value();
  const Plan p = MustBind(m, kTp2);
  int noop = -1;
  for (const StagePlan& s : p.lines()[0].stages) {
    if (noop < 0 && s.decl.kind == StageKind::kNoOp) noop = s.index;
  }
  ASSERT_GE(noop, 0);
  const Plan broken = WithStage(p, noop, [](StagePlan& s) { s.input = Rows::Full(); });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 4 arrival: invariant 6 (each stage receives the rows it declared): a no-op "
            "stage runs steps or records rows\n");
}

// A hand-edited plan that turns a stage with steps into a no-op is bad
// input the verifier names, not an internal error where its shape is asked.
TEST(VerifyStage, CatchesAStageDeclaredANoOpThatStillRunsItsSteps) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.decl.kind = StageKind::kNoOp; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary stage 1 arrival: invariant 6 (each stage receives the rows it declared): a no-op "
            "stage runs steps or records rows\n");
}

// ---- a rank's end ----

TEST(VerifyEnd, CatchesAHandoffThatLeavesTheResidualUnsent) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[0] = EditedRank(p[0], [](LinePlan& l) { l.end.steps.pop_back(); });
  EXPECT_EQ(OfInvariant(Verify(p[0]), Invariant::kHandoff),
            "rank 0 ordinary send: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the handoff leaves the value or the residual unsent\n"
            "rank 0 ordinary send: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the handoff does not send the residual\n");
}

TEST(VerifyEnd, CatchesARankThatSendsAndRunsAnLmHead) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  const std::vector<Step> head = p[1].lines()[0].end.head;
  p[0] = EditedRank(p[0], [&](LinePlan& l) { l.end.head = head; });
  EXPECT_EQ(OfInvariant(Verify(p[0]), Invariant::kHandoff),
            "rank 0 ordinary send: invariant 3 (a handoff carries the attention rows with every sum complete): a "
            "rank that sends runs an LM head\n");
}

TEST(VerifyEnd, CatchesAStackThatEndsWithAValueNeverAdded) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [](EndPlan& f) {
    f.steps = {Step{StepKind::kAllReduce, Operand::kValue, Group::kTp, Rows::Full(), Rows::Full(), Owed::kTp,
                    Owed::kNothing, 64},
               Local(StepKind::kNorm, Operand::kResidual, Rows::Full(), Rows::Full())};
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary final[1]: invariant 2 (every owed sum completes once, over its group, before any "
            "read): reads the residual while a value is still pending\n"
            "rank 0 ordinary final: invariant 2 (every owed sum completes once, over its group, before any "
            "read): the stack ends with a value on full owing - never added\n");
}

TEST(VerifyEnd, CatchesAFinalNormThatReadsTheResidualOffTheAttentionRows) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [&](EndPlan& f) {
    f.steps.push_back(Local(StepKind::kSlice, Operand::kResidual, Rows::Full(), Rows::Slice(p.config())));
  });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary final: invariant 1 (both sides of a boundary agree on the residual's rows): the "
            "final norm does not read the residual on the attention rows\n");
}

TEST(VerifyEnd, CatchesAFinalNormThatReadsOtherRowsThanTheAttentionRows) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [&](EndPlan& f) {
    f.steps.push_back(Local(StepKind::kSlice, Operand::kInput, Rows::Full(), Rows::Slice(p.config())));
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary final: invariant 6 (each stage receives the rows it declared): the final norm does "
            "not read the attention rows\n"
            "rank 0 ordinary lm-head[0]: invariant 6 (each stage receives the rows it declared): lm-head expects "
            "the input on full rows but it is on slice\n");
}

TEST(VerifyEnd, CatchesAnLmHeadThatComputesNoLogits) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [](EndPlan& f) { f.head.erase(f.head.begin()); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary lm-head[0]: invariant 6 (each stage receives the rows it declared): ag-vocab has no "
            "logits to act on\n"
            "rank 0 ordinary lm-head: invariant 6 (each stage receives the rows it declared): the LM head's "
            "steps compute no logits\n"
            "rank 0 ordinary lm-head: invariant 6 (each stage receives the rows it declared): the LM head does "
            "not leave its logits on the attention rows\n");
}

TEST(VerifyEnd, CatchesAnLmHeadThatLeavesItsLogitsOffTheAttentionRows) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [&](EndPlan& f) {
    f.head.push_back(Local(StepKind::kSlice, Operand::kLogits, Rows::Full(), Rows::Slice(p.config()), 256));
  });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary lm-head: invariant 6 (each stage receives the rows it declared): the LM head does "
            "not leave its logits on the attention rows\n");
}

// ---- the replay of each step ----

TEST(VerifyStep, CatchesAStepThatExpectsItsOperandOnOtherRows) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken =
      WithStage(p, 1, [&](StagePlan& s) { s.exit[0].rows_in = s.exit[0].rows_out = Rows::Slice(p.config()); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary stage 1 exit[0]: invariant 6 (each stage receives the rows it declared): leave "
            "expects the value on slice rows but it is on full\n");
}

TEST(VerifyStep, CatchesALocalStepThatNamesAGroup) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) { s.entry[2].group = Group::kTp; });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 0 entry[2]: invariant 7 (collectives name the right group for their rows): "
            "norm is local but names a group\n");
}

TEST(VerifyStep, CatchesACollectiveWithoutAGroupExactly) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithFinal(p, [](EndPlan& f) { f.steps[0].group.reset(); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kGroupFitsRows),
            "rank 0 ordinary final[0]: invariant 7 (collectives name the right group for their rows): "
            "ar+add+norm is a collective without a group\n");
}

TEST(VerifyStep, CatchesASumOverAnotherGroupThanTheOneOwed) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.entry[0].group = Group::kTp; });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 1 entry[0]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): the value owes a sum over attn_tp but rs completes it over tp\n"
            "rank 0 ordinary stage 1 entry[0]: invariant 7 (collectives name the right group for their rows): "
            "rs(tp) on attn rows: the ranks of tp hold different rows\n"
            "rank 0 ordinary stage 1 entry[0]: invariant 10 (the plan moves no more bytes than its stages need): "
            "the seam from here to the next compute moves 48 bytes per token (rs(tp) value attn->slice 48) but "
            "its stages need 32\n");
}

TEST(VerifyStep, CatchesAReduceScatterThatLandsOnOtherRowsThanItsGroupGives) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  ASSERT_EQ(ShortString(testing::StageOf(p, Variant::kOrdinary, 1).entry[0]), "rs(attn_tp) value attn->slice");
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.entry[0].group = Group::kDp; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kGroupFitsRows),
            "rank 0 ordinary stage 1 entry[0]: invariant 7 (collectives name the right group for their rows): "
            "rs(dp) on attn rows: the ranks of dp hold different rows\n"
            "rank 0 ordinary stage 1 entry[0]: invariant 7 (collectives name the right group for their rows): "
            "rs(dp) from attn rows lands on attn, not slice\n");
}

TEST(VerifyStep, CatchesAGatherThatCannotTakeItsRowsThere) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 2, [](StagePlan& s) { s.entry.back().group = Group::kDp; });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 2 entry[2]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): ag(dp) input slice->attn: an all-gather takes its rows back over its group's axes\n"
            "rank 0 ordinary stage 2 entry[2]: invariant 7 (collectives name the right group for their rows): "
            "ag(dp) cannot take slice rows to attn (it gathers the attn axes)\n");
}

TEST(VerifyStep, CatchesAGatherOfAValueThatStillOwesASum) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Rows slice = Rows::Slice(p.config());
  const Plan broken = WithStage(p, 1, [&](StagePlan& s) {
    s.exit = {
        Local(StepKind::kSlice, Operand::kValue, Rows::Full(), slice),
        Step{StepKind::kAllGather, Operand::kValue, Group::kAttnTp, slice, Rows::Full(), Owed::kTp, Owed::kTp, 64},
        s.exit[0]};
    s.exit[0].owed_before = s.exit[0].owed_after = Owed::kTp;
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 1 exit[1]: invariant 2 (every owed sum completes once, over its group, before "
            "any read): gathers a value that still owes a sum over tp\n");
}

TEST(VerifyStep, CatchesASumTakenTwiceExactly) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) {
    s.entry.insert(s.entry.begin(), Step{StepKind::kAllReduce, Operand::kValue, Group::kAttnTp, Rows::Full(),
                                         Rows::Full(), Owed::kAttnTp, Owed::kNothing, 64});
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 1 entry[1]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): ar+add+norm expects the value to owe attn_tp but it owes -\n"
            "rank 0 ordinary stage 1 entry[1]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): ar+add+norm(attn_tp) sums a value that owes nothing: the sum is taken twice\n");
}

TEST(VerifyStep, CatchesAReduceScatterVUnderAttentionTp) {
  // rsv returns whole DP groups: bound at attn_tp 1, read at attn_tp 2.
  const Plan p = MustBind(StackOf("A E A"), {.tp = 4, .attn_dp = 4, .reduction = Reduction::kRsv});
  ASSERT_EQ(ShortString(testing::StageOf(p, Variant::kOrdinary, 1).exit[0]).substr(0, 3), "rsv");
  PlanHeader h = p.header();
  h.config.attn_dp = 2;
  const std::string report = OfInvariant(Verify(Plan(h, p.lines())), Invariant::kGroupFitsRows);
  EXPECT_NE(report.find("rank 0 ordinary stage 1 exit[0]: invariant 7 (collectives name the right group for their "
                        "rows): reduce-scatterv returns whole DP groups only with attn_tp=1\n"),
            std::string::npos)
      << report;
}

TEST(VerifyStep, CatchesAnAddWithNoResidual) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) {
    s.entry.insert(s.entry.begin() + 1, Local(StepKind::kAdd, Operand::kResidual, Rows::Full(), Rows::Full()));
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kResidualRowsAgree),
            "rank 0 ordinary stage 0 entry[1]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): add has no residual to act on\n"
            "rank 0 ordinary stage 0 entry[1]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): add with no residual\n");
}

TEST(VerifyStep, CatchesAReadOfEveryRowOnTheSlice) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  ASSERT_EQ(testing::StageOf(p, Variant::kOrdinary, 3).input, Rows::Slice(p.config()));
  const Plan broken = WithStage(p, 3, [](StagePlan& s) { s.decl.read = ReadKind::kAllRows; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary stage 3 entry[2]: invariant 6 (each stage receives the rows it declared): a read of "
            "every row runs on the slice\n");
}

TEST(VerifyStep, CatchesAnAddWithNoValuePending) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) {
    s.entry.insert(s.entry.begin() + 2, Local(StepKind::kAdd, Operand::kResidual, Rows::Full(), Rows::Full()));
  });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 0 entry[2]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): add with no value pending\n");
}

TEST(VerifyStep, CatchesAnAddIntoAResidualOnOtherRows) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  // The receiver adds the value it gathered into the residual's slice.
  p[1] = EditedRank(p[1], [](LinePlan& l) {
    std::swap(l.start[3], l.start.back());
    l.start.pop_back();
    l.stages[0].arrives.residual = l.start[1].rows_out;
    l.stages[0].entry.insert(l.stages[0].entry.begin() + 1,
                             Step{StepKind::kAllGather, Operand::kResidual, Group::kAttnTp, l.start[1].rows_out,
                                  Rows::Full(), Owed::kNothing, Owed::kNothing, 64});
  });
  EXPECT_EQ(Describe(Verify(p[1])),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the received slices are not gathered back to the attention rows\n"
            "rank 1 ordinary stage 2 entry[0]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): add expects the residual on full rows but it is on slice\n"
            "rank 1 ordinary stage 2 entry[0]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): adds a value on full rows into a residual on slice\n");
}

TEST(VerifyStep, CatchesAReadWithNoResidual) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) {
    s.entry.insert(s.entry.begin() + 2, Local(StepKind::kNorm, Operand::kResidual, Rows::Full(), Rows::Full()));
    std::swap(s.entry[1], s.entry[2]);
  });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 0 entry[1]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): norm has no residual to act on\n"
            "rank 0 ordinary stage 0 entry[1]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): reads with no residual\n");
}

TEST(VerifyStep, CatchesAComputeOutsideAStage) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Step compute = testing::StageOf(p, Variant::kOrdinary, 1).compute[0];
  const Plan broken = WithFinal(p, [&](EndPlan& f) { f.steps.push_back(compute); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary final[1]: invariant 6 (each stage receives the rows it declared): compute outside a "
            "stage\n"
            "rank 0 ordinary final: invariant 6 (each stage receives the rows it declared): the final norm does "
            "not read the attention rows\n"
            "rank 0 ordinary lm-head[0]: invariant 6 (each stage receives the rows it declared): lm-head has no "
            "input to act on\n");
}

TEST(VerifyStep, CatchesAStageThatComputesOnOtherRowsThanItDeclaresExactly) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kDeepseekCfg);
  const Plan broken = WithStage(p, 2, [](StagePlan& s) {
    s.entry.pop_back();
    s.input = s.residual;
    s.compute[0].rows_in = *s.residual;
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary stage 2 compute[0]: invariant 6 (each stage receives the rows it declared): the "
            "attention receives slice rows but declares attn\n");
}

TEST(VerifyStep, CatchesAStageThatProducesOtherRowsOrSumsThanItDeclares) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.compute[0].owed_after = Owed::kAttnTp; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 1 compute[0]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): the dense-ffn produces full owing attn_tp, not full owing tp\n"
            "rank 0 ordinary stage 1 exit[0]: invariant 2 (every owed sum completes once, over its group, before "
            "any read): leave expects the value to owe tp but it owes attn_tp\n"
            "rank 0 ordinary stage 1 exit: invariant 2 (every owed sum completes once, over its group, before "
            "any read): the value owes attn_tp but the exit records one owing tp\n");
}

TEST(VerifyStep, CatchesATransportOutsideThePipelineGroup) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[0] = EditedRank(p[0], [](LinePlan& l) { l.end.steps[2].group = Group::kTp; });
  EXPECT_EQ(OfInvariant(Verify(p[0]), Invariant::kHandoff),
            "rank 0 ordinary send[2]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): send runs between pipeline neighbours\n");
}

TEST(VerifyStep, CatchesASendOfAValueThatStillOwesASum) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[0] = EditedRank(p[0], [](LinePlan& l) {
    l.stages.back().exit.clear();
    l.stages.back().departs.value->owed = Owed::kTp;
    l.end.arrives = l.stages.back().departs;
    for (Step& s : l.end.steps) {
      if (s.operand == Operand::kValue) s.owed_before = s.owed_after = Owed::kTp;
    }
  });
  EXPECT_EQ(OfInvariant(Verify(p[0]), Invariant::kHandoff),
            "rank 0 ordinary send[2]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): sends a value that still owes a sum over tp\n");
}

TEST(VerifyStep, CatchesAReceiverThatDeclaresASumOnWhatItReceives) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[1] = EditedRank(p[1], [](LinePlan& l) { l.start[0].owed_after = Owed::kAttnTp; });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start[0]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): the receiver declares a sum over attn_tp on what it receives\n");
}

TEST(VerifyStep, CatchesAReceiveOfANormedInput) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[1] = EditedRank(p[1], [](LinePlan& l) {
    Step in = l.start[0];
    in.operand = Operand::kInput;
    l.start.push_back(in);
  });
  EXPECT_EQ(OfInvariant(Verify(p[1]), Invariant::kHandoff),
            "rank 1 ordinary start[4]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): receives a normed input\n");
}

TEST(VerifyStep, CatchesAnEmbeddingAfterTheLineStarted) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken =
      EditedRank(p, [](LinePlan& l) { l.stages[0].entry.insert(l.stages[0].entry.begin() + 1, l.start[0]); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kHandoff),
            "rank 0 ordinary stage 0 entry[1]: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): the embedding runs after the line started\n");
}

TEST(VerifyStep, CatchesAnEmbeddingOnOtherRowsThanItsTableSplitGives) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = EditedRank(p, [](LinePlan& l) { l.start[0].owed_after = Owed::kNothing; });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kStageRows),
            "rank 0 ordinary start[0]: invariant 6 (each stage receives the rows it declared): the embedding "
            "lands on full owing -; its table's split gives full owing tp\n");
}

TEST(VerifyStep, CatchesAStepThatExpectsTheValueToOweAnotherSum) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) { s.exit[0].owed_before = Owed::kAttnTp; });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 1 exit[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): leave(tp) value full: a leave hands an owed sum on\n"
            "rank 0 ordinary stage 1 exit[0]: invariant 2 (every owed sum completes once, over its group, before "
            "any read): leave expects the value to owe attn_tp but it owes tp\n");
}

TEST(VerifyStep, CatchesALocalSliceThatWidensItsRows) {
  Pipeline p = MustBindPipeline(LlamaModel(2), kTp2Cut);
  p[0] = EditedRank(p[0], [](LinePlan& l) { std::swap(l.end.steps[0].rows_in, l.end.steps[0].rows_out); });
  EXPECT_EQ(OfInvariant(Verify(p[0]), Invariant::kStageRows),
            "rank 0 ordinary send[0]: invariant 6 (each stage receives the rows it declared): slice expects the "
            "value on slice rows but it is on full\n"
            "rank 0 ordinary send[0]: invariant 6 (each stage receives the rows it declared): a local slice "
            "cannot take slice rows to full\n"
            "rank 0 ordinary send[2]: invariant 6 (each stage receives the rows it declared): send expects the "
            "value on slice rows but it is on full\n");
}

TEST(VerifyStep, CatchesAResidualStartedTwice) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) { s.entry.insert(s.entry.begin() + 1, s.entry[1]); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kResidualRowsAgree),
            "rank 0 ordinary stage 0 entry[2]: invariant 1 (both sides of a boundary agree on the residual's "
            "rows): starts a residual that already exists\n");
}

TEST(VerifyStep, CatchesAResidualStartedFromAValueThatOwesASum) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 0, [](StagePlan& s) { s.entry.erase(s.entry.begin()); });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 0 entry[0]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): start-residual expects the value to owe - but it owes tp\n"
            "rank 0 ordinary stage 0 entry[0]: invariant 2 (every owed sum completes once, over its group, "
            "before any read): starts the residual from an input that is missing or owes a sum\n");
}

TEST(VerifyStep, CatchesASumLeftToTheNextReaderWhenNothingIsOwed) {
  const Plan p = MustBind(LlamaModel(2), kTp2);
  const Plan broken = WithStage(p, 1, [](StagePlan& s) {
    s.exit.insert(s.exit.begin(), Step{StepKind::kAllReduce, Operand::kValue, Group::kTp, Rows::Full(), Rows::Full(),
                                       Owed::kTp, Owed::kNothing, 64});
    s.exit[1].owed_before = s.exit[1].owed_after = Owed::kNothing;
    s.departs.value->owed = Owed::kNothing;
  });
  EXPECT_EQ(OfInvariant(Verify(broken), Invariant::kSumOnce),
            "rank 0 ordinary stage 1 exit[1]: invariant 2 (every owed sum completes once, over its group, before "
            "any read): leaves a sum to the next reader, but the value owes nothing\n"
            "rank 0 ordinary stage 2 arrival: invariant 2 (every owed sum completes once, over its group, before "
            "any read): the value owes - but the stage was bound for one owing tp\n");
}

}  // namespace
}  // namespace seam

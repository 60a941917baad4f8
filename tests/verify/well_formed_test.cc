// A plan is checked against itself, its model and its configuration
// (invariant 8), the boundary-reduction policy (9) and the fewest bytes its
// stages need (10); a whole pipeline against the binder. Each test breaks a
// bound plan one way and asserts the exact violation.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <optional>

#include "seam/bind.h"
#include "seam/rebind.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::Cut;
using testing::MustBind;
using testing::MustBindPipeline;
using testing::StackOf;

constexpr Variant kOrd = Variant::kOrdinary;

Plan Edited(const Plan& p, const std::function<void(std::vector<LinePlan>&)>& edit) {
  std::vector<LinePlan> lines = p.lines();
  edit(lines);
  return Plan(p.header(), lines);
}

Plan WithHeader(const Plan& p, const std::function<void(PlanHeader&)>& edit) {
  PlanHeader h = p.header();
  edit(h);
  return Plan(h, p.lines());
}

StagePlan& StageAt(std::vector<LinePlan>& lines, int index) {
  for (StagePlan& s : lines[0].stages) {
    if (s.index == index) return s;
  }
  throw std::runtime_error("no such stage");
}

// The violations of one invariant, described one per line.
std::string Of(const std::vector<Violation>& v, Invariant inv) {
  std::vector<Violation> out;
  for (const Violation& x : v) {
    if (x.invariant == inv) out.push_back(x);
  }
  return Describe(out);
}

const ParallelConfig kA2a{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};

TEST(WellFormed, EveryCatalogueModelBindsAWellFormedPlanWithTheFewestBytes) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (ParallelConfig cfg :
         {ParallelConfig{.tp = 2}, kA2a, ParallelConfig{.tp = 8, .attn_dp = 8, .reduction = Reduction::kRsRsv}}) {
      if (!MoeDispatchesA2a(m)) cfg.moe = MoeMode::kTp;
      const Expected<Pipeline> p = BindPipeline(m, Cut(cfg, {2, m.num_layers - 2}));
      ASSERT_TRUE(p.ok()) << e.name << ": " << p.error().message;
      EXPECT_EQ(Describe(VerifyPipeline(*p)), "") << e.name << " " << Describe(cfg);
      EXPECT_TRUE(CompareWithBinder(*p).empty()) << e.name;
    }
  }
}

// ---- invariant 8: the plan agrees with itself, its model and its configuration ----

TEST(WellFormed, CatchesARankWhoseLastLayerLostItsStages) {
  const Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  const Plan broken = Edited(p[1], [](std::vector<LinePlan>& l) {
    l[0].stages.pop_back();  // layer 3 is [attention, FFN]: both go
    l[0].stages.pop_back();
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 1 ordinary stage 5 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the last stage is in layer 2 but the header ends with layer 3\n");
}

TEST(WellFormed, CatchesAnA2aMoeWithoutItsCombine) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kA2a);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 3).compute.pop_back(); });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 3 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the sparse-ffn computes 'a2a-dispatch input; compute input' but its declaration and "
            "configuration require 'a2a-dispatch input; compute input; a2a-combine value'\n");
}

TEST(WellFormed, CatchesAnA2aMoeWithoutItsDispatchAndCombine) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kA2a);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    std::vector<Step>& c = StageAt(l, 3).compute;
    c = {c[1]};
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 3 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the sparse-ffn computes 'compute input' but its declaration and configuration require "
            "'a2a-dispatch input; compute input; a2a-combine value'\n");
}

TEST(WellFormed, CatchesAReduceScatterTurnedIntoAnAllReduceWithItsRowsUnchanged) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kA2a);
  ASSERT_EQ(StageAt(const_cast<std::vector<LinePlan>&>(p.lines()), 1).entry[0].kind, StepKind::kReduceScatter);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 1).entry[0].kind = StepKind::kAllReduce; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 1 entry[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): ar(attn_tp) value attn->slice: an all-reduce keeps its rows; a reduce-scatter would "
            "change them\n");
}

TEST(WellFormed, CatchesAStageInALayerOutsideTheHeader) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 1).layer = 77; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 1 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): stage 1 is in layer 77 after a stage in layer 0: layers run on without a gap\n"
            "rank 0 ordinary stage 2 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): stage 2 is in layer 1 after a stage in layer 77: layers run on without a gap\n");
}

TEST(WellFormed, CatchesTwoStagesWithTheSameIndex) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 2).index = 1; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 1 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): stage 1 follows stage 1: stage indices run on by one\n"
            "rank 0 ordinary stage 3 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): stage 3 follows stage 1: stage indices run on by one\n");
}

TEST(WellFormed, CatchesAStepOfWidthZero) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 1).entry[0].width = 0; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 1 entry[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): ar+add+norm value is 0 wide but the model makes it 64\n");
}

TEST(WellFormed, CatchesAComputeWidthThatIsNotTheModels) {
  const Plan p = MustBind(DeepseekModel(3, 64, 3), kA2a);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 3).compute[0].width = 64; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 3 compute[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): a2a-dispatch input is 64 wide but the model makes it 192\n");
}

TEST(WellFormed, CatchesAHeaderWhoseLayersDisagreeWithTheStages) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithHeader(p, [](PlanHeader& h) { h.last_layer = 5; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 3 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the last stage is in layer 1 but the header ends with layer 4\n");
}

TEST(WellFormed, CatchesAnInputScatteredConfigurationWithoutItsLine) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { l.pop_back(); });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the configuration asks for ordinary, input-scattered batches but the plan has lines for ordinary\n");
}

TEST(WellFormed, CatchesAnInvalidConfigurationWithoutReplayingIt) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = WithHeader(p, [](PlanHeader& h) { h.config.attn_dp = 0; });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the configuration is invalid: attn_dp=0 must be at least 1\n");
}

TEST(WellFormed, CatchesARankWhoseLayersAreNotTheConfigurationsSplit) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  ParallelConfig other = p[0].config();
  other.pp_split = {1, 3};
  for (Plan& r : p) r = WithHeader(r, [&](PlanHeader& h) { h.config = other; });
  EXPECT_EQ(Of(VerifyPipeline(p), Invariant::kWellFormed),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the rank holds layers 0..1 but the configuration's split of 4 layers gives it 0..0\n"
            "rank 1 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the rank holds layers 2..3 but the configuration's split of 4 layers gives it 1..3\n");
}

TEST(WellFormed, CatchesStageIndicesThatDoNotRunOnAcrossRanks) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  p[1] = Edited(p[1], [](std::vector<LinePlan>& l) {
    for (StagePlan& s : l[0].stages) s.index += 1;
  });
  EXPECT_EQ(Of(VerifyPipeline(p), Invariant::kWellFormed),
            "rank 1 ordinary stage 5 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the rank starts at stage 5 but the previous rank ended with stage 3\n");
}

TEST(WellFormed, CatchesALineWithoutStages) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { l[0].stages.clear(); });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the line has no stages\n");
}

TEST(WellFormed, CatchesAFirstRankThatStartsAfterStageZero) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    for (StagePlan& s : l[0].stages) s.index += 2;
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 2 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the first pipeline rank starts at stage 2, not 0\n");
}

TEST(WellFormed, CatchesAFirstStageOutsideTheHeadersFirstLayer) {
  const Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  const Plan broken = WithHeader(p[1], [](PlanHeader& h) { h.first_layer = 1; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 1 ordinary stage 4 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the first stage is in layer 2 but the header starts at layer 1\n");
}

TEST(WellFormed, CatchesAnInputScatteredLineThatHoldsOtherStages) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { l[1].stages.back().layer = 0; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 input-scattered stage 3 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): stage 3 is in layer 0 after a stage in layer 1: layers run on without a gap\n"
            "rank 0 input-scattered stage 3 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the last stage is in layer 0 but the header ends with layer 1\n"
            "rank 0 input-scattered header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the input-scattered line holds other stages than the ordinary line\n");
}

// A configuration with attention DP validates only without input-scattered
// batches: a plan that holds their line anyway is refused for both.
TEST(WellFormed, CatchesAnInputScatteredLineUnderAttentionDp) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    l.push_back(l[0]);
    l[1].variant = Variant::kInputScattered;
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the configuration asks for ordinary batches but the plan has lines for ordinary, input-scattered\n"
            "rank 0 input-scattered header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): input-scattered batches need tp > 1, attn_dp = 1 and cp = 1\n"
            "rank 0 input-scattered stage 0 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the attention computes 'compute input' but its declaration and configuration "
            "require 'ag input; compute input'\n"
            "rank 0 input-scattered stage 2 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the attention computes 'compute input' but its declaration and configuration "
            "require 'ag input; compute input'\n");
}

TEST(WellFormed, CatchesAStageThatCannotRunOnInputScatteredBatches) {
  // Nemotron-H's mixers cannot: its plan bound without input-scattered
  // batches, given one's line and configuration.
  const Plan p = MustBind(NemotronHModel("M-*-", 128).value(), {.tp = 2});
  const Plan broken =
      Edited(WithHeader(p, [](PlanHeader& h) { h.config.input_scattered = true; }), [](std::vector<LinePlan>& l) {
        l.push_back(l[0]);
        l[1].variant = Variant::kInputScattered;
      });
  EXPECT_NE(Of(Verify(broken), Invariant::kWellFormed)
                .find("rank 0 input-scattered stage 0 header: invariant 8 (the plan agrees with itself, its model and "
                      "its configuration): a mixer of this declaration cannot run on input-scattered batches under "),
            std::string::npos)
      << Of(Verify(broken), Invariant::kWellFormed);
}

TEST(WellFormed, CatchesAComputeStepOutsideAStagesCompute) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    StagePlan& s = StageAt(l, 1);
    s.exit.insert(s.exit.begin(), s.compute[0]);
    s.compute.clear();
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 1 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the dense-ffn computes 'nothing' but its declaration and configuration require "
            "'compute input'\n"
            "rank 0 ordinary stage 1 exit[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): compute belongs to a stage's compute, not its exit\n");
}

TEST(WellFormed, CatchesAnLmHeadOnARankThatSends) {
  Pipeline p = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  const std::vector<Step> head = p[1].lines()[0].end.head;
  const Plan broken = Edited(p[0], [&](std::vector<LinePlan>& l) { l[0].end.head = head; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary lm-head: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): an LM head where the plan names no vocabulary or the rank sends\n");
}

TEST(WellFormed, CatchesALastRankWithoutItsLmHead) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { l[0].end.head.clear(); });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary lm-head: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the last rank of a model with a vocabulary of 256 has no LM head\n");
}

TEST(WellFormed, CatchesAnLmHeadStepOfAnotherWidthThanTheVocabulary) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { l[0].end.head.back().width = 64; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary lm-head[1]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): ag-vocab logits is 64 wide but the head makes it 256\n");
}

TEST(WellFormed, CatchesAStepThatHasNoPlaceInAnLmHead) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    l[0].end.head.insert(l[0].end.head.begin(), Step{StepKind::kNorm, Operand::kResidual, std::nullopt, Rows::Full(),
                                                     Rows::Full(), Owed::kNothing, Owed::kNothing, 64});
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary lm-head[0]: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): norm residual has no place in an LM head\n");
}

TEST(WellFormed, CatchesRanksThatAreNotOnePipeline) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  p[1] = WithHeader(p[1], [](PlanHeader& h) { h.model = "other"; });
  EXPECT_EQ(Describe(VerifyAcrossRanks(p)),
            "rank 1 ordinary header: invariant 3 (a handoff carries the attention rows with every sum complete): "
            "the ranks' plans are not one pipeline of the same model and configuration\n");
}

TEST(WellFormed, CatchesARankThatDoesNotStartWhereThePreviousOneEnded) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  p[1] = WithHeader(p[1], [](PlanHeader& h) { h.first_layer = 3; });
  EXPECT_NE(Describe(VerifyAcrossRanks(p))
                .find("rank 1 ordinary header: invariant 3 (a handoff carries the attention rows with every sum "
                      "complete): the rank starts at layer 3 but the previous one ended before layer 2\n"),
            std::string::npos)
      << Describe(VerifyAcrossRanks(p));
}

TEST(WellFormed, CatchesAReceiverWithoutTheSendersBatchVariant) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2, .input_scattered = true}, {2, 2}));
  p[1] = Edited(p[1], [](std::vector<LinePlan>& l) { l.pop_back(); });
  EXPECT_EQ(Of(VerifyAcrossRanks(p), Invariant::kHandoff),
            "rank 1 input-scattered start: invariant 3 (a handoff carries the attention rows with every sum "
            "complete): rank 1 has no input-scattered batches to receive\n");
}

TEST(WellFormed, CatchesLayersThatTheConfigurationCannotSplit) {
  Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {2, 2}));
  for (Plan& r : p) r = WithHeader(r, [](PlanHeader& h) { h.config.pp_split = {1, 1}; });
  EXPECT_EQ(Of(VerifyAcrossRanks(p), Invariant::kWellFormed),
            "rank 0 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): "
            "the 4 layers cannot be split so: the layer split 1+1 covers 2 layers but the model has 4; the "
            "counts must add up to the model's layers\n");
}

// ---- invariant 4: the cut plans against the uncut one ----

TEST(CompareWithUncut, CatchesACutRankWithAStageTheUncutPlanLacks) {
  const Plan uncut = MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = Edited(cut[1], [](std::vector<LinePlan>& l) { l[0].stages.back().index = 9; });
  EXPECT_EQ(Describe(CompareRankWithUncut(uncut, cut[1])),
            "rank 1 ordinary stage 9 binding: invariant 4 (stages away from a cut bind as they do uncut): binds "
            "differently than uncut: the uncut plan has no such stage\n");
}

TEST(CompareWithUncut, CatchesACutStageThatDeclaresAnotherStage) {
  const Plan uncut = MustBind(LlamaModel(2), {.tp = 2});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}));
  cut[1] = Edited(cut[1], [](std::vector<LinePlan>& l) { l[0].stages.back().layer = 0; });
  EXPECT_EQ(Describe(CompareRankWithUncut(uncut, cut[1])),
            "rank 1 ordinary stage 3 binding: invariant 4 (stages away from a cut bind as they do uncut): binds "
            "differently than uncut: declares another stage than uncut\n");
}

TEST(CompareWithUncut, CatchesACutPlanWithoutALineOfTheUncutPlan) {
  const Plan uncut = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  Pipeline cut = MustBindPipeline(LlamaModel(2), Cut({.tp = 2, .input_scattered = true}, {1, 1}));
  cut[1] = Edited(cut[1], [](std::vector<LinePlan>& l) { l.pop_back(); });
  EXPECT_EQ(Describe(CompareRankWithUncut(uncut, cut[1])),
            "rank 1 input-scattered header: invariant 4 (stages away from a cut bind as they do uncut): the cut "
            "plan has no input-scattered line\n");
}

// ---- invariant 9: the boundary-reduction policy ----

TEST(Policy, CatchesAnFfnSumLeftToAReduceScatterUnderAr) {
  // Under rs the TP FFN leaves its sum and the fully data-parallel FFN's
  // entry reduce-scatters it; under ar that plan breaks the policy.
  const ParallelConfig rs{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kTp, .reduction = Reduction::kRs};
  const Plan p = MustBind(StackOf("A E A F"), rs);
  const Plan broken = WithHeader(p, [](PlanHeader& h) { h.config.reduction = Reduction::kAr; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kPolicy),
            "rank 0 ordinary stage 1 exit[0]: invariant 9 (an FFN's sum completes only by collectives the boundary "
            "reduction allows): rs completes an FFN's sum under --reduction ar, which allows no fixed-size "
            "reduce-scatter for it\n");
}

// The policy holds for every FFN: a dense model's plan bound under rs, its
// header rewritten to ar, breaks it where its dense FFN leaves its sum to a
// reduce-scatter.
TEST(Policy, CatchesADenseFfnSumLeftToAReduceScatterUnderAr) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs});
  ASSERT_EQ(ShortString(testing::StageOf(p, kOrd, 1).exit), "rs(tp) value full->slice; ag(attn_tp) value slice->attn");
  const Plan broken = WithHeader(p, [](PlanHeader& h) { h.config.reduction = Reduction::kAr; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kPolicy),
            "rank 0 ordinary stage 1 exit[0]: invariant 9 (an FFN's sum completes only by collectives the boundary "
            "reduction allows): rs completes an FFN's sum under --reduction ar, which allows no fixed-size "
            "reduce-scatter for it\n"
            "rank 0 ordinary stage 3 exit[0]: invariant 9 (an FFN's sum completes only by collectives the boundary "
            "reduction allows): rs completes an FFN's sum under --reduction ar, which allows no fixed-size "
            "reduce-scatter for it\n");
}

TEST(Policy, CatchesAReduceScatterVThePolicyDoesNotAllow) {
  const Plan p = MustBind(StackOf("A E A"), {.tp = 4, .attn_dp = 4, .reduction = Reduction::kRsv});
  const Plan broken = WithHeader(p, [](PlanHeader& h) { h.config.reduction = Reduction::kRs; });
  EXPECT_EQ(Of(Verify(broken), Invariant::kPolicy),
            "rank 0 ordinary stage 1 exit[0]: invariant 9 (an FFN's sum completes only by collectives the boundary "
            "reduction allows): rsv under --reduction rs, which does not allow the reduce-scatterv\n");
}

TEST(Policy, AllowsAnAttentionsSumToBeReduceScatteredUnderAr) {
  // The policy is about FFN sums: the attention's sum reduce-scatters onto
  // the slice of a fully data-parallel FFN under any policy.
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .attn_dp = 2, .dense_tp = 1});
  EXPECT_EQ(ShortString(testing::StageOf(p, kOrd, 1).entry[0]), "rs(attn_tp) value attn->slice");
  EXPECT_EQ(Of(Verify(p), Invariant::kPolicy), "");
}

// ---- invariant 10: the fewest bytes ----

TEST(FewestBytes, CatchesAnAllReduceWhereAReduceScatterOntoTheSliceSuffices) {
  // Defect of an FFN entry that all-reduces the attention's sum and slices
  // locally: correct values, twice the bytes. The seam begins at the
  // attention's exit (a leave, no bytes); the message names the first step
  // of it that moves bytes.
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .attn_dp = 2, .dense_tp = 1});
  const Plan broken = Edited(p, [&](std::vector<LinePlan>& l) {
    std::vector<Step>& e = StageAt(l, 1).entry;
    const Rows attn = Rows::Attention(p.config());
    const Rows slice = Rows::Slice(p.config());
    e[0] = Step{StepKind::kAllReduce, Operand::kValue, Group::kAttnTp, attn, attn, Owed::kAttnTp, Owed::kNothing, 64};
    e.insert(e.begin() + 1,
             Step{StepKind::kSlice, Operand::kValue, std::nullopt, attn, slice, Owed::kNothing, Owed::kNothing, 64});
  });
  EXPECT_EQ(
      Describe(Verify(broken)),
      "rank 0 ordinary stage 1 entry[0]: invariant 10 (the plan moves no more bytes than its stages need): "
      "the seam from here to the next compute moves 64 bytes per token (ar(attn_tp) value attn 64) but its stages "
      "need 32\n");
}

TEST(FewestBytes, CatchesAResidualGatheredBeforeAHandoffThatSlicesItAgain) {
  const Pipeline p = MustBindPipeline(DeepseekModel(4, 64, 3), Cut(kA2a, {2, 2}));
  const Rows attn = Rows::Attention(p[0].config());
  const Rows slice = Rows::Slice(p[0].config());
  const Plan broken = Edited(p[0], [&](std::vector<LinePlan>& l) {
    StageAt(l, 3).exit.push_back(Step{StepKind::kAllGather, Operand::kResidual, Group::kAttnTp, slice, attn,
                                      Owed::kNothing, Owed::kNothing, 64});
    StageAt(l, 3).departs.residual = attn;
    l[0].end.arrives.residual = attn;
    l[0].end.steps.insert(l[0].end.steps.begin(), Step{StepKind::kSlice, Operand::kResidual, std::nullopt, attn, slice,
                                                       Owed::kNothing, Owed::kNothing, 64});
  });
  EXPECT_EQ(Describe(Verify(broken)),
            "rank 0 ordinary stage 3 compute[2]: invariant 10 (the plan moves no more bytes than its stages need): "
            "the seam from here to the next compute moves 136 bytes per token (a2a-combine(tp) value slice 72, "
            "ag(attn_tp) residual slice->attn 32, send(pp) residual slice 32) but its stages need 104\n");
}

// ---- the binder: a valid plan that is not what seam binds ----

TEST(CompareWithBinder, CatchesAValidPlanThatSeamDoesNotBind) {
  // Keeping the residual on the slice through the trailing attention keeps
  // every invariant and moves the same bytes; it is still not seam's plan.
  const Plan p = MustBind(StackOf("A E A"), {.tp = 2, .moe = MoeMode::kA2a});
  const Plan q = MustBind(StackOf("A E A F"), {.tp = 2, .moe = MoeMode::kA2a});
  ASSERT_EQ(ShortString(testing::StageOf(p, kOrd, 1).exit), "add slice; ag(attn_tp) residual slice->full");
  const Plan other = Edited(p, [&](std::vector<LinePlan>& l) {
    // The trailing attention bound as it is before an FFN, the final norm completing onto the slice.
    StageAt(l, 1) = testing::StageOf(q, kOrd, 1);
    StageAt(l, 2) = testing::StageOf(q, kOrd, 2);
    l[0].end.arrives = StageAt(l, 2).departs;
    const Rows full = Rows::Full();
    const Rows slice = Rows::Slice(p.config());
    l[0].end.steps = {
        Step{StepKind::kReduceScatter, Operand::kValue, Group::kAttnTp, full, slice, Owed::kAttnTp, Owed::kNothing, 64},
        Step{StepKind::kAdd, Operand::kResidual, std::nullopt, slice, slice, Owed::kNothing, Owed::kNothing, 64},
        Step{StepKind::kAllGather, Operand::kResidual, Group::kAttnTp, slice, full, Owed::kNothing, Owed::kNothing, 64},
        Step{StepKind::kNorm, Operand::kResidual, std::nullopt, full, full, Owed::kNothing, Owed::kNothing, 64}};
  });
  EXPECT_EQ(Describe(Verify(other)), "");
  EXPECT_EQ(BytesPerToken(other.lines()[0], other.header()), BytesPerToken(p.lines()[0], p.header()));
  const std::vector<std::string> diff = CompareWithBinder({other});
  ASSERT_FALSE(diff.empty());
  EXPECT_EQ(diff.front(), "+ ordinary stage 1 exit[0]: add residual slice -> slice, owes - -> -, width 64");
}

// The first step of `kind` in the pipeline, wherever it sits: a rank's
// receive, a stage's entry, compute or exit, or its end.
struct Found {
  size_t rank;
  Plan edited;
};
std::optional<Found> WithOperand(const Pipeline& ranks, StepKind kind, Operand operand) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::vector<LinePlan> lines = ranks[r].lines();
    std::vector<std::vector<Step>*> lists{&lines[0].start, &lines[0].end.steps, &lines[0].end.head};
    for (StagePlan& s : lines[0].stages) lists.insert(lists.end(), {&s.entry, &s.compute, &s.exit});
    for (std::vector<Step>* steps : lists) {
      for (Step& step : *steps) {
        if (step.kind != kind) continue;
        step.operand = operand;
        return Found{r, Plan(ranks[r].header(), lines)};
      }
    }
  }
  return std::nullopt;
}

// Each step kind's row of seam/step_kind.h says which buffers it acts on;
// a step on any other is malformed, whatever else is right about it.
TEST(WellFormed, EachStepKindActsOnlyOnTheOperandsItsSpecificationAllows) {
  const std::vector<Pipeline> plans{
      MustBindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1})),
      MustBindPipeline(LlamaModel(2), Cut({.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs}, {1, 1})),
      MustBindPipeline(LlamaModel(2), Cut({.tp = 8, .attn_dp = 8, .reduction = Reduction::kRsRsv}, {1, 1})),
      BindPipeline(LlamaModel(2), Cut({.tp = 2}, {1, 1}), {.fuse = false}).value(),
      MustBindPipeline(DeepseekModel(3, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}),
      MustBindPipeline(LlamaModel(2), {.tp = 4, .cp = 2}),
      MustBindPipeline(LlamaModel(2), {.tp = 4, .dcp = 2}),
  };
  int checked = 0;
  for (const StepSpec& spec : kStepSpecs) {
    for (Operand wrong : {Operand::kValue, Operand::kResidual, Operand::kInput, Operand::kLogits, Operand::kKeys,
                          Operand::kQueries, Operand::kPartials}) {
      if (spec.operands.Has(wrong)) continue;
      std::optional<Found> f;
      for (const Pipeline& p : plans) {
        if (!f) f = WithOperand(p, spec.kind, wrong);
      }
      ASSERT_TRUE(f.has_value()) << "no " << spec.name << " step in the plans";
      const std::string report = Of(Verify(f->edited), Invariant::kWellFormed);
      // A stage's compute section is checked whole against its declaration.
      const bool in_compute = spec.kind == StepKind::kCompute || spec.kind == StepKind::kDispatch ||
                              spec.kind == StepKind::kCombine || spec.kind == StepKind::kGatherKeys ||
                              spec.kind == StepKind::kGatherQueries || spec.kind == StepKind::kExchangePartials;
      const std::string want = in_compute
                                   ? fmt::format("{} {}", spec.name, Name(wrong))
                                   : fmt::format("{} does not act on the {}; it acts on the ", spec.name, Name(wrong));
      EXPECT_NE(report.find(want), std::string::npos) << spec.name << " on the " << Name(wrong) << ":\n" << report;
      ++checked;
    }
  }
  // Fourteen kinds act on one buffer of seven, send and recv on two, the
  // all-gather, the all-to-all's two and the compute on any of the first
  // three, the slice on any of the first four.
  EXPECT_EQ(checked, 14 * 6 + 2 * 5 + 4 * 4 + 1 * 3);
}

// ---- context parallelism: each attention gathers its CP peers' keys once, over cp ----

const ParallelConfig kCp{.tp = 4, .cp = 2};

TEST(WellFormed, CatchesAnAttentionUnderCpThatDoesNotGatherItsPeersKeys) {
  const Plan p = MustBind(StackOf("A F"), kCp);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    std::vector<Step>& compute = StageAt(l, 0).compute;
    compute.erase(compute.begin());
  });
  EXPECT_EQ(Of(Verify(broken), Invariant::kWellFormed),
            "rank 0 ordinary stage 0 compute: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the attention computes 'compute input' but its declaration and configuration "
            "require 'ag-kv keys; compute input'\n");
}

TEST(WellFormed, CatchesAKeysGatherOverAnotherGroupThanCp) {
  const Plan p = MustBind(StackOf("A F"), kCp);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 0).compute[0].group = Group::kDp; });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_NE(Of(v, Invariant::kWellFormed).find("ag-kv runs over dp, not cp"), std::string::npos) << Describe(v);
  EXPECT_NE(Of(v, Invariant::kGroupFitsRows)
                .find("gathers keys and values over dp: the other shards of its "
                      "requests are its CP group's"),
            std::string::npos)
      << Describe(v);
}

TEST(WellFormed, CatchesAKeysGatherWithoutContextParallelism) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 4});
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) {
    std::vector<Step>& compute = StageAt(l, 0).compute;
    compute.insert(compute.begin(),
                   Step{.kind = StepKind::kGatherKeys, .operand = Operand::kKeys, .group = Group::kCp, .width = 128});
  });
  const std::vector<Violation> v = Verify(broken);
  EXPECT_NE(Of(v, Invariant::kWellFormed)
                .find("the attention computes 'ag-kv keys; compute input' but its "
                      "declaration and configuration require 'compute input'"),
            std::string::npos)
      << Describe(v);
  EXPECT_NE(Of(v, Invariant::kFewestBytes).find("gathers keys and values without context parallelism"),
            std::string::npos)
      << Describe(v);
}

TEST(WellFormed, CatchesAKeysGatherOfNoWidth) {
  const Plan p = MustBind(StackOf("A F"), kCp);
  const Plan broken = Edited(p, [](std::vector<LinePlan>& l) { StageAt(l, 0).compute[0].width = 0; });
  EXPECT_NE(Of(Verify(broken), Invariant::kWellFormed)
                .find("ag-kv keys is 0 wide but the model makes it its heads' keys and values wide"),
            std::string::npos);
}

// The byte count counts the CP peers' keys: (cp - 1) of this rank's rows'.
TEST(WellFormed, TheKeysGatherMovesEachPeersShareOfTheKeys) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 8, .attn_dp = 2, .cp = 2});
  const Step& gather = testing::StageOf(p, kOrd, 0).compute[0];
  ASSERT_EQ(gather.kind, StepKind::kGatherKeys);
  // A rank's rows are 1/4 of the batch (two DP groups, two CP ranks); it
  // receives its one peer's, 2 bytes an element (bf16 on the wire).
  EXPECT_DOUBLE_EQ(BytesPerToken(gather, p.header()), 1.0 * gather.width * 2 / 4);
}

}  // namespace
}  // namespace seam

// Pipeline parallel: layer splits, neighbour declarations, the handoff rules
// and the worked examples that cut a stack.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "bind/rank.h"
#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/pipeline.h"
#include "seam/sweep.h"
#include "seam/topology.h"
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

std::string Receive(const Plan& p, Variant v = kOrd) { return ShortString(p.line(v)->start); }
std::string End(const Plan& p, Variant v = kOrd) { return ShortString(p.line(v)->end.steps); }

// ---- the layer split ----

TEST(LayerSplit, AnEvenSplitPutsTheRemainderOnTheLastRanks) {
  const Expected<std::vector<LayerRange>> r = SplitLayers({.pp = 3}, 8);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<LayerRange>{{0, 2}, {2, 5}, {5, 8}}));
}

TEST(LayerSplit, AnExplicitSplitGivesEachRankItsCount) {
  const Expected<std::vector<LayerRange>> r = SplitLayers({.pp = 2, .pp_split = {1, 3}}, 4);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<LayerRange>{{0, 1}, {1, 4}}));
}

TEST(LayerSplit, RejectsASplitThatDoesNotAddUpToTheLayers) {
  EXPECT_EQ(SplitLayers({.pp = 2, .pp_split = {1, 2}}, 4).error().message,
            "the layer split 1+2 covers 3 layers but the model has 4; the counts must add up to the model's layers");
}

TEST(LayerSplit, RejectsARankWithNoLayers) {
  EXPECT_EQ(SplitLayers({.pp = 2, .pp_split = {0, 4}}, 4).error().message,
            "the layer split 0+4 gives pipeline rank 0 0 layers; every rank needs at least one layer");
}

TEST(LayerSplit, RejectsMoreRanksThanLayers) {
  EXPECT_EQ(SplitLayers({.pp = 5}, 4).error().message,
            "pp=5 is more than the model's 4 layers; every pipeline rank needs at least one layer");
}

TEST(LayerSplit, APipelineRankWithOnlyNoOpStagesPassesTheStateOn) {
  // NAS models have whole layers of no-ops; a rank holding only those
  // receives the rows and sends them on as they came.
  const Model m = StackOf("A F N N A F");
  for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
    const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = r};
    const Pipeline p = MustBindPipeline(m, Cut(cfg, {2, 2, 2}));
    EXPECT_TRUE(CompareWithUncut(testing::MustBind(m, cfg), p).empty()) << Name(r);
    EXPECT_EQ(p[1].line(kOrd)->start.size() > 0, true);
  }
}

// ---- neighbour declarations ----

// Every range of a model whose layers hold several stages, no-ops among them
// and whole layers of no-ops: the rank's stages are StagesOf its layers, the
// neighbour before is the last stage that does something in any earlier
// layer, the one after the first in any later layer, and the rank sees them
// in that order.
TEST(NeighbourDeclarations, ARankSeesItsStagesAndTheNearestStageThatDoesSomethingOnEitherSide) {
  const std::vector<std::vector<StageDecl>> layers = {{AttentionStage(), DenseFfnStage()},
                                                      {NoOpStage(), NoOpStage()},
                                                      {AttentionStage(), NoOpStage()},
                                                      {NoOpStage()},
                                                      {NoOpStage(), MixerStage(), SparseFfnStage({.top_k = 2})},
                                                      {NoOpStage(), NoOpStage()}};
  const Model m{.name = "mixed", .num_layers = static_cast<int>(layers.size()), .hidden = 64, .layer = [layers](int i) {
                  return layers[static_cast<size_t>(i)];
                }};
  const auto does_something = [](const StageRef& s) { return s.decl.kind != StageKind::kNoOp; };
  const auto same = [](const std::optional<StageRef>& a, const std::optional<StageRef>& b) {
    return a.has_value() == b.has_value() &&
           (!a || (a->index == b->index && a->layer == b->layer && a->slot == b->slot && a->decl == b->decl));
  };
  int checked = 0;
  for (int first = 0; first <= m.num_layers; ++first) {
    for (int last = first; last <= m.num_layers; ++last) {
      const bind::RankStages got = bind::StagesAround(m, {first, last});
      const std::vector<StageRef> before = StagesOf(m, 0, first);
      const std::vector<StageRef> own = StagesOf(m, first, last);
      const std::vector<StageRef> after = StagesOf(m, last, m.num_layers);
      std::optional<StageRef> want_before, want_after;
      if (auto it = std::find_if(before.rbegin(), before.rend(), does_something); it != before.rend())
        want_before = *it;
      if (auto it = std::find_if(after.begin(), after.end(), does_something); it != after.end()) want_after = *it;
      const std::string where = std::to_string(first) + ".." + std::to_string(last);
      EXPECT_TRUE(same(got.neighbours.before, want_before)) << where;
      EXPECT_TRUE(same(got.neighbours.after, want_after)) << where;
      ASSERT_EQ(got.own().size(), own.size()) << where;
      for (size_t i = 0; i < own.size(); ++i) EXPECT_TRUE(same(got.own()[i], own[i])) << where << " stage " << i;
      std::vector<std::optional<StageRef>> order;
      if (want_before) order.push_back(want_before);
      order.insert(order.end(), own.begin(), own.end());
      if (want_after) order.push_back(want_after);
      ASSERT_EQ(got.around.size(), order.size()) << where;
      for (size_t i = 0; i < order.size(); ++i) EXPECT_TRUE(same(got.around[i], order[i])) << where << " at " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 28);
}

TEST(NeighbourDeclarations, ARankThatBuiltItsDeclaredStagesBinds) {
  const Model m = DeepseekModel(4, 64, 3);
  BindOptions o{.built = std::vector{m.layer(1), m.layer(2), m.layer(3)}};
  EXPECT_TRUE(BindChecked(m, Cut({.tp = 2}, {1, 3}), 1, o).ok());
}

TEST(NeighbourDeclarations, ABuiltStageThatDisagreesWithTheDeclarationFunctionNamesTheFirstDifferingFact) {
  const Model m = DeepseekModel(4, 64, 3);
  BindOptions o{.built = std::vector{m.layer(1), m.layer(2), m.layer(3)}};
  (*o.built)[1][1].top_k = 4;
  EXPECT_EQ(Bind(m, Cut({.tp = 2}, {1, 3}), 1, o).error().message,
            "pipeline rank 1 built layer 2 stage 1 differently from the model's declaration function: top_k=4 vs "
            "top_k=3 (built vs declared)");
  (*o.built)[1][1] = DenseFfnStage();
  EXPECT_EQ(Bind(m, Cut({.tp = 2}, {1, 3}), 1, o).error().message,
            "pipeline rank 1 built layer 2 stage 1 differently from the model's declaration function: "
            "kind=dense-ffn vs kind=sparse-ffn (built vs declared)");
}

TEST(NeighbourDeclarations, ABuiltLayerWithAnotherStageCountIsAnError) {
  const Model m = DeepseekModel(4, 64, 3);
  BindOptions o{.built = std::vector{m.layer(1), std::vector{AttentionStage()}, m.layer(3)}};
  EXPECT_EQ(Bind(m, Cut({.tp = 2}, {1, 3}), 1, o).error().message,
            "pipeline rank 1 built layer 2 with 1 stages but the model's declaration function declares 2");
  o.built->pop_back();
  EXPECT_EQ(Bind(m, Cut({.tp = 2}, {1, 3}), 1, o).error().message,
            "pipeline rank 1 built 2 layers but holds layers 1..3 (3 layers)");
}

TEST(NeighbourDeclarations, AMixerBeforeTheCutLeavesItsSumToTheHandoff) {
  // Before an FFN a mixer hands its sum on as declared, across a cut as within a rank.
  const Pipeline p = MustBindPipeline(StackOf("M F M A"), Cut({.tp = 2}, {1, 3}));
  EXPECT_EQ(ShortString(StageOf(p[0], kOrd, 0).exit), "leave(attn_tp) value full");
  EXPECT_EQ(End(p[0]),
            "rs(attn_tp) value full->slice; slice residual full->slice; send(pp) value slice; "
            "send(pp) residual slice");
  // Before a handoff it leaves its sum to to_pp whatever the next rank
  // starts with: to_pp's reduce-scatter onto the slice it sends moves half
  // the bytes of an all-reduce at the mixer's exit.
  const Pipeline dp = MustBindPipeline(StackOf("F M A F"), Cut({.tp = 4, .attn_dp = 2}, {2, 2}));
  EXPECT_EQ(ShortString(StageOf(dp[0], kOrd, 1).exit), "leave(attn_tp) value attn");
  EXPECT_EQ(End(dp[0]),
            "rs(attn_tp) value attn->slice; slice residual attn->slice; send(pp) value slice; "
            "send(pp) residual slice");
  // Within a rank, before an attention under attention DP, it completes at its exit.
  const Plan uncut = MustBind(StackOf("F M A F"), {.tp = 4, .attn_dp = 2});
  EXPECT_EQ(ShortString(StageOf(uncut, kOrd, 1).exit), "ar(attn_tp) value attn");
}

TEST(NeighbourDeclarations, NoOpLayersAtTheCutAreSkippedToTheNearestStageThatComputes) {
  const Pipeline p = MustBindPipeline(StackOf("A E N N A F"), Cut({.tp = 2, .moe = MoeMode::kA2a}, {3, 3}));
  // The sparse FFN is the stage at the cut: it writes at the handoff, so the residual travels alone.
  EXPECT_EQ(End(p[0]), "send(pp) residual slice");
  EXPECT_EQ(Receive(p[1]), "recv(pp) residual slice; ag(attn_tp) residual slice->full");
}

// ---- worked examples that cut a stack ----

// E2 with --pp 2 --pp-split 1+3: rank 0's fully-DP FFN writes at the handoff
// and sends its slice of the residual; rank 1 gathers it and reads without adding.
// The stack of `length` letters whose base-5 digits are `index`: the sweep's
// A, M, F and E, and X, a MoE that --moe a2a refuses as a neighbour too.
constexpr std::string_view kStackLetters = "AMFEX";
std::string StackLetters(int index, int length) {
  std::string out(static_cast<size_t>(length), 'A');
  for (int i = length - 1; i >= 0; --i, index /= 5)
    out[static_cast<size_t>(i)] = kStackLetters[static_cast<size_t>(index % 5)];
  return out;
}

int Power(int base, int exponent) { return exponent == 0 ? 1 : base * Power(base, exponent - 1); }

// The sweep asks CheckRank of a rank it moves from where one alike lies
// (the stage after a rank is read only to refuse it): it must refuse
// exactly what Bind refuses, with Bind's error, and the stage after a rank
// must indeed refuse some that bind before another stage. Stacks of up to
// three layers hold every rank with a stage on either side.
TEST(CheckRank, RefusesExactlyTheRanksBindRefusesWithItsError) {
  int bound = 0;
  int refused = 0;
  int refused_for_the_stage_after = 0;
  for (const SweepConfig& c : DefaultSweepConfigs()) {
    for (int length = 2; length <= 3; ++length) {  // a rank reads one stage on either side
      for (int index = 0; index < Power(5, length); ++index) {
        const std::string letters = StackLetters(index, length);
        const Model m = StackOf(letters);
        for (int cuts = 1; cuts < 1 << (length - 1); ++cuts) {  // a cut after layer i where bit i is set
          ParallelConfig cfg = c.cfg;
          cfg.pp_split.clear();
          for (int layer = 0, first = 0; layer < length; ++layer) {
            if (layer + 1 == length || (cuts >> layer & 1) != 0) {
              cfg.pp_split.push_back(layer + 1 - first);
              first = layer + 1;
            }
          }
          cfg.pp = static_cast<int>(cfg.pp_split.size());
          for (int rank = 0, first = 0; rank < cfg.pp; first += cfg.pp_split[static_cast<size_t>(rank)], ++rank) {
            const Status checked = CheckRank(m, cfg, rank);
            const Expected<Plan> plan = Bind(m, cfg, rank);
            const std::string where = fmt::format("{} under {} at {} rank {}", letters, c.name, Describe(cfg), rank);
            ASSERT_EQ(checked.ok(), plan.ok()) << where;
            if (plan.ok()) {
              ++bound;
              continue;
            }
            ++refused;
            EXPECT_EQ(checked.error().message, plan.error().message) << where;
            EXPECT_EQ(checked.error().rule, plan.error().rule) << where;
            EXPECT_EQ(checked.error().stage, plan.error().stage) << where;
            const size_t after = static_cast<size_t>(first + cfg.pp_split[static_cast<size_t>(rank)]);
            if (after == letters.size()) continue;
            for (char other : kStackLetters) {
              std::string changed = letters;
              changed[after] = other;
              if (CheckRank(StackOf(changed), cfg, rank).ok()) {
                ++refused_for_the_stage_after;
                break;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(bound, 0);
  EXPECT_GT(refused, 0);
  EXPECT_GT(refused_for_the_stage_after, 0);
}

// The sweep finds a receiving rank's segment bound after another stage
// that writes at the handoff alike (sweep/segments.h): a rank that binds
// after either binds the same lines, and one after a stage that writes
// otherwise binds other lines (what it receives differs).
TEST(WritesAtHandoff, IsAllAReceivingRanksBindingReadsOfTheStageBeforeIt) {
  const std::string senders = "AMFEXR";
  int alike = 0;
  int apart = 0;
  for (const SweepConfig& c : DefaultSweepConfigs()) {
    for (int length = 1; length <= 2; ++length) {
      for (int index = 0; index < Power(5, length); ++index) {
        const std::string rank = StackLetters(index, length);
        ParallelConfig cfg = c.cfg;
        cfg.pp = 2;
        cfg.pp_split = {1, length};
        for (char a : senders) {
          for (char b : senders) {
            if (a >= b) continue;
            const Expected<Plan> after_a = Bind(StackOf(std::string(1, a) + rank), cfg, 1);
            const Expected<Plan> after_b = Bind(StackOf(std::string(1, b) + rank), cfg, 1);
            if (!after_a || !after_b) continue;
            const bool writes_alike = WritesAtHandoff(StackOf(std::string(1, a)).layer(0)[0], cfg) ==
                                      WritesAtHandoff(StackOf(std::string(1, b)).layer(0)[0], cfg);
            EXPECT_EQ(after_a->lines() == after_b->lines(), writes_alike)
                << rank << " after " << a << " and after " << b << " under " << c.name;
            ++(writes_alike ? alike : apart);
          }
        }
      }
    }
  }
  EXPECT_GT(alike, 0);
  EXPECT_GT(apart, 0);
}

TEST(WorkedExampleE2, TheCutFfnWritesAtTheHandoffAndTheReceiverReadsWithoutAdding) {
  const Pipeline p = MustBindPipeline(DeepseekModel(4, 64, 3),
                                      Cut({.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}, {1, 3}));
  EXPECT_EQ(ShortString(StageOf(p[0], kOrd, 1).exit), "add slice");
  EXPECT_EQ(End(p[0]), "send(pp) residual slice");
  EXPECT_EQ(Receive(p[1]), "recv(pp) residual slice; ag(attn_tp) residual slice->attn");
  EXPECT_EQ(ShortString(StageOf(p[1], kOrd, 2).entry), "norm attn");
  EXPECT_EQ(BytesPerToken(p[0].line(kOrd)->end.steps[0], p[0].header()), 32);  // a quarter of 128 B (bf16)
}

// E4: nemotron-h M - * - cut after the attention, T = 4, D = 1.
TEST(WorkedExampleE4, TheSenderReduceScattersTheAttentionSumAndTheReceiverGathersBoth) {
  const Pipeline p = MustBindPipeline(NemotronHModel("M-*-", 128).value(), Cut({.tp = 4}, {3, 1}));
  EXPECT_EQ(End(p[0]),
            "rs(attn_tp) value full->slice; slice residual full->slice; send(pp) value slice; "
            "send(pp) residual slice");
  EXPECT_EQ(Receive(p[1]),
            "recv(pp) value slice; recv(pp) residual slice; ag(attn_tp) value slice->full; "
            "ag(attn_tp) residual slice->full");
  EXPECT_EQ(ShortString(StageOf(p[1], kOrd, 3).entry), "add full; norm full");
}

// ---- the plan of a whole pipeline ----

TEST(PipelinePlan, EveryCatalogueModelBindsAtEverySingleCut) {
  const std::vector<ParallelConfig> grid = {{.tp = 2},
                                            {.tp = 4, .attn_dp = 2},
                                            {.tp = 4, .moe = MoeMode::kA2a},
                                            {.tp = 4, .attn_dp = 2, .dense_tp = 1},
                                            {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}};
  int cuts = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (ParallelConfig cfg : grid) {
      if (!MoeDispatchesA2a(m)) cfg.moe = MoeMode::kTp;
      const Plan uncut = testing::MustBind(m, cfg);
      for (int first = 1; first < m.num_layers; ++first) {
        const Pipeline p = MustBindPipeline(m, Cut(cfg, {first, m.num_layers - first}));
        EXPECT_TRUE(CompareWithUncut(uncut, p).empty()) << e.name << " " << Describe(CompareWithUncut(uncut, p));
        ++cuts;
      }
    }
  }
  EXPECT_GE(cuts, 5 * static_cast<int>(Catalogue().size()) * 3);  // every family has 4 layers or more
}

TEST(PipelinePlan, EachRankHoldsItsLayersAndOnlyTheLastEndsOnTheFinalNorm) {
  const Pipeline p = MustBindPipeline(LlamaModel(4), Cut({.tp = 2}, {1, 2, 1}));
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].header().first_layer, 1);
  EXPECT_EQ(p[1].header().last_layer, 3);
  EXPECT_EQ(p[0].line(kOrd)->end.kind, EndKind::kSend);
  EXPECT_EQ(p[1].line(kOrd)->end.kind, EndKind::kSend);
  EXPECT_EQ(p[2].line(kOrd)->end.kind, EndKind::kFinalNorm);
  // The first rank starts at the embedding, the later ones at what they receive.
  EXPECT_EQ(ShortString(p[0].line(kOrd)->start), "embed full owes tp");
  EXPECT_EQ(ShortString(p[1].line(kOrd)->start).substr(0, 4), "recv");
}

}  // namespace
}  // namespace seam

namespace seam {
namespace {

TEST(LayerSplit, LayerSplitsListsEveryCutIntoAtMostTheRanksGiven) {
  EXPECT_EQ(LayerSplits(3, 4), (std::vector<std::vector<int>>{{3}, {1, 2}, {2, 1}, {1, 1, 1}}));
  EXPECT_EQ(LayerSplits(4, 2), (std::vector<std::vector<int>>{{4}, {1, 3}, {2, 2}, {3, 1}}));
  EXPECT_EQ(LayerSplits(6, 4).size(), 1u + 5 + 10 + 10);
  EXPECT_EQ(LayerSplits(1, 4), (std::vector<std::vector<int>>{{1}}));
}

}  // namespace
}  // namespace seam

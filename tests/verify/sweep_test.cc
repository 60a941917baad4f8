// The cut sweep over small stacks finds no violation, and counts what it did.
#include <gtest/gtest.h>

#include <utility>

#include "seam/bind.h"
#include "seam/model.h"
#include "seam/sweep.h"
#include "sweep/cuts.h"
#include "testing.h"
#include "verify/sweep_testing.h"

namespace seam {
namespace {

TEST(Sweep, EveryCutOfEveryStackOfUpToThreeStagesKeepsTheInvariants) {
  const Expected<SweepReport> r = Sweep({.max_stages = 3, .max_pp = 4, .jobs = 2});
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const std::string& v : r->violations) ADD_FAILURE() << v;
  EXPECT_EQ(r->totals.violations, 0);
  EXPECT_EQ(r->stacks, 4 + 16 + 64);
  EXPECT_EQ(r->configs, 18 * 4);
  // 16 stacks of two stages cut once, 64 of three cut three ways. On the
  // three TP-MoE input-scattered configurations, and the three with context
  // parallelism, only the 9 + 27 stacks without a mixer bind; on the a2a
  // input-scattered one only the 4 + 8 of attentions and dense FFNs; decode
  // context parallelism binds every stack.
  EXPECT_EQ(r->totals.cuts_bound, 44 * (16 + 64 * 3) + 24 * (9 + 27 * 3) + 4 * (4 + 8 * 3));
  EXPECT_EQ(r->totals.rejected_uncut, 24 * (1 + 7 + 37) + 4 * (2 + 12 + 56));
  // Every cut's outcome is compared with the uncut stack's; where both
  // reject, by stage and rule.
  EXPECT_EQ(r->totals.cut_outcomes, 72 * (16 + 64 * 3));
  EXPECT_EQ(r->totals.rejections_compared, 24 * ((16 - 9) + (64 - 27) * 3) + 4 * ((16 - 4) + (64 - 8) * 3));
  // Invariant 4 compares every stage binding of every bound cut, on both
  // lines of an input-scattered configuration.
  EXPECT_EQ(r->totals.away_from_cut.stages, 44 * (16 * 2 + 64 * 3 * 3) + 12 * 2 * (9 * 2 + 27 * 3 * 3) +
                                                12 * (9 * 2 + 27 * 3 * 3) + 4 * 2 * (4 * 2 + 8 * 3 * 3));
  EXPECT_EQ(r->totals.away_from_cut.parts, 3 * r->totals.away_from_cut.stages);
  // Differences at the cut are found; those handed on beyond it stay few.
  EXPECT_GT(r->totals.away_from_cut.at_cut_parts, 0);
  EXPECT_LT(r->totals.away_from_cut.handed_on_stages, r->totals.away_from_cut.stages / 10);
}

TEST(Sweep, EveryCutOfEveryCatalogueModelKeepsTheInvariants) {
  const Expected<SweepReport> r = Sweep({.max_stages = 1, .max_pp = 4, .jobs = 2});
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const std::string& v : r->violations) ADD_FAILURE() << v;
  EXPECT_EQ(r->model_totals.violations, 0);
  EXPECT_EQ(r->models, static_cast<int64_t>(Catalogue().size()));
  ASSERT_EQ(r->per_model.size(), Catalogue().size());
  for (const auto& [name, counts] : r->per_model) {
    EXPECT_EQ(counts.stacks, r->configs) << name;
    EXPECT_GT(counts.cuts_bound, 0) << name;
  }
  // A four-layer model has 3 + 3 + 1 cuts into 2, 3 and 4 ranks; every
  // family binds under most of the grid.
  EXPECT_GT(r->model_totals.cuts_bound, 7 * 14 * 12);
  // What a family rejects uncut (a2a without a dispatch path, mixers on
  // input-scattered batches) its cuts reject too: checked as invariant 5.
  EXPECT_GT(r->model_totals.rejected_uncut, 0);
}

TEST(Sweep, LeavesTheCatalogueOutWhenAsked) {
  const Expected<SweepReport> r = Sweep({.max_stages = 1, .catalogue = false});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->models, 0);
  EXPECT_TRUE(r->per_model.empty());
}

// The sweep binds each rank segment once and reuses it in every cut that
// holds it. Rechecking binds every cut whole as well and checks it as it
// stands: each cut's reused pipeline must equal the whole binding (headers
// and lines) and reject as it does, and its checks must count the same.
// Here stacks of up to three stages; sweep_recheck_test.cc (the release
// suite) goes to four and the catalogue.
TEST(Sweep, ReusingRankSegmentsOfSmallStacksFindsWhatBindingEveryCutWholeFinds) {
  testing::ExpectReuseFindsWhatBindingWholeFinds({.max_stages = 3, .max_pp = 3, .jobs = 2, .catalogue = false});
}

// ---- the sweep's oracle, piece by piece, on constructed inputs ----

// Invariant 5: a cut that rejects must name the uncut stack's stage and
// rule; the same code alone is another rejection.
TEST(SweepOracle, TwoRejectionsAreTheSameOnlyWhenTheyNameTheSameStageAndRule) {
  Error uncut = Unsupported("stage 3 cannot run so");
  uncut.stage = 3;
  uncut.rule = "a2a-needs-dispatch";
  Error reworded = uncut;
  reworded.message = "the same rule in other words";
  EXPECT_TRUE(sweep::SameRule(uncut, reworded));
  Error other_stage = uncut;
  other_stage.stage = 4;
  EXPECT_FALSE(sweep::SameRule(uncut, other_stage));
  Error other_rule = uncut;
  other_rule.rule = "input-scattered-needs-gather";
  EXPECT_FALSE(sweep::SameRule(uncut, other_rule));
  Error other_code = uncut;
  other_code.code = ErrorCode::kInvalidArgument;
  EXPECT_FALSE(sweep::SameRule(uncut, other_code));
}

// A rank's edges as a cut reads them: its layers, one ordinary line of
// `stages` stages from `first_stage`, what it receives and what it sends.
RankEdges Edges(LayerRange layers, int first_stage, size_t stages, const std::vector<Transport>& receives,
                const std::vector<Transport>& sends) {
  RankEdges e{.layers = layers};
  e.transports = receives;
  e.transports.insert(e.transports.end(), sends.begin(), sends.end());
  e.lines.push_back({.variant = Variant::kOrdinary,
                     .first_stage = first_stage,
                     .last_stage = first_stage + static_cast<int>(stages) - 1,
                     .stages = stages,
                     .receives = {0, static_cast<uint32_t>(receives.size())},
                     .sends = {static_cast<uint32_t>(receives.size()), static_cast<uint32_t>(sends.size())}});
  return e;
}

struct TwoRanks {
  Plan uncut = testing::MustBind(LlamaModel(2), {.tp = 2});  // stages 0..3 in layers 0 and 1
  Transport value{Operand::kValue, Rows::Slice(uncut.config()), 64};
  Transport residual{Operand::kResidual, Rows::Slice(uncut.config()), 64};
  std::vector<LayerRange> split{{0, 1}, {1, 2}};
  RankEdges first = Edges(split[0], 0, 2, {}, {value, residual});
  RankEdges second = Edges(split[1], 2, 2, {value, residual}, {});

  std::string Found() const {
    const std::vector<const RankEdges*> ranks{&first, &second};
    return Describe(sweep::CheckAcrossCut(uncut, ranks, split));
  }
};

TEST(SweepOracle, ACutWhoseEdgesAgreeFindsNothing) { EXPECT_EQ(TwoRanks().Found(), ""); }

// Invariant 3 across a cut: the receiver takes what the sender sends, in
// order, operand, rows and width alike.
TEST(SweepOracle, ACutCountsAHandoffWhoseReceiverTakesItsTransportsInAnotherOrder) {
  TwoRanks c;
  c.second = Edges(c.split[1], 2, 2, {c.residual, c.value}, {});
  EXPECT_EQ(c.Found(),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): rank 0 "
            "sends value on slice x64, residual on slice x64 but rank 1 receives residual on slice x64, value on "
            "slice x64\n");
}

TEST(SweepOracle, ACutCountsAHandoffWhoseReceiverTakesAnotherWidth) {
  TwoRanks c;
  Transport narrow = c.value;
  narrow.width = 32;
  c.second = Edges(c.split[1], 2, 2, {narrow, c.residual}, {});
  EXPECT_EQ(c.Found(),
            "rank 1 ordinary start: invariant 3 (a handoff carries the attention rows with every sum complete): rank 0 "
            "sends value on slice x64, residual on slice x64 but rank 1 receives value on slice x32, residual on "
            "slice x64\n");
}

TEST(SweepOracle, ACutCountsRanksWhoseLayersAreNotItsSplit) {
  TwoRanks c;
  c.second.layers = {1, 3};
  EXPECT_EQ(c.Found(),
            "rank 1 ordinary header: invariant 8 (the plan agrees with itself, its model and its configuration): the "
            "rank holds layers 1..2 but the configuration's split of 3 layers gives it 1..1\n");
}

TEST(SweepOracle, ACutCountsStageIndicesThatDoNotRunOn) {
  TwoRanks c;
  c.second = Edges(c.split[1], 3, 1, {c.value, c.residual}, {});
  EXPECT_EQ(c.Found(),
            "rank 1 ordinary stage 3 header: invariant 8 (the plan agrees with itself, its model and its "
            "configuration): the rank starts at stage 3 but the previous rank ended with stage 1\n"
            "rank 0 ordinary header: invariant 4 (stages away from a cut bind as they do uncut): the cut plans hold "
            "3 stages, the uncut plan 4\n");
}

// Invariant 4: the ranks hold every stage of the uncut plan, no fewer and no more.
TEST(SweepOracle, ACutCountsRanksThatHoldFewerStagesThanUncut) {
  TwoRanks c;
  c.second = Edges(c.split[1], 2, 1, {c.value, c.residual}, {});
  EXPECT_EQ(c.Found(),
            "rank 0 ordinary header: invariant 4 (stages away from a cut bind as they do uncut): the cut plans hold "
            "3 stages, the uncut plan 4\n");
}

TEST(SweepOracle, ACutCountsRanksThatHoldMoreStagesThanUncut) {
  TwoRanks c;
  c.second = Edges(c.split[1], 2, 3, {c.value, c.residual}, {});
  EXPECT_EQ(c.Found(),
            "rank 0 ordinary header: invariant 4 (stages away from a cut bind as they do uncut): the cut plans hold "
            "5 stages, the uncut plan 4\n");
}

// The sweep counts what a cut's checks across ranks find, read from its
// segments' edges: a receiving segment whose edges take the handoff in
// another order than the sender sends it makes the one cut that holds it a
// violation (its own plan, bound again to describe it, is sound).
TEST(SweepOracle, TheSweepCountsWhatACutsEdgesFind) {
  const Model m = LlamaModel(2);
  const sweep::Subject subject{"model llama", m, {}};
  const SweepConfig config{"tp2", {.tp = 2}};
  const auto counts = [&](bool reordered) {
    sweep::SegmentTable table;
    sweep::Resolved resolved;
    sweep::Unit unit;
    // Layer 1 as the receiving rank of the cut 1+1, in the table before the sweep asks for it.
    sweep::Segment s = sweep::SegmentOf(Bind(m, testing::Cut({.tp = 2}, {1, 1}), 1), false);
    const RankEdges::Run receives = s.edges.lines.at(0).receives;
    EXPECT_EQ(receives.size, 2U);
    if (reordered) std::swap(s.edges.transports[receives.at], s.edges.transports[receives.at + 1]);
    table.Insert(sweep::KeyOf({}, 2, 1, 2), std::move(s));
    sweep::CheckCuts(config, subject, 2, false, 10, table, resolved, unit);
    return unit.counts;
  };
  const SweepCounts sound = counts(false);
  EXPECT_EQ(sound.cuts_bound, 1);
  EXPECT_EQ(sound.violations, 0);
  const SweepCounts reordered = counts(true);
  EXPECT_EQ(reordered.cuts_bound, 1);
  EXPECT_EQ(reordered.violations, 1);
}

// Invariant 5 through the sweep: a cut must bind exactly where the uncut
// stack binds, and where both reject, name its stage and rule. Each case
// seeds the sweep's table with the segment a cut reads.
struct SeededSweep {
  Model model;
  SweepConfig config;
  sweep::SegmentTable table;

  // Rank [first, last) of the cuts, as the sweep would find it in the table.
  void Seed(int first, int last, sweep::Segment s) {
    table.Insert(sweep::KeyOf({}, model.num_layers, first, last), std::move(s));
  }
  sweep::Segment Bound(const ParallelConfig& cfg, int first, int last) const {
    std::vector<int> split;
    if (first > 0) split.push_back(first);
    split.push_back(last - first);
    if (last < model.num_layers) split.push_back(model.num_layers - last);
    return sweep::SegmentOf(Bind(model, testing::Cut(cfg, split), first > 0 ? 1 : 0), false);
  }
  static sweep::Segment Refused(int stage, const std::string& rule) {
    Error e = Unsupported("refused at stage " + std::to_string(stage));
    e.stage = stage;
    e.rule = rule;
    return sweep::SegmentOf(Expected<Plan>(e), false);
  }
  sweep::Unit Run() {
    sweep::Resolved resolved;
    sweep::Unit unit;
    sweep::CheckCuts(config, {"model " + model.name, model, {}}, 2, false, 10, table, resolved, unit);
    return unit;
  }
};

std::string Lines(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

TEST(SweepOracle, ACutThatRejectsWhatTheUncutStackBindsIsAViolation) {
  SeededSweep s{LlamaModel(2), {"tp2", {.tp = 2}}};
  s.Seed(1, 2, SeededSweep::Refused(2, "a rule"));
  const sweep::Unit unit = s.Run();
  EXPECT_EQ(unit.counts.violations, 1);
  EXPECT_EQ(Lines(unit.violations),
            "model llama under tp2 cut 1+1: invariant 5 (a cut rejects only what the uncut stack rejects): the "
            "cut rejects: refused at stage 2\n");
}

TEST(SweepOracle, ACutThatBindsWhatTheUncutStackRejectsIsAViolation) {
  const Model m = CatalogueModel("gpt-oss").value();
  SeededSweep s{m, {"tp2 a2a", {.tp = 2, .moe = MoeMode::kA2a}}};
  ASSERT_FALSE(Bind(m, s.config.cfg, 0).ok());
  // Every rank of the cut 1+3 found bound (as it binds under TP-MoE).
  s.Seed(0, 1, s.Bound({.tp = 2}, 0, 1));
  s.Seed(1, 4, s.Bound({.tp = 2}, 1, 4));
  const sweep::Unit unit = s.Run();
  EXPECT_EQ(unit.counts.violations, 1);
  EXPECT_EQ(Lines(unit.violations),
            "model gpt-oss under tp2 a2a cut 1+3: invariant 5 (a cut rejects only what the uncut stack rejects): "
            "the cut binds what the uncut stack rejects: stage 1 (sparse-ffn, layer 0): this MoE has no "
            "all-to-all dispatch path (rule: a2a MoE needs a dispatch/combine in the model); use --moe tp\n");
}

TEST(SweepOracle, ACutThatRejectsByAnotherStageOrRuleThanTheUncutStackIsAViolation) {
  const Model m = CatalogueModel("gpt-oss").value();
  SeededSweep s{m, {"tp2 a2a", {.tp = 2, .moe = MoeMode::kA2a}}};
  const Expected<Plan> uncut = Bind(m, s.config.cfg, 0);
  ASSERT_FALSE(uncut.ok());
  s.Seed(0, 1, SeededSweep::Refused(uncut.error().stage, uncut.error().rule + " elsewhere"));
  s.Seed(0, 2, SeededSweep::Refused(uncut.error().stage + 1, uncut.error().rule));
  s.Seed(0, 3, SeededSweep::Refused(uncut.error().stage, uncut.error().rule));
  const sweep::Unit unit = s.Run();
  EXPECT_EQ(unit.counts.rejections_compared, 3);
  EXPECT_EQ(unit.counts.violations, 2);
  EXPECT_EQ(Lines(unit.violations),
            "model gpt-oss under tp2 a2a cut 1+3: invariant 5 (a cut rejects only what the uncut stack rejects): "
            "the cut rejects stage 1 (rule: a2a MoE needs a dispatch/combine in the model elsewhere) but the "
            "uncut stack stage 1 (rule: a2a MoE needs a dispatch/combine in the model)\n"
            "model gpt-oss under tp2 a2a cut 2+2: invariant 5 (a cut rejects only what the uncut stack rejects): "
            "the cut rejects stage 2 (rule: a2a MoE needs a dispatch/combine in the model) but the uncut stack "
            "stage 1 (rule: a2a MoE needs a dispatch/combine in the model)\n");
}

TEST(Sweep, RejectsBadOptions) {
  EXPECT_EQ(Sweep({.max_stages = 0}).error().message, "--max-stages 0 must be between 1 and 8");
  EXPECT_EQ(Sweep({.jobs = 0}).error().message, "--jobs 0 must be at least 1");
  EXPECT_EQ(Sweep({.max_pp = 0}).error().message, "--max-pp 0 must be at least 1");
}

}  // namespace
}  // namespace seam

// The structural diff: empty for equal plans, and otherwise one line per
// difference that names its place (header field, variant, stage, side, step),
// steps aligned so an inserted or removed one is one line, then the change in
// bytes per token.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
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

bool IsBytesLine(const std::string& d) { return d.find("bytes/token (") != std::string::npos; }

// The diff without the bytes lines that close it, for tests of the structure.
Lines Structural(const Lines& diff) {
  Lines out;
  std::copy_if(diff.begin(), diff.end(), std::back_inserter(out), [](const std::string& d) { return !IsBytesLine(d); });
  return out;
}
Lines Structural(const Plan& a, const Plan& b) { return Structural(Diff(a, b)); }

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
                               "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=rs pp=1",
                               "bytes/token (ordinary): 896 -> 896 (no change)"}));
}

TEST(PlanDiff, ChangedHeaderFactsAreEachListedByName) {
  const Plan a = Llama();
  const Plan b = WithHeader(a, [](PlanHeader& h) {
    h.model = "llama-edited";
    h.hidden = 128;
    h.wire.act = WireDtype::kFp32;
    h.last_layer = 3;
  });
  EXPECT_EQ(Structural(a, b), (Lines{"model: llama != llama-edited", "hidden: 64 != 128", "act_dtype: bf16 != fp32",
                                     "layers: 0..2 != 0..3"}));
}

TEST(PlanDiff, ChangedStepIsListedWithItsVariantStageSideAndIndex) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[1].entry[0].group = Group::kTp; });
  EXPECT_EQ(
      Structural(a, b),
      Lines{"~ ordinary stage 1 entry[0]: ar+add+norm(attn_tp) value full -> full, owes attn_tp -> -, width 64 != "
            "ar+add+norm(tp) value full -> full, owes attn_tp -> -, width 64"});
}

TEST(PlanDiff, ChangedWidthIsListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[3].compute[0].width = 32; });
  EXPECT_EQ(Structural(a, b),
            Lines{"~ ordinary stage 3 compute[0]: compute input full -> full, owes - -> tp, width 64 != "
                  "compute input full -> full, owes - -> tp, width 32"});
}

// A difference the short text does not show (the operand of a fused step) is
// still listed at its place.
TEST(PlanDiff, StepDifferingOnlyInAFieldTheShortTextHidesIsStillListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[1].entry[0].operand = Operand::kResidual; });
  const Lines d = Structural(a, b);
  ASSERT_EQ(d.size(), 1U);
  EXPECT_EQ(d[0].rfind("~ ordinary stage 1 entry[0]: ", 0), 0U) << d[0];
}

TEST(PlanDiff, MissingStepIsListedAsRemovedOrInserted) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[2].exit.clear(); });
  EXPECT_EQ(Structural(a, b),
            Lines{"- ordinary stage 2 exit[0]: leave(attn_tp) value full -> full, owes attn_tp -> attn_tp, width 64"});
  EXPECT_EQ(Structural(b, a),
            Lines{"+ ordinary stage 2 exit[0]: leave(attn_tp) value full -> full, owes attn_tp -> attn_tp, width 64"});
}

TEST(PlanDiff, MissingFinalStepIsListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.end.steps.clear(); });
  EXPECT_EQ(Structural(a, b), Lines{"- ordinary final[0]: ar+add+norm(tp) value full -> full, owes tp -> -, width 64"});
}

TEST(PlanDiff, MissingLastStageIsListedByIndex) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages.pop_back(); });
  EXPECT_EQ(Structural(a, b), Lines{"- ordinary stage 3 (layer 1, dense-ffn): 1 entry, 1 compute, 1 exit steps"});
}

TEST(PlanDiff, ChangedBoundaryAndDeclarationAreListed) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) {
    l.stages[0].decl = MixerStage();
    l.stages[1].arrives.value->owed = Owed::kTp;
    l.end.arrives.residual = std::nullopt;
  });
  EXPECT_EQ(Structural(a, b), (Lines{"ordinary stage 0 declaration differs: kind=attention vs kind=mixer",
                                     "ordinary stage 1 arrives: value full owes attn_tp, residual full != "
                                     "value full owes tp, residual full",
                                     "ordinary final arrives: value full owes tp, residual full != "
                                     "value full owes tp, residual none"}));
}

TEST(PlanDiff, SeveralDifferencesAreListedInPlanOrder) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) {
    l.stages[3].exit[0].group = Group::kAttnTp;
    l.stages[0].entry[2].width = 8;
  });
  const Lines d = Structural(a, b);
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0],
            "~ ordinary stage 0 entry[2]: norm residual full -> full, owes - -> -, width 64 != "
            "norm residual full -> full, owes - -> -, width 8");
  EXPECT_EQ(d[1],
            "~ ordinary stage 3 exit[0]: leave(tp) value full -> full, owes tp -> tp, width 64 != "
            "leave(attn_tp) value full -> full, owes tp -> tp, width 64");
}

TEST(PlanDiff, MissingVariantIsListedForTheSideThatLacksIt) {
  const Plan scattered = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  // The same header, only the input-scattered line removed.
  const Plan ordinary_only(scattered.header(), {*scattered.line(Variant::kOrdinary)});
  EXPECT_EQ(Structural(scattered, ordinary_only), Lines{"only the first plan has input-scattered batches"});
  EXPECT_EQ(Structural(ordinary_only, scattered), Lines{"only the second plan has input-scattered batches"});
}

TEST(PlanDiff, PlanWithInputScatteredAgainstOneWithoutListsConfigAndVariant) {
  const Plan plain = Llama();
  const Plan scattered = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  EXPECT_EQ(Structural(plain, scattered),
            (Lines{"config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
                   "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar input-scattered pp=1",
                   "only the second plan has input-scattered batches"}));
}

TEST(PlanDiff, AttentionDpAgainstPlainTpListsTheMovedRowsAndTheExtraSteps) {
  // Under attn_dp=2 the attention runs on its DP group's rows and the dense
  // FFN gathers them over dp: the rows change at every stage and steps appear.
  const Plan tp2 = Llama();
  const Plan dp = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2});
  const Lines d = Structural(tp2, dp);
  ASSERT_GE(d.size(), 3U);
  EXPECT_EQ(d[0],
            "config: tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1 != "
            "tp=4 attn_dp=2 (attn_tp=2) dense_tp=4 moe=tp reduction=ar pp=1");
  // The embedding: vocabulary-parallel under TP attention, whole on each rank under attention DP.
  EXPECT_EQ(d[1],
            "~ ordinary start[0]: embed value full -> full, owes - -> tp, width 64 != "
            "embed value attn -> attn, owes - -> -, width 64");
  EXPECT_EQ(d[2], "ordinary stage 0 arrives: value full owes tp, residual none != value attn, residual none");
  EXPECT_NE(
      std::find(d.begin(), d.end(), "+ ordinary stage 1 entry[1]: ag(dp) input attn -> full, owes - -> -, width 64"),
      d.end());
  EXPECT_NE(std::find(d.begin(), d.end(), "+ ordinary final[1]: norm residual attn -> attn, owes - -> -, width 64"),
            d.end());
  // Under attention DP the LM head gathers the DP groups' rows and returns each its own.
  EXPECT_EQ(d.back(), "+ ordinary lm-head[3]: slice logits full -> attn, owes - -> -, width 256");
}

// ---- alignment: one edit is one line, whatever comes after it ----

// llama [A F][A F] under tp=4, attn_dp=2: each FFN's entry is
// [ar+add+norm(attn_tp) attn, ag(dp) input attn->full].
Plan LlamaAttnDp() { return MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2}); }

// A step no plan binds there, so its place in the alignment is unambiguous.
const Step kExtra{StepKind::kSlice,
                  Operand::kResidual,
                  std::nullopt,
                  Rows::Full(),
                  Rows::FromAxes(true, false),
                  Owed::kNothing,
                  Owed::kNothing,
                  64};
constexpr const char* kExtraText = "slice residual full -> attn, owes - -> -, width 64";

TEST(PlanDiff, AnInsertedStepIsOneLineWhereverItIs) {
  const Plan a = LlamaAttnDp();
  const size_t steps = a.lines()[0].stages[1].entry.size();
  ASSERT_EQ(steps, 2U);
  for (size_t at = 0; at <= steps; ++at) {
    const Plan b = Edited(a, [&](LinePlan& l) {
      std::vector<Step>& entry = l.stages[1].entry;
      entry.insert(entry.begin() + static_cast<std::ptrdiff_t>(at), kExtra);
    });
    EXPECT_EQ(Structural(a, b), Lines{fmt::format("+ ordinary stage 1 entry[{}]: {}", at, kExtraText)}) << at;
    EXPECT_EQ(Structural(b, a), Lines{fmt::format("- ordinary stage 1 entry[{}]: {}", at, kExtraText)}) << at;
  }
}

TEST(PlanDiff, AnInsertedStepBeforeAChangedOneIsTwoLines) {
  const Plan a = LlamaAttnDp();
  const Plan b = Edited(a, [](LinePlan& l) {
    std::vector<Step>& entry = l.stages[3].entry;
    entry[1].width = 32;
    entry.insert(entry.begin(), kExtra);
  });
  EXPECT_EQ(Structural(a, b),
            (Lines{fmt::format("+ ordinary stage 3 entry[0]: {}", kExtraText),
                   "~ ordinary stage 3 entry[1->2]: ag(dp) input attn -> full, owes - -> -, width 64 != "
                   "ag(dp) input attn -> full, owes - -> -, width 32"}));
}

TEST(PlanDiff, AChangedStepAmongOthersIsOneTildeLine) {
  const Plan a = LlamaAttnDp();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages[1].entry[0].group = Group::kTp; });
  EXPECT_EQ(
      Structural(a, b),
      Lines{"~ ordinary stage 1 entry[0]: ar+add+norm(attn_tp) value attn -> attn, owes attn_tp -> -, width 64 != "
            "ar+add+norm(tp) value attn -> attn, owes attn_tp -> -, width 64"});
}

TEST(PlanDiff, AStageOnePlanLacksIsOneLineAndTheStagesAfterItStillMatch) {
  const Plan a = Llama();
  const Plan b = Edited(a, [](LinePlan& l) { l.stages.erase(l.stages.begin() + 1); });
  EXPECT_EQ(Structural(a, b), Lines{"- ordinary stage 1 (layer 0, dense-ffn): 1 entry, 1 compute, 1 exit steps"});
  EXPECT_EQ(Structural(b, a), Lines{"+ ordinary stage 1 (layer 0, dense-ffn): 1 entry, 1 compute, 1 exit steps"});
  // A change further on is still listed at its own stage, not shifted.
  const Plan c = Edited(b, [](LinePlan& l) { l.stages[2].compute[0].width = 32; });
  EXPECT_EQ(Structural(a, c),
            (Lines{"- ordinary stage 1 (layer 0, dense-ffn): 1 entry, 1 compute, 1 exit steps",
                   "~ ordinary stage 3 compute[0]: compute input full -> full, owes - -> tp, width 64 != "
                   "compute input full -> full, owes - -> tp, width 32"}));
}

// ---- bytes per token ----

// deepseek-v2-lite under tp=4 attn_dp=2 dense_tp=1 a2a: stage 3 (the first
// MoE) enters with rs(attn_tp) value attn->slice, 32 bytes per token.
const ParallelConfig kDeepseekCfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};

// The plan with the first reduce-scatter of stage `index`'s entry removed.
Plan WithoutReduceScatter(const Plan& p, int index) {
  return Edited(p, [&](LinePlan& l) {
    for (StagePlan& s : l.stages) {
      if (s.index != index) continue;
      const auto rs = std::find_if(s.entry.begin(), s.entry.end(),
                                   [](const Step& st) { return st.kind == StepKind::kReduceScatter; });
      ASSERT_NE(rs, s.entry.end());
      s.entry.erase(rs);
    }
  });
}

TEST(PlanDiff, TheBytesLineShowsWhatARemovedCollectiveMoved) {
  const Plan a = MustBind(CatalogueModel("deepseek-v2-lite").value(), kDeepseekCfg);
  ASSERT_EQ(BytesPerToken(a.lines()[0], a.header()), 1136);
  const Plan b = WithoutReduceScatter(a, 3);
  EXPECT_EQ(Diff(a, b),
            (Lines{"- ordinary stage 3 entry[0]: rs(attn_tp) value attn -> slice, owes attn_tp -> -, width 64",
                   "bytes/token (ordinary): 1136 -> 1104 (-32)"}));
  EXPECT_EQ(Diff(b, a).back(), "bytes/token (ordinary): 1104 -> 1136 (+32)");
}

TEST(PlanDiff, APipelineDiffEndsWithTheBytesOfEachRankAndTheTotal) {
  const Expected<Pipeline> a =
      BindPipelineChecked(CatalogueModel("deepseek-v2-lite").value(),
                          {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2});
  ASSERT_TRUE(a.ok()) << a.error().message;
  Pipeline b = *a;
  b[1] = WithoutReduceScatter(b[1], 5);
  const Lines d = Diff(*a, b);
  ASSERT_EQ(d.size(), 4U) << fmt::format("{}", fmt::join(d, "\n"));
  EXPECT_EQ(d[0].rfind("rank 1: - ordinary stage 5 entry[", 0), 0U) << d[0];
  const double r0 = BytesPerToken((*a)[0].lines()[0], (*a)[0].header());
  const double r1 = BytesPerToken((*a)[1].lines()[0], (*a)[1].header());
  EXPECT_EQ(d[1], fmt::format("rank 0: bytes/token (ordinary): {} -> {} (no change)", r0, r0));
  EXPECT_EQ(d[2], fmt::format("rank 1: bytes/token (ordinary): {} -> {} (-32)", r1, r1 - 32));
  EXPECT_EQ(d[3], fmt::format("total bytes/token (ordinary): {} -> {} (-32)", r0 + r1, r0 + r1 - 32));
}

TEST(PlanDiff, TheBytesOfInputScatteredBatchesAreListedWhenBothPlansHaveThem) {
  const Plan a = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  std::vector<LinePlan> lines = a.lines();
  lines[1].stages[1].entry[0].width = 32;
  const Lines d = Diff(a, Plan(a.header(), lines));
  ASSERT_GE(d.size(), 2U);
  EXPECT_TRUE(IsBytesLine(d[d.size() - 2])) << d[d.size() - 2];
  EXPECT_EQ(d[d.size() - 2].rfind("bytes/token (ordinary): ", 0), 0U) << d[d.size() - 2];
  EXPECT_NE(d.back().find(" (-"), std::string::npos) << d.back();
  EXPECT_EQ(d.back().rfind("bytes/token (input-scattered): ", 0), 0U) << d.back();
}

// ---- every field ----

// Any edit that makes two plans unequal is listed: the header's fields, a
// step's, a stage's declaration and boundaries, the end, a rank's receive.
TEST(PlanDiff, AChangeToAnyFieldOfAPlanIsListed) {
  const Expected<Pipeline> ranks = BindPipelineChecked(LlamaModel(4), {.tp = 4, .attn_dp = 2, .pp = 2});
  ASSERT_TRUE(ranks.ok()) << ranks.error().message;
  const Plan& a = (*ranks)[1];
  ASSERT_FALSE(a.lines()[0].start.empty());
  using Edit = std::function<void(PlanHeader&, LinePlan&)>;
  const auto step = [](LinePlan& l) -> Step& { return l.stages[1].entry[0]; };
  const std::vector<std::pair<std::string, Edit>> edits = {
      {"model", [](PlanHeader& h, LinePlan&) { h.model += "-x"; }},
      {"hidden", [](PlanHeader& h, LinePlan&) { h.hidden *= 2; }},
      {"residual_streams", [](PlanHeader& h, LinePlan&) { h.residual_streams = 4; }},
      {"act_dtype", [](PlanHeader& h, LinePlan&) { h.wire.act = WireDtype::kFp32; }},
      {"dispatch_dtype", [](PlanHeader& h, LinePlan&) { h.wire.dispatch = WireDtype::kFp8; }},
      {"config tp", [](PlanHeader& h, LinePlan&) { h.config.tp = 8; }},
      {"config dense_tp spelled otherwise",
       [](PlanHeader& h, LinePlan&) { h.config.dense_tp = h.config.dense_tp == 0 ? h.config.tp : 0; }},
      {"config moe", [](PlanHeader& h, LinePlan&) { h.config.moe = MoeMode::kA2a; }},
      {"config input_scattered", [](PlanHeader& h, LinePlan&) { h.config.input_scattered = true; }},
      {"config reduction", [](PlanHeader& h, LinePlan&) { h.config.reduction = Reduction::kRsv; }},
      {"config pp_split",
       [](PlanHeader& h, LinePlan&) {
         h.config.pp_split = {2, 2};
       }},
      {"pp_rank", [](PlanHeader& h, LinePlan&) { h.pp_rank = 0; }},
      {"first_layer", [](PlanHeader& h, LinePlan&) { h.first_layer = 1; }},
      {"last_layer", [](PlanHeader& h, LinePlan&) { h.last_layer = 5; }},
      {"step kind", [&](PlanHeader&, LinePlan& l) { step(l).kind = StepKind::kAllReduce; }},
      {"step operand", [&](PlanHeader&, LinePlan& l) { step(l).operand = Operand::kResidual; }},
      {"step group", [&](PlanHeader&, LinePlan& l) { step(l).group = std::nullopt; }},
      {"step rows_in", [&](PlanHeader&, LinePlan& l) { step(l).rows_in = Rows::Full(); }},
      {"step rows_out", [&](PlanHeader&, LinePlan& l) { step(l).rows_out = Rows::FromAxes(true, true); }},
      {"step owed_before", [&](PlanHeader&, LinePlan& l) { step(l).owed_before = Owed::kTp; }},
      {"step owed_after", [&](PlanHeader&, LinePlan& l) { step(l).owed_after = Owed::kTp; }},
      {"step width", [&](PlanHeader&, LinePlan& l) { step(l).width = 1; }},
      {"receive step", [](PlanHeader&, LinePlan& l) { l.start[0].width = 1; }},
      {"stage index", [](PlanHeader&, LinePlan& l) { l.stages[1].index = 99; }},
      {"stage layer", [](PlanHeader&, LinePlan& l) { l.stages[1].layer = 99; }},
      {"declaration kind", [](PlanHeader&, LinePlan& l) { l.stages[1].decl = MixerStage(); }},
      {"declaration update", [](PlanHeader&, LinePlan& l) { l.stages[1].decl.update = UpdateKind::kHyperConnection; }},
      {"declaration ffn_width", [](PlanHeader&, LinePlan& l) { l.stages[1].decl.ffn_width = 7; }},
      {"arrives value rows", [](PlanHeader&, LinePlan& l) { l.stages[1].arrives.value->rows = Rows::Full(); }},
      {"arrives value owed", [](PlanHeader&, LinePlan& l) { l.stages[1].arrives.value->owed = Owed::kNothing; }},
      {"arrives value update",
       [](PlanHeader&, LinePlan& l) { l.stages[1].arrives.value->update = UpdateKind::kHyperConnection; }},
      {"arrives written", [](PlanHeader&, LinePlan& l) { l.stages[1].arrives.value = std::nullopt; }},
      {"arrives residual", [](PlanHeader&, LinePlan& l) { l.stages[1].arrives.residual = std::nullopt; }},
      {"input", [](PlanHeader&, LinePlan& l) { l.stages[1].input = std::nullopt; }},
      {"residual", [](PlanHeader&, LinePlan& l) { l.stages[1].residual = Rows::Full(); }},
      {"compute step", [](PlanHeader&, LinePlan& l) { l.stages[1].compute[0].owed_after = Owed::kNothing; }},
      {"exit step", [](PlanHeader&, LinePlan& l) { l.stages[1].exit.clear(); }},
      {"departs", [](PlanHeader&, LinePlan& l) { l.stages[1].departs.value->update = UpdateKind::kHyperConnection; }},
      {"end kind", [](PlanHeader&, LinePlan& l) { l.end.kind = EndKind::kSend; }},
      {"end arrives", [](PlanHeader&, LinePlan& l) { l.end.arrives.residual = std::nullopt; }},
      {"end step", [](PlanHeader&, LinePlan& l) { l.end.steps.back().width = 1; }},
      {"variant", [](PlanHeader&, LinePlan& l) { l.variant = Variant::kInputScattered; }},
  };
  for (const auto& [what, edit] : edits) {
    PlanHeader h = a.header();
    std::vector<LinePlan> lines = a.lines();
    edit(h, lines[0]);
    const Plan b(h, lines);
    ASSERT_FALSE(a == b) << what << ": the edit changes nothing";
    EXPECT_FALSE(Structural(a, b).empty()) << what;
    EXPECT_FALSE(Structural(b, a).empty()) << what;
  }
}

}  // namespace
}  // namespace seam

// The worked examples of docs/binding.md §5 that fit one pipeline rank, step for
// step and byte for byte (hidden 64, fp32: a full row is 256 bytes).
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "testing.h"

namespace seam {
namespace {

using testing::kFp32Wire;

// The examples count 4-byte floats.
Plan MustBind(const Model& m, const ParallelConfig& cfg) { return testing::MustBind(m, cfg, {.wire = kFp32Wire}); }
using testing::StackOf;
using testing::StageOf;

constexpr Variant kOrd = Variant::kOrdinary;
constexpr Variant kScat = Variant::kInputScattered;

std::string Steps(const StagePlan& s) {
  return ShortString(s.entry) + " | " + ShortString(s.compute) + " | " + ShortString(s.exit);
}

// E1: llama [A F], T = 2, D = 1, ar. The vocabulary-parallel embedding's sum
// completes at the first entry; each layer after the first all-reduces
// twice: 2 x AR(N*h) = 2 x N*h*4 bytes per rank.
TEST(WorkedExampleE1, LlamaFusesEachSumIntoTheNextEntry) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 2});
  EXPECT_EQ(ShortString(p.lines().front().start), "embed full owes tp");
  EXPECT_EQ(
      Steps(StageOf(p, kOrd, 0)),
      "ar(tp) value full; start-residual full; norm full | compute full owes attn_tp | leave(attn_tp) value full");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 1)), "ar+add+norm(attn_tp) full | compute full owes tp | leave(tp) value full");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 2)), "ar+add+norm(tp) full | compute full owes attn_tp | leave(attn_tp) value full");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 3)), "ar+add+norm(attn_tp) full | compute full owes tp | leave(tp) value full");
  EXPECT_EQ(ShortString(p.line(kOrd)->end.steps), "ar+add+norm(tp) full");
  const PlanHeader& h = p.header();
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 2), h) + BytesPerToken(StageOf(p, kOrd, 3), h), 2 * 64 * 4);
}

// E2: deepseek [A F][A E], T = 4, D = 2, dense_tp = 1, a2a MoE.
TEST(WorkedExampleE2, DeepseekRunsItsFfnsOnTheSliceAndGathersTheResidualAtTheStackEnd) {
  const Plan p = MustBind(DeepseekModel(2, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  EXPECT_EQ(Steps(StageOf(p, kOrd, 0)),
            "start-residual attn; norm attn | compute attn owes attn_tp | leave(attn_tp) value attn");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 1)),
            "rs(attn_tp) value attn->slice; slice residual attn->slice; add slice; norm slice | compute slice | ");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 2)),
            "add slice; norm slice; ag(attn_tp) input slice->attn | compute attn owes attn_tp | "
            "leave(attn_tp) value attn");
  EXPECT_EQ(Steps(StageOf(p, kOrd, 3)),
            "rs(attn_tp) value attn->slice; add slice; norm slice | "
            "a2a-dispatch(tp) input slice; compute slice; a2a-combine(tp) value slice | "
            "add slice; ag(attn_tp) residual slice->attn");
  EXPECT_EQ(ShortString(p.line(kOrd)->end.steps), "norm attn");
  // Attention rows are 1/2 of the batch (128 B/token); the slice 1/4 (64).
  const PlanHeader& h = p.header();
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 1), h), 64);                 // RS over 2 of 128 B
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 2), h), 64);                 // AG over 2 to 128 B
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 3), h), 64 + 2 * 144 + 64);  // a2a: 3/4 of 3 x 64 B each way
}

// E3: llama input-scattered, T = 2. Under rs the FFN leaves its sum to the
// next attention's reduce-scatter; under ar it all-reduces at its exit.
TEST(WorkedExampleE3, InputScatteredLlamaCompletesOnTheSliceAndGathersTheResidualForTheFfn) {
  const Plan rs = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true, .reduction = Reduction::kRs});
  EXPECT_EQ(Steps(StageOf(rs, kScat, 0)),
            "rs(tp) value full->slice; start-residual slice; norm slice | "
            "ag(attn_tp) input slice->full; compute full owes attn_tp | leave(attn_tp) value full");
  EXPECT_EQ(Steps(StageOf(rs, kScat, 1)),
            "rs(attn_tp) value full->slice; add slice; ag(attn_tp) residual slice->full; norm full | "
            "compute full owes tp | leave(tp) value full");
  EXPECT_EQ(ShortString(StageOf(rs, kScat, 2).entry),
            "rs(tp) value full->slice; slice residual full->slice; add slice; norm slice");
  EXPECT_EQ(ShortString(rs.line(kScat)->end.steps), "ar+add+norm(tp) full");
  // The FFN entry's reduce-scatter + all-gather moves what one all-reduce would.
  EXPECT_EQ(BytesPerToken(StageOf(rs, kScat, 1), rs.header()), 2 * 64 * 4 / 2);

  const Plan ar = MustBind(LlamaModel(2), {.tp = 2, .input_scattered = true});
  EXPECT_EQ(ShortString(StageOf(ar, kScat, 1).exit), "ar(tp) value full");
  EXPECT_EQ(ShortString(StageOf(ar, kScat, 2).entry),
            "slice value full->slice; slice residual full->slice; add slice; norm slice");
}

// E5: zaya1-shaped A E A F, T = 2, a2a (defect 1): the residual is sliced
// once, at the MoE entry, never a second time.
TEST(WorkedExampleE5, TheResidualIsSlicedOnceAndGatheredBackForTheTpFfn) {
  const Plan p = MustBind(StackOf("A E A F"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 1).entry),
            "rs(attn_tp) value full->slice; slice residual full->slice; add slice; norm slice");
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 1).exit), "");
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 2).entry), "add slice; norm slice; ag(attn_tp) input slice->full");
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 3).entry),
            "rs(attn_tp) value full->slice; add slice; ag(attn_tp) residual slice->full; norm full");
  EXPECT_EQ(BytesPerToken(StageOf(p, kOrd, 3), p.header()), 2 * 128);
}

// E6: A E A ending on an attention, T = 2, a2a (defect 2): the MoE returns
// the residual to the attention rows before the trailing attention.
TEST(WorkedExampleE6, AnFfnOnItsSliceReturnsTheResidualBeforeATrailingAttention) {
  const Plan p = MustBind(StackOf("A E A"), {.tp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 1).exit), "add slice; ag(attn_tp) residual slice->full");
  EXPECT_EQ(StageOf(p, kOrd, 1).departs, (Boundary{std::nullopt, Rows::Full()}));
  EXPECT_EQ(ShortString(StageOf(p, kOrd, 2).entry), "norm full");
  EXPECT_EQ(ShortString(p.line(kOrd)->end.steps), "ar+add+norm(attn_tp) full");
}

// E7: an attention after an attention with the residual on the slice under
// attention DP completes its sum over attention TP, never over TP.
TEST(WorkedExampleE7, AttentionAfterAttentionOnTheSliceReducesOverAttentionTp) {
  const Plan p = MustBind(StackOf("A E A A E"), {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a});
  const StagePlan& second = StageOf(p, kOrd, 3);
  EXPECT_EQ(second.residual, Rows::Slice(p.config()));
  EXPECT_EQ(ShortString(second.entry),
            "rs(attn_tp) value attn->slice; add slice; norm slice; ag(attn_tp) input slice->attn");
  // Together the same bytes as one all-reduce over attention TP of 128 B.
  EXPECT_EQ(BytesPerToken(second, p.header()), 2 * 0.5 * 128);
}

}  // namespace
}  // namespace seam

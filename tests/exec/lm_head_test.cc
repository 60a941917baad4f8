// The embedding and the LM head as parts of the plan: where each runs, what
// it moves, what the verifier refuses, and the logits bit for bit.
#include <gtest/gtest.h>

#include "exec_testing.h"
#include "run/interpreter.h"
#include "seam/runtime/exec.h"
#include "seam/verify.h"

namespace seam {
namespace {

using testing::MustBatch;
using testing::MustBind;
using testing::MustReference;
using testing::MustWeights;

std::string Head(const Plan& p) { return ShortString(p.lines().front().end.head); }

// TP attention: every rank holds every row; the vocabulary splits over tp
// and its columns are gathered.
TEST(LmHead, UnderTpAttentionTheVocabularySplitsOverTheTpGroup) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4});
  EXPECT_EQ(p.header().vocab, LlamaModel(2).dims->vocab);
  EXPECT_EQ(Head(p), "lm-head input full; ag-vocab(tp) logits full");
}

// Attention DP (SGLang's default): gather every DP group's rows, split the
// vocabulary over the whole TP group, and hand each group its own rows back.
TEST(LmHead, UnderAttentionDpItGathersTheDpGroupsRowsAndReturnsThem) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2});
  EXPECT_EQ(Head(p), "ag(dp) input attn->full; lm-head input full; ag-vocab(tp) logits full; slice logits full->attn");
}

// --dp-lm-head: each DP group's attention-TP ranks split the vocabulary on
// the group's own rows; nothing crosses DP groups.
TEST(LmHead, WithDpLmHeadEachDpGroupSplitsTheVocabularyOverItsAttentionTp) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2, .dp_lm_head = true});
  EXPECT_EQ(Head(p), "lm-head input attn; ag-vocab(attn_tp) logits attn");
  const Plan one = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 4, .dense_tp = 1, .dp_lm_head = true});
  EXPECT_EQ(Head(one), "lm-head input attn");  // one rank a group: the whole vocabulary, no gather
  EXPECT_EQ(Validate({.tp = 4, .dp_lm_head = true}).error().message,
            "--dp-lm-head needs --attn-dp > 1: without attention DP the LM head already splits the vocabulary over "
            "the whole TP group, which holds every row");
}

// The gather moves (n-1)/n of the vocabulary's logits per row it holds.
TEST(LmHead, TheVocabularyGatherMovesItsShareOfTheLogits) {
  const Model m = LlamaModel(2);
  const Plan p = MustBind(m, {.tp = 4}, {.wire = testing::kFp32Wire});
  const Step& ag = p.lines().front().end.head.back();
  ASSERT_EQ(ag.kind, StepKind::kGatherVocab);
  EXPECT_DOUBLE_EQ(BytesPerToken(ag, p.header()), 3.0 / 4 * m.dims->vocab * 4);
}

// A stack without a vocabulary (the sweep's) ends at the final norm.
TEST(LmHead, AStackWithoutAVocabularyEndsAtTheFinalNorm) {
  const Plan p = MustBind(testing::StackOf("A F"), {.tp = 2});
  EXPECT_EQ(p.header().vocab, 0);
  EXPECT_TRUE(p.lines().front().end.head.empty());
}

TEST(LmHead, TheVerifierRefusesAGatherOverAnotherGroupAndAMissingHead) {
  const Plan p = MustBind(LlamaModel(2), {.tp = 4, .attn_dp = 2, .dp_lm_head = true});
  std::vector<LinePlan> lines = p.lines();
  lines[0].end.head.back().group = Group::kTp;
  EXPECT_NE(Describe(Verify(Plan(p.header(), lines)))
                .find("the vocabulary gather runs over tp, not the attn_tp "
                      "that split it"),
            std::string::npos);
  lines = p.lines();
  lines[0].end.head.clear();
  EXPECT_NE(Describe(Verify(Plan(p.header(), lines))).find("has no LM head"), std::string::npos);
}

// The embedding's vocabulary-parallel sum and the LM head's gathered
// columns, against the unsharded model's logits, bit for bit: a column
// placed at another member's offset, or a row of another DP group, differs.
TEST(LmHead, LogitsAreBitIdenticalToTheReferenceInEveryForm) {
  const Model m = DeepseekModel(3, 64, 3);
  const Weights w = MustWeights(m, Dtype::kBf16);
  const Batch b = MustBatch(21, 3);
  const std::vector<ParallelConfig> configs = {
      {.tp = 4},
      {.tp = 4, .input_scattered = true},
      {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a},
      {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .dp_lm_head = true},
      {.tp = 4, .attn_dp = 2, .pp = 2},
  };
  for (const ParallelConfig& cfg : configs) {
    Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
    ASSERT_TRUE(plans.ok()) << plans.error().message;
    Expected<RunOutput> run = RunPlans(m, *plans, w, b, {.dtype = Dtype::kBf16});
    ASSERT_TRUE(run.ok()) << run.error().message;
    const Tensor hidden = MustReference(m, cfg, w, b, Dtype::kBf16);
    EXPECT_EQ(run->hidden, hidden) << Describe(cfg);
    const Tensor logits = ReferenceLogits(hidden, w, Dtype::kBf16);
    ASSERT_EQ(logits.cols(), m.dims->vocab);
    EXPECT_EQ(run->logits, logits) << Describe(cfg);
  }
}

// Member i of n holds columns [i * ceil(V/n), (i + 1) * ceil(V/n)) of the
// vocabulary, cut to it: every column once, in order, no share wider than
// the ceiling (the width the gather lays the shares out by).
TEST(LmHead, EachMemberHoldsItsCeilingShareOfTheVocabularyColumns) {
  using exec::VocabColumns;
  EXPECT_EQ(VocabColumns(250, 4, 0), (RowSpan{0, 63}));
  EXPECT_EQ(VocabColumns(250, 4, 1), (RowSpan{63, 126}));
  EXPECT_EQ(VocabColumns(250, 4, 2), (RowSpan{126, 189}));
  EXPECT_EQ(VocabColumns(250, 4, 3), (RowSpan{189, 250}));
  EXPECT_EQ(VocabColumns(128, 4, 3), (RowSpan{96, 128}));
  EXPECT_EQ(VocabColumns(250, 1, 0), (RowSpan{0, 250}));
  // Five columns over four members: shares of two, the last one empty.
  EXPECT_EQ(VocabColumns(5, 4, 2), (RowSpan{4, 5}));
  EXPECT_EQ(VocabColumns(5, 4, 3), (RowSpan{5, 5}));
  for (const int vocab : {1, 5, 7, 250, 251, 256, 1000}) {
    for (const int n : {1, 2, 3, 4, 8}) {
      const int chunk = (vocab + n - 1) / n;
      int next = 0;
      for (int i = 0; i < n; ++i) {
        const RowSpan cols = VocabColumns(vocab, n, i);
        EXPECT_EQ(cols.begin, std::min(vocab, i * chunk)) << vocab << " over " << n << ", member " << i;
        EXPECT_EQ(cols.begin, next) << vocab << " over " << n << ", member " << i;
        EXPECT_LE(cols.rows(), chunk) << vocab << " over " << n << ", member " << i;
        next = cols.end;
      }
      EXPECT_EQ(next, vocab) << vocab << " over " << n;
    }
  }
}

// A vocabulary that does not divide the head's group (engines pad it):
// every catalogue model's logits are still the reference's, bit for bit.
TEST(LmHead, EveryCatalogueModelsLogitsAreBitIdenticalWhenTheVocabularyDoesNotDivideTheGroup) {
  const std::vector<ParallelConfig> configs = {
      {.tp = 4},
      {.tp = 8, .attn_dp = 2, .dp_lm_head = true},
  };
  const Batch b = MustBatch(12, 2);
  int models = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    Model m = e.make();
    ASSERT_TRUE(m.dims.has_value()) << e.name;
    if (m.dims->vocab == 0) continue;
    m.dims->vocab = 250;
    ++models;
    const Weights w = MustWeights(m, Dtype::kF32);
    for (ParallelConfig cfg : configs) {
      Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
      ASSERT_TRUE(plans.ok()) << e.name << " " << Describe(cfg) << ": " << plans.error().message;
      Expected<RunOutput> run = RunPlans(m, *plans, w, b, {.dtype = Dtype::kF32});
      ASSERT_TRUE(run.ok()) << e.name << ": " << run.error().message;
      const Tensor hidden = MustReference(m, cfg, w, b, Dtype::kF32);
      EXPECT_EQ(run->hidden, hidden) << e.name << " " << Describe(cfg);
      const Tensor logits = ReferenceLogits(hidden, w, Dtype::kF32);
      ASSERT_EQ(logits.cols(), 250);
      EXPECT_EQ(run->logits, logits) << e.name << " " << Describe(cfg);
    }
  }
  EXPECT_EQ(models, static_cast<int>(Catalogue().size()));
}

}  // namespace
}  // namespace seam

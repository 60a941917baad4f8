// The five defects at value level, in fp32 and in bf16: the plan seam binds
// runs bit-identical to the reference on simulated ranks (small batches
// included), and the same plan with the old behaviour put back fails to run
// or gives other values.
#include <gtest/gtest.h>

#include "defect_plans.h"

namespace seam {
namespace {

using testing::DefectCase;

// The run's output, or the error it fails with.
Expected<Tensor> Outcome(const DefectCase& c, const Pipeline& plans, const Weights& w, const Batch& b, Dtype d) {
  Expected<RunOutput> out = RunPlans(c.model, plans, w, b, {.dtype = d, .timeout_seconds = 10});
  if (!out) return out.error();
  return out->hidden;
}

void ExpectFixedRunsAndOldFails(const DefectCase& c, Dtype d) {
  const Weights w = testing::MustWeights(c.model, d);
  int old_failed = 0;
  for (int tokens : {1, 2, 3, 9, 24}) {  // small batches leave slices empty
    const Batch b = testing::MustBatch(tokens, std::min(tokens, 3));
    const Tensor ref = testing::MustReference(c.model, c.cfg, w, b, d);
    const Expected<Tensor> fixed = Outcome(c, c.fixed, w, b, d);
    ASSERT_TRUE(fixed.ok()) << c.name << ": " << fixed.error().message;
    EXPECT_EQ(*fixed, ref) << c.name << " with " << tokens << " tokens";
    const Expected<Tensor> old = Outcome(c, c.old, w, b, d);
    if (!old.ok() || !(*old == ref)) ++old_failed;
  }
  EXPECT_EQ(old_failed, 5) << c.name << ": the old behaviour went unnoticed on some batch";
}

class DefectValues : public ::testing::TestWithParam<Dtype> {};

TEST_P(DefectValues, AnAppendAfterAnAttentionUsesTheResidualRowsItRanOn) {
  ExpectFixedRunsAndOldFails(testing::Defect1(), GetParam());
}

TEST_P(DefectValues, AStackEndingOnAnAttentionAfterAnA2aMoeReturnsTheResidual) {
  ExpectFixedRunsAndOldFails(testing::Defect2(), GetParam());
}

TEST_P(DefectValues, ALaterRankOnAnInputScatteredBatchSumsNothingItReceives) {
  ExpectFixedRunsAndOldFails(testing::Defect3(), GetParam());
}

TEST_P(DefectValues, AnFfnBeforeAHandoffKeepsOneSetOfResidualRows) {
  ExpectFixedRunsAndOldFails(testing::Defect4(), GetParam());
}

TEST_P(DefectValues, ToPpCompletesTheMixersDeclaredSumBeforeTheTransport) {
  ExpectFixedRunsAndOldFails(testing::Defect5(), GetParam());
}

TEST_P(DefectValues, ZayaShapedStacksOnAttentionTpRanksMatchTheReference) {
  // Attention, a2a MoE, attention, FFN; and attention, FFN, attention with a
  // final norm; on attention-TP ranks with and without attention DP.
  for (const char* letters : {"AEAF", "AFA"}) {
    const Model m = testing::RunnableStack(letters);
    for (const ParallelConfig& cfg :
         {ParallelConfig{.tp = 2, .moe = MoeMode::kA2a}, ParallelConfig{.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a},
          ParallelConfig{.tp = 4, .moe = MoeMode::kA2a, .reduction = Reduction::kRs}}) {
      const Weights w = testing::MustWeights(m, GetParam());
      for (int tokens : {1, 2, 5, 16}) {
        const Batch b = testing::MustBatch(tokens, std::min(tokens, 2));
        EXPECT_EQ(testing::MustRun(m, cfg, w, b, GetParam()).hidden, testing::MustReference(m, cfg, w, b, GetParam()))
            << letters << " " << Describe(cfg) << " " << tokens << " tokens";
      }
    }
  }
}

TEST_P(DefectValues, InputScatteredAndAttentionDpHandoffsMatchTheReference) {
  const std::vector<std::pair<Model, ParallelConfig>> cases = {
      {DeepseekModel(4, 64, 3), {.tp = 2, .input_scattered = true, .reduction = Reduction::kRs}},
      {DeepseekModel(4, 64, 3), {.tp = 2, .input_scattered = true}},
      {DeepseekModel(4, 64, 3), {.tp = 4, .attn_dp = 2, .dense_tp = 1}},
      {LlamaModel(4), {.tp = 2, .input_scattered = true, .reduction = Reduction::kRs}}};
  for (const auto& [m, base] : cases) {
    const Weights w = testing::MustWeights(m, GetParam());
    const Batch b = testing::MustBatch(12, 3);
    const Tensor ref = testing::MustReference(m, base, w, b, GetParam());
    for (const std::vector<int>& split : {std::vector<int>{2, 2}, std::vector<int>{1, 3}}) {
      const ParallelConfig cfg = testing::Cut(base, split);
      EXPECT_EQ(testing::MustRun(m, cfg, w, b, GetParam()).hidden, ref) << m.name << " " << Describe(cfg);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DefectValues, ::testing::Values(Dtype::kF32, Dtype::kBf16),
                         [](const auto& i) { return std::string(Name(i.param)); });

}  // namespace
}  // namespace seam

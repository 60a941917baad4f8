// Every rejection of Bind, with its exact message: what is wrong, the rule,
// and what to do instead.
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "testing.h"

namespace seam {
namespace {

using testing::StackOf;

std::string RejectionOf(const Model& m, const ParallelConfig& cfg) {
  const Expected<Plan> p = Bind(m, cfg);
  if (p.ok()) return "(bound)";
  EXPECT_EQ(p.error().code, ErrorCode::kUnsupported);
  return p.error().message;
}

Model SingleStage(StageDecl first, StageDecl second) {
  return {.name = "custom", .num_layers = 2, .hidden = 64, .layer = [=](int i) {
            return std::vector{i == 0 ? first : second};
          }};
}

const ParallelConfig kScattered{.tp = 2, .input_scattered = true};

TEST(Rejection, InputScatteredRejectsAnAttentionThatCannotGatherItsInput) {
  const Model m = SingleStage(AttentionStage({.gathers_input = false}), DenseFfnStage());
  EXPECT_EQ(RejectionOf(m, kScattered),
            "stage 0 (attention, layer 0): this attention does not gather its own input from the slice on "
            "input-scattered batches (rule: input-scattered eligibility); declare it with a QKV gather, or drop "
            "--input-scattered");
}

TEST(Rejection, InputScatteredRejectsAMixer) {
  EXPECT_EQ(RejectionOf(StackOf("A F M F"), kScattered),
            "stage 2 (mixer, layer 2): a mixer cannot gather its own input from the slice on input-scattered "
            "batches (rule: input-scattered eligibility); drop --input-scattered");
}

TEST(Rejection, InputScatteredRejectsAnAttentionThatReadsEveryRow) {
  const Model m = SingleStage(AttentionStage({.read = ReadKind::kAllRows}), DenseFfnStage());
  EXPECT_EQ(RejectionOf(m, kScattered),
            "stage 0 (attention, layer 0): its read needs every row, but on input-scattered batches the "
            "attention reads its slice (rule: input-scattered eligibility); drop --input-scattered");
}

TEST(Rejection, InputScatteredRejectsAnA2aMoe) {
  EXPECT_EQ(RejectionOf(StackOf("A E"), {.tp = 2, .moe = MoeMode::kA2a, .input_scattered = true}),
            "stage 1 (sparse-ffn, layer 1): an a2a MoE hands on its slice complete, but on input-scattered "
            "batches every layer's input is a TP partial sum on the full rows (rule: input-scattered "
            "eligibility); use --moe tp, or drop --input-scattered");
}

TEST(Rejection, InputScatteredRejectsAFullyDataParallelDenseFfn) {
  EXPECT_EQ(RejectionOf(StackOf("A F"), {.tp = 2, .dense_tp = 1, .input_scattered = true}),
            "stage 1 (dense-ffn, layer 1): a fully data-parallel dense FFN hands on its slice complete, but on "
            "input-scattered batches every layer's input is a TP partial sum on the full rows (rule: "
            "input-scattered eligibility); use --dense-tp 2, or drop --input-scattered");
}

TEST(Rejection, InputScatteredRejectsAReplicatedLinearStage) {
  const Model m = SingleStage(LinearStage(), DenseFfnStage());
  EXPECT_EQ(RejectionOf(m, kScattered),
            "stage 0 (linear, layer 0): a replicated linear stage hands on its output complete, but on "
            "input-scattered batches every layer's input is a TP partial sum on the full rows (rule: "
            "input-scattered eligibility); drop --input-scattered");
  EXPECT_EQ(RejectionOf(m, {.tp = 2}), "(bound)");
}

TEST(Rejection, AnA2aMoeNeedsADispatchPathInTheModel) {
  const Model m = SingleStage(AttentionStage(), SparseFfnStage({.top_k = 2, .a2a = false}));
  EXPECT_EQ(RejectionOf(m, {.tp = 2, .moe = MoeMode::kA2a}),
            "stage 1 (sparse-ffn, layer 1): this MoE has no all-to-all dispatch path (rule: a2a MoE needs a "
            "dispatch/combine in the model); use --moe tp");
  EXPECT_EQ(RejectionOf(m, {.tp = 2}), "(bound)");
}

TEST(Rejection, AHyperConnectionUpdateOnAnAlwaysPartialAttentionHasNoExitToRunAt) {
  const DenseOptions hc{.update = UpdateKind::kHyperConnection};
  const Model m = SingleStage(AttentionStage({.update = UpdateKind::kHyperConnection}), DenseFfnStage(hc));
  EXPECT_EQ(RejectionOf(m, {.tp = 2}),
            "stage 0 (attention, layer 0): a hyper-connection update needs an exit to apply it, and an "
            "always-partial attention has none (rule: a non-additive update runs at its producer's exit once its "
            "sum is complete); declare the attention as reducing itself, or give it a plain add");
}

TEST(Rejection, APlainAddIntoHyperConnectionStreamsIsRejected) {
  const Model m = SingleStage(
      AttentionStage({.sum = AttentionSum::kReducesItself, .update = UpdateKind::kHyperConnection}), DenseFfnStage());
  EXPECT_EQ(RejectionOf(m, {.tp = 2}),
            "stage 1 (dense-ffn, layer 1): its update is a plain-add but stage 0 updates the residual with a "
            "hyper-connection (rule: one residual kind per stack: hyper-connection streams take no plain add); "
            "declare every stage of the stack with the same update kind");
}

TEST(Rejection, AnA2aMoeThatReadsEveryRowIsRejectedUnderAttentionTp) {
  const Model m = SingleStage(AttentionStage(), SparseFfnStage({.read = ReadKind::kAllRows}));
  EXPECT_EQ(RejectionOf(m, {.tp = 2, .moe = MoeMode::kA2a}),
            "stage 1 (sparse-ffn, layer 1): its read needs every row of the attention group, but it runs on this "
            "rank's slice (rule: a read of every row runs on the attention rows); use --moe tp, or a plain-norm "
            "read");
  EXPECT_EQ(RejectionOf(m, {.tp = 2, .attn_dp = 2, .moe = MoeMode::kA2a}), "(bound)");  // attn_tp = 1
}

TEST(Rejection, AFullyDataParallelDenseFfnThatReadsEveryRowIsRejected) {
  const Model m = SingleStage(AttentionStage(), DenseFfnStage({.read = ReadKind::kAllRows}));
  EXPECT_EQ(RejectionOf(m, {.tp = 4, .attn_dp = 2, .dense_tp = 1}),
            "stage 1 (dense-ffn, layer 1): its read needs every row of the attention group, but it runs on this "
            "rank's slice (rule: a read of every row runs on the attention rows); use --dense-tp with the TP or "
            "attention-TP width, or a plain-norm read");
}

TEST(Rejection, BindReportsAnInvalidConfigurationFirst) {
  const Expected<Plan> p = Bind(LlamaModel(2), {.tp = 6, .attn_dp = 4});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(p.error().message,
            "tp=6 is not divisible by attn_dp=4; attn_dp must divide tp (divisors of 6: 1, 2, 3, 6)");
}

TEST(Rejection, APipelineRankOutsideTheConfigurationIsRejected) {
  const Expected<Plan> p = Bind(LlamaModel(2), {.tp = 2}, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "pp_rank=1 is outside pp=1");
}

TEST(Rejection, AModelWithoutLayersOrWidthIsRejected) {
  Model m = LlamaModel(2);
  m.num_layers = 0;
  EXPECT_EQ(Bind(m, {.tp = 2}).error().message, "model 'llama' has no layers");
  m = LlamaModel(2);
  m.hidden = 0;
  EXPECT_EQ(Bind(m, {.tp = 2}).error().message, "model 'llama' has hidden size 0");
  m = LlamaModel(2);
  m.residual_streams = 0;
  EXPECT_EQ(Bind(m, {.tp = 2}).error().message, "model 'llama' has 0 residual streams");
}

}  // namespace
}  // namespace seam

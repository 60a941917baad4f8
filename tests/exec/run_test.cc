// Running plans: bit-identical to the unsharded reference, empty ranks,
// the record backend, and the errors a run reports.
#include <gtest/gtest.h>

#include "exec_testing.h"
#include "seam/exec.h"

namespace seam {
namespace {

using testing::MustBatch;
using testing::MustReference;
using testing::MustRun;
using testing::MustWeights;

TEST(Run, EveryCatalogueModelIsBitIdenticalToTheReferenceAtTp4AttentionDp2) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (Dtype d : {Dtype::kF32, Dtype::kBf16}) {
      const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs};
      const Weights w = MustWeights(m, d);
      const Batch b = MustBatch(20, 3);
      EXPECT_EQ(MustRun(m, cfg, w, b, d).hidden, MustReference(m, cfg, w, b, d)) << e.name << " " << Name(d);
    }
  }
}

TEST(Run, RanksAndDpGroupsWithoutRowsStillJoinEveryCollective) {
  // Two tokens in one request over tp8 with two DP groups: one DP group and
  // most slices hold no rows.
  const Model m = DeepseekModel(4, 64, 3);
  const ParallelConfig cfg{.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};
  const Weights w = MustWeights(m, Dtype::kBf16);
  for (int tokens : {1, 2, 3}) {
    const Batch b = MustBatch(tokens, 1);
    EXPECT_EQ(MustRun(m, cfg, w, b, Dtype::kBf16).hidden, MustReference(m, cfg, w, b, Dtype::kBf16)) << tokens;
  }
}

TEST(Run, TheRecordBackendCountsEveryOwedSumCompletingOnce) {
  const Model m = LlamaModel(4);
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs, .pp = 2};
  const Weights w = MustWeights(m, Dtype::kF32);
  const testing::Ran ran = MustRun(m, cfg, w, MustBatch(16, 3), Dtype::kF32, Backend::kRecord);
  Expected<Pipeline> plans = BindPipeline(m, cfg);
  ASSERT_TRUE(plans.ok());
  for (int rank = 0; rank < WorldSize(cfg); ++rank) {
    const Plan& p = (*plans)[static_cast<size_t>(CoordOf(cfg, rank).pp_rank)];
    EXPECT_EQ(testing::ReduceScatters(ran.ranks[static_cast<size_t>(rank)]),
              testing::OwedSumsOf(p, Variant::kOrdinary))
        << "rank " << rank;
  }
  EXPECT_GT(ran.ranks[0].elements_sent(), 0);
}

TEST(Run, AConfigurationTheCanonicalReductionCannotServeIsRejected) {
  const Model m = LlamaModel(4);
  EXPECT_EQ(CheckRunnable(m, {.tp = 6, .attn_dp = 3, .dense_tp = 1}).error().message,
            "tp=6 cannot run with the canonical reduction: every group that completes a sum must be a power of two "
            "(the canonical sum is a binary tree over K-blocks); use tp 4 or 8");
  EXPECT_EQ(CheckRunnable(m, {.tp = 16}).error().message,
            "num_attention_heads = 8 does not split over attn_tp = 16 (tp 16 / attn_dp 1); attn_tp must divide 8: 1, "
            "2, 4, 8");
  Model few = m;
  few.dims->heads = 4;
  few.dims->kv_heads = 4;
  EXPECT_EQ(CheckRunnable(few, {.tp = 8}).error().message,
            "num_attention_heads = 4 does not split over attn_tp = 8 (tp 8 / attn_dp 1); attn_tp must divide 4: 1, 2, 4");
  Model bare = m;
  bare.dims.reset();
  EXPECT_EQ(CheckRunnable(bare, {.tp = 2}).error().message, "model 'llama' has no sizes to run with");
}

// tp 16 (two nodes of eight) sums over 16 canonical K-blocks: the run and the
// reference use the same count, so they agree bit for bit.
TEST(Run, SixteenRanksRunOnSixteenKBlocksBitIdentical) {
  const Model m = LlamaModel(2);
  const ParallelConfig cfg{.tp = 16, .attn_dp = 2, .reduction = Reduction::kRsRsv};
  EXPECT_EQ(NumericsOf(cfg, Dtype::kF32).k_blocks, 16);
  const Weights w = MustWeights(m, Dtype::kF32);
  const Batch b = MustBatch(40, 5);
  EXPECT_TRUE(MustRun(m, cfg, w, b, Dtype::kF32).hidden == testing::MustReference(m, cfg, w, b, Dtype::kF32));
}

TEST(Run, ABatchThatCannotBeFormedIsAnError) {
  EXPECT_EQ(RandomBatch(2, 3, 256, 1).error().message,
            "--tokens 2 cannot fill 3 requests of at least one token each");
  EXPECT_EQ(RandomBatch(4, 0, 256, 1).error().message, "--requests 0 must be at least 1");
}

TEST(Run, WeightsOfAnotherShapeAreRejected) {
  const Model m = LlamaModel(2);
  std::map<std::string, Tensor> tensors = MustWeights(m, Dtype::kF32).all();
  tensors["model.layers.1.mlp.up_proj.weight"] = Tensor(64, 64);
  const Weights bad(std::move(tensors));
  Expected<Pipeline> plans = BindPipeline(m, {.tp = 2});
  ASSERT_TRUE(plans.ok());
  EXPECT_EQ(RunPlans(m, *plans, bad, MustBatch(4, 1), {}).error().message,
            "weight 'model.layers.1.mlp.up_proj.weight' is [64, 64] but the model needs [128, 64]");
}

TEST(Run, TheSameSeedGivesTheSameWeightsAndAnotherSeedOthers) {
  const Model m = LlamaModel(1);
  const Weights a = MustWeights(m, Dtype::kF32, 5), b = MustWeights(m, Dtype::kF32, 5), c = MustWeights(m, Dtype::kF32, 6);
  EXPECT_EQ(a.at("model.layers.0.self_attn.q_proj.weight"), b.at("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_FALSE(a.at("model.layers.0.self_attn.q_proj.weight") == c.at("model.layers.0.self_attn.q_proj.weight"));
  // Different everywhere: no two tensors of one shape hold the same values.
  EXPECT_FALSE(a.at("model.layers.0.self_attn.k_proj.weight") == a.at("model.layers.0.self_attn.v_proj.weight"));
  for (float v : a.at("model.layers.0.input_layernorm.weight").span()) EXPECT_NEAR(v, 1.0f, 0.05f);
}

}  // namespace
}  // namespace seam

// Which shardings of a model's sizes `seam plan` and `seam run` accept: each
// rejection names the model's field and the flags its group comes from.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "seam/bind.h"
#include "seam/families.h"
#include "seam/hf_config.h"
#include "seam/model.h"
#include "seam/sharding.h"
#include "testing.h"

namespace seam {
namespace {

std::string ErrorOf(const Model& m, const ParallelConfig& cfg) {
  const Status s = CheckSharding(m, cfg);
  return s.ok() ? "ok" : s.error().message;
}

Model Catalogued(const std::string& name) {
  Expected<Model> m = CatalogueModel(name);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

Model LlamaWith(int heads, int kv_heads, int head_dim, int intermediate) {
  Model m = LlamaModel(2);
  m.dims->heads = heads;
  m.dims->kv_heads = kv_heads;
  m.dims->head_dim = head_dim;
  m.dims->intermediate = intermediate;
  return m;
}

// The library binds only what the executor runs: Bind and BindPipeline
// make the same check as `seam plan` and `seam run`.
TEST(Sharding, TheBinderRefusesWhatTheExecutorCannotRun) {
  const Expected<Pipeline> p = BindPipeline(LlamaModel(2), {.tp = 3});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, ErrorOf(LlamaModel(2), {.tp = 3}));
  const Expected<Plan> one = Bind(LlamaModel(2), {.tp = 16});
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().message, ErrorOf(LlamaModel(2), {.tp = 16}));
}

TEST(Sharding, AttentionHeadsMustSplitOverAttentionTp) {
  EXPECT_EQ(ErrorOf(LlamaModel(2), {.tp = 3}),
            "num_attention_heads = 8 does not split over attn_tp = 3 (tp 3 / attn_dp 1); attn_tp must divide 8: 1, "
            "2, 4, 8");
  EXPECT_EQ(ErrorOf(LlamaModel(2), {.tp = 12, .attn_dp = 4}),
            "num_attention_heads = 8 does not split over attn_tp = 3 (tp 12 / attn_dp 4); attn_tp must divide 8: 1, "
            "2, 4, 8");
}

TEST(Sharding, KeyValueHeadsSplitOrAreReplicatedAsEnginesDo) {
  EXPECT_EQ(ErrorOf(LlamaWith(8, 2, 16, 128), {.tp = 8}), "ok");  // 2 KV heads, each on four ranks
  EXPECT_EQ(ErrorOf(LlamaWith(24, 8, 16, 384), {.tp = 12}),
            "num_key_value_heads = 8 does not split over attn_tp = 12 (tp 12 / attn_dp 1), nor is attn_tp a multiple "
            "of it to replicate them; attn_tp must divide 8 (1, 2, 4, 8) or be a multiple of it");
  EXPECT_EQ(ErrorOf(LlamaWith(8, 3, 16, 128), {.tp = 2}),
            "num_attention_heads = 8 is not a multiple of num_key_value_heads = 3");
}

TEST(Sharding, ALayersOwnKeyValueHeadsAndFfnWidthAreNamedWithTheLayer) {
  ModelDims d = *LlamaModel(1).dims;
  d.heads = 12;
  using P = NasBlock::Part;
  const Model kv = NasModel("nas", 96, d, {{P::kNoOp, 0, P::kNoOp, 0}, {P::kPresent, 4, P::kPresent, 96}});
  EXPECT_EQ(ErrorOf(kv, {.tp = 6}),
            "layer 1's key/value heads = 4 does not split over attn_tp = 6 (tp 6 / attn_dp 1), nor is attn_tp a "
            "multiple of it to replicate them; attn_tp must divide 4 (1, 2, 4) or be a multiple of it");
  d.heads = 8;
  const Model ffn = NasModel("nas", 64, d, {{P::kPresent, 0, P::kPresent, 100}});
  EXPECT_EQ(ErrorOf(ffn, {.tp = 8}),
            "layer 0's FFN width = 100 does not split over dense_tp = 8 (the default, tp); dense_tp must divide 100: "
            "1, 2, 4, 5, 10, 20, 25, 50, 100");
}

TEST(Sharding, MixerHeadsMustSplitOverAttentionTp) {
  Model m = Catalogued("nemotron-h");
  m.dims->mixer_heads = 12;
  EXPECT_EQ(ErrorOf(m, {.tp = 8}),
            "the mixer heads = 12 does not split over attn_tp = 8 (tp 8 / attn_dp 1); attn_tp must divide 12: 1, 2, "
            "3, 4, 6, 12");
}

// Each rank holds whole groups: their B and C, and Mamba2's gated norm
// normalises a group's channels together. vLLM replicates a lone group
// (n_groups = 1) instead; seam refuses it, as the norm would be split.
TEST(Sharding, Mamba2GroupsSplitWholeOverAttentionTp) {
  Model m = Catalogued("nemotron-h");
  m.dims->mixer_groups = 4;
  EXPECT_EQ(ErrorOf(m, {.tp = 4}), "ok");
  EXPECT_EQ(ErrorOf(m, {.tp = 8, .attn_dp = 2}), "ok");  // attn_tp 4
  EXPECT_EQ(ErrorOf(m, {.tp = 8}),
            "n_groups = 4 does not split over attn_tp = 8 (tp 8 / attn_dp 1); each rank holds whole groups of Mamba2 "
            "heads (their B and C, and the gated norm over each), so attn_tp must divide 4: 1, 2, 4");
  m.dims->mixer_groups = 1;
  EXPECT_EQ(ErrorOf(m, {.tp = 2}),
            "n_groups = 1 does not split over attn_tp = 2 (tp 2 / attn_dp 1); each rank holds whole groups of Mamba2 "
            "heads (their B and C, and the gated norm over each), so attn_tp must divide 1: 1");
  const Expected<Model> real = LoadHfConfig(SEAM_HF_CONFIGS "/nemotron-h-56b.json");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(ErrorOf(*real, {.tp = 8}), "ok");
  EXPECT_EQ(ErrorOf(*real, {.tp = 16}),
            "n_groups = 8 does not split over attn_tp = 16 (tp 16 / attn_dp 1); each rank holds whole groups of "
            "Mamba2 heads (their B and C, and the gated norm over each), so attn_tp must divide 8: 1, 2, 4, 8");
}

// Gated DeltaNet's key heads split the same way, each rank holding the
// value heads that share them.
TEST(Sharding, GatedDeltaNetKeyHeadsSplitWholeOverAttentionTp) {
  Model m = Catalogued("qwen3-next");
  m.dims->mixer_groups = 4;
  EXPECT_EQ(ErrorOf(m, {.tp = 4}), "ok");
  EXPECT_EQ(ErrorOf(m, {.tp = 8}),
            "linear_num_key_heads = 4 does not split over attn_tp = 8 (tp 8 / attn_dp 1); each rank holds whole key "
            "heads with the value heads that share them, so attn_tp must divide 4: 1, 2, 4");
  const Expected<Model> real = LoadHfConfig(SEAM_HF_CONFIGS "/qwen3-next-80b-a3b.json");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(ErrorOf(*real, {.tp = 16}), "ok");  // 16 key heads, one per rank
}

TEST(Sharding, DenseFfnWidthMustSplitOverDenseTp) {
  EXPECT_EQ(ErrorOf(LlamaModel(2), {.tp = 6, .attn_dp = 3}),
            "intermediate_size = 128 does not split over dense_tp = 6 (the default, tp); dense_tp must divide 128: 1, "
            "2, 4, 8, 16, 32, 64, 128");
  EXPECT_EQ(ErrorOf(LlamaWith(8, 2, 16, 98), {.tp = 8, .attn_dp = 2, .dense_tp = 4}),
            "intermediate_size = 98 does not split over dense_tp = 4 (--dense-tp); dense_tp must divide 98: 1, 2, 7, "
            "14, 49, 98");
}

TEST(Sharding, ExpertWidthsSplitOverTpOnlyForTpMoe) {
  const Model moe = Catalogued("qwen3-moe");
  EXPECT_EQ(ErrorOf(moe, {.tp = 6, .attn_dp = 3}),
            "moe_intermediate_size = 32 does not split over tp = 6 (--tp); tp must divide 32: 1, 2, 4, 8, 16, 32");
  // Under a2a every expert is whole on its owner: only the sum groups are left to refuse tp 6.
  EXPECT_EQ(ErrorOf(moe, {.tp = 6, .attn_dp = 3, .moe = MoeMode::kA2a}),
            "tp=6 cannot run with the canonical reduction: every group that completes a sum must be a power of two "
            "(the canonical sum is a binary tree over K-blocks); use tp 4 or 8");
  Model shared = Catalogued("deepseek-v2-lite");
  shared.dims->shared_intermediate = 34;
  EXPECT_EQ(ErrorOf(shared, {.tp = 4}),
            "the shared expert width = 34 does not split over tp = 4 (--tp); tp must divide 34: 1, 2, 17, 34");
}

TEST(Sharding, SumGroupsMustBePowersOfTwo) {
  EXPECT_EQ(ErrorOf(LlamaModel(2), {.tp = 6, .attn_dp = 3, .dense_tp = 1}),
            "tp=6 cannot run with the canonical reduction: every group that completes a sum must be a power of two "
            "(the canonical sum is a binary tree over K-blocks); use tp 4 or 8");
  Model bare = LlamaModel(2);  // a stack without sizes has only the group rule to meet
  bare.dims.reset();
  EXPECT_EQ(ErrorOf(bare, {.tp = 3}),
            "tp=3 cannot run with the canonical reduction: every group that completes a sum must be a power of two "
            "(the canonical sum is a binary tree over K-blocks); use tp 2 or 4");
  EXPECT_EQ(ErrorOf(bare, {.tp = 16}), "ok");
}

TEST(Sharding, WidthsMustSplitIntoTheCanonicalKBlocks) {
  EXPECT_EQ(CanonicalKBlocks({.tp = 4}), 8);
  EXPECT_EQ(CanonicalKBlocks({.tp = 16, .attn_dp = 2}), 16);
  EXPECT_EQ(ErrorOf(LlamaWith(8, 2, 16, 132), {.tp = 2}),
            "the dense FFN width = 132 does not split into the 8 K-blocks of the canonical reduction");
  EXPECT_EQ(ErrorOf(LlamaWith(16, 2, 4, 136), {.tp = 16, .attn_dp = 2, .dense_tp = 8}),
            "the dense FFN width = 136 does not split into the 16 K-blocks of the canonical reduction");
  EXPECT_EQ(ErrorOf(LlamaWith(16, 2, 4, 128), {.tp = 16}), "ok");
}

// Every catalogue model splits over every power-of-two TP size up to eight,
// with and without attention DP: the catalogue's promise.
TEST(Sharding, EveryCatalogueModelSplitsOverPowerOfTwoTpUpToEight) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (int tp : {1, 2, 4, 8}) {
      for (int dp = 1; dp <= tp; dp *= 2) {
        EXPECT_EQ(ErrorOf(m, {.tp = tp, .attn_dp = dp, .dense_tp = tp / dp}), "ok") << e.name << " tp " << tp;
      }
    }
  }
}

TEST(Sharding, StagesOfRefusesLayersAModelDoesNotDeclare) {
  Model m = Catalogued("nemotron-nas");
  ASSERT_EQ(m.declared_layers, 6);
  m.num_layers = 9;
  EXPECT_THROW(StagesOf(m, 0, 9), InternalError);
  EXPECT_THROW(PatternOf(m), InternalError);
  EXPECT_EQ(StagesOf(m, 0, 6).size(), 12U);
}

// Every step of every line of a plan: the receive, each stage's, the end's.
std::vector<Step> StepsOf(const Plan& p) {
  std::vector<Step> out;
  for (const LinePlan& line : p.lines()) {
    out.insert(out.end(), line.start.begin(), line.start.end());
    for (const StagePlan& s : line.stages) {
      for (const std::vector<Step>* steps : {&s.entry, &s.compute, &s.exit}) {
        out.insert(out.end(), steps->begin(), steps->end());
      }
    }
    out.insert(out.end(), line.end.steps.begin(), line.end.steps.end());
  }
  return out;
}

// Every step's bytes per token, on every rank, of every plan the check
// accepts: a whole number (a fraction means a group that does not split the
// rows or widths it moves). Catalogue models and the real configs, over TP
// sizes to 16 (the check refuses 3, 6 and 12) and every group layout.
TEST(Sharding, EveryAcceptedPlanMovesWholeBytesPerToken) {
  std::vector<Model> models;
  for (const CatalogueEntry& e : Catalogue()) models.push_back(e.make());
  for (const auto& f : std::filesystem::directory_iterator(SEAM_HF_CONFIGS)) {
    if (f.path().extension() != ".json") continue;
    Expected<Model> m = LoadHfConfig(f.path().string());
    ASSERT_TRUE(m.ok()) << f.path() << ": " << m.error().message;
    models.push_back(*std::move(m));
  }
  int accepted = 0;
  for (const Model& m : models) {
    for (int tp : {1, 2, 3, 4, 6, 8, 12, 16}) {
      for (int dp = 1; dp <= tp; ++dp) {
        if (tp % dp != 0) continue;
        for (int dense : {0, tp / dp, 1}) {
          for (MoeMode moe : {MoeMode::kTp, MoeMode::kA2a}) {
            const ParallelConfig cfg{.tp = tp,
                                     .attn_dp = dp,
                                     .dense_tp = dense,
                                     .moe = moe,
                                     .input_scattered = tp > 1 && dp == 1,
                                     .reduction = Reduction::kRsRsv,
                                     .pp = 2};
            if (!Validate(cfg).ok() || !CheckSharding(m, cfg).ok()) continue;
            // fp32, so a quarter element shows as a fraction of a byte.
            Expected<Pipeline> plans = BindPipeline(m, cfg, {.wire = testing::kFp32Wire});
            if (!plans) continue;
            ++accepted;
            for (const Plan& p : *plans) {
              for (const Step& step : StepsOf(p)) {
                const double b = BytesPerToken(step, p.header());
                EXPECT_EQ(b, std::floor(b)) << m.name << " " << Describe(cfg) << " " << Name(step.kind);
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 500);
}

}  // namespace
}  // namespace seam

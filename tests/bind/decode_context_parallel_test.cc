// Decode context parallelism: each rule of the binder, named after what it
// guarantees. The cache of each request is split by position over a DCP
// group of attention-TP ranks that hold the same key/value heads; only the
// attention's compute changes: it gathers the group's queries and sends
// each rank's partial outputs to their heads' ranks.
#include <gtest/gtest.h>

#include <regex>

#include "seam/bind.h"
#include "seam/model.h"
#include "seam/sharding.h"
#include "seam/stage_shape.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using testing::MustModel;
using testing::StackOf;
using testing::StageOf;

constexpr Variant kOrd = Variant::kOrdinary;

std::string Compute(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).compute); }

TEST(DecodeContextParallel, EachAttentionGathersItsDcpGroupsQueriesThenExchangesPartialsBeforeItsCompute) {
  const Plan p = MustBind(StackOf("A F A F"), {.tp = 4, .dcp = 2});
  for (int stage : {0, 2}) {
    const std::vector<Step>& compute = StageOf(p, kOrd, stage).compute;
    ASSERT_EQ(compute.size(), 3U) << Compute(p, stage);
    EXPECT_EQ(compute[0].kind, StepKind::kGatherQueries);
    EXPECT_EQ(compute[0].operand, Operand::kQueries);
    EXPECT_EQ(compute[1].kind, StepKind::kExchangePartials);
    EXPECT_EQ(compute[1].operand, Operand::kPartials);
    for (int i : {0, 1}) {
      EXPECT_EQ(compute[static_cast<size_t>(i)].group, Group::kDcp);
      EXPECT_EQ(compute[static_cast<size_t>(i)].rows_in, Rows::Attention(p.config()));  // the rows stay
      EXPECT_EQ(compute[static_cast<size_t>(i)].rows_out, Rows::Attention(p.config()));
    }
    EXPECT_EQ(compute[2].kind, StepKind::kCompute);
  }
  // The FFNs exchange nothing; without DCP no attention does.
  EXPECT_EQ(Compute(p, 1), "compute full owes tp");
  const Plan plain = MustBind(StackOf("A F A F"), {.tp = 4});
  EXPECT_EQ(Compute(plain, 0).find("ag-q"), std::string::npos);
  EXPECT_EQ(Compute(plain, 0).find("a2a-lse"), std::string::npos);
}

// Every boundary stays as without DCP: it splits the cache, not the rows.
TEST(DecodeContextParallel, EveryBoundaryIsTheSameAsWithoutIt) {
  for (const ParallelConfig& base :
       {ParallelConfig{.tp = 4}, ParallelConfig{.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a},
        ParallelConfig{.tp = 8, .cp = 2, .pp = 2}}) {
    ParallelConfig split = base;
    split.dcp = 2;
    const Plan a = MustBind(StackOf("A F A E"), base), b = MustBind(StackOf("A F A E"), split);
    const std::vector<StagePlan>& sa = a.line(kOrd)->stages;
    const std::vector<StagePlan>& sb = b.line(kOrd)->stages;
    ASSERT_EQ(sa.size(), sb.size());
    for (size_t i = 0; i < sa.size(); ++i) {
      EXPECT_EQ(ShortString(sa[i].entry), ShortString(sb[i].entry)) << Describe(split) << " stage " << i;
      EXPECT_EQ(ShortString(sa[i].exit), ShortString(sb[i].exit)) << Describe(split) << " stage " << i;
    }
  }
}

// The queries gathered are each rank's heads (qk wide: MLA's nope and rope
// parts); the partials each rank receives are, per head of its own, a
// maximum, a sum and v_dim weighted values.
TEST(DecodeContextParallel, TheExchangesAreAsWideAsTheRanksHeadsQueriesAndPartials) {
  struct Case {
    const char* model;
    ParallelConfig cfg;
  };
  for (const Case& c : {Case{"llama", {.tp = 4, .dcp = 2}}, Case{"llama", {.tp = 8, .dcp = 4}},
                        Case{"deepseek-v2-lite", {.tp = 8, .dcp = 8}}}) {
    const Model m = MustModel(c.model);
    const ModelDims& d = *m.dims;
    const int heads = d.heads / c.cfg.attn_tp();
    const bool mla = d.mla.kv_lora > 0;
    const int qk = mla ? d.mla.qk_nope + d.mla.qk_rope : d.head_dim, v = mla ? d.mla.v : d.head_dim;
    const Plan p = MustBind(m, c.cfg);
    int seen = 0;
    for (const StagePlan& s : p.line(kOrd)->stages) {
      for (const Step& step : s.compute) {
        if (step.kind == StepKind::kGatherQueries) {
          EXPECT_EQ(step.width, heads * qk) << c.model;
        }
        if (step.kind == StepKind::kExchangePartials) {
          EXPECT_EQ(step.width, heads * (v + 2)) << c.model;
        }
        seen += step.kind == StepKind::kGatherQueries ? 1 : 0;
      }
    }
    EXPECT_EQ(seen, m.num_layers) << c.model;
  }
}

// A DCP group is dcp consecutive ranks of one attention-TP group: those
// that hold the same key/value heads when attention TP replicates them.
TEST(DecodeContextParallel, ADcpGroupIsConsecutiveRanksOfOneAttentionTpGroup) {
  const ParallelConfig cfg{.tp = 8, .attn_dp = 2, .dcp = 2};
  EXPECT_EQ(GroupSize(cfg, Group::kDcp), 2);
  EXPECT_EQ(GroupRanks(cfg, Group::kDcp, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(GroupRanks(cfg, Group::kDcp, 3), (std::vector<int>{2, 3}));
  EXPECT_EQ(GroupRanks(cfg, Group::kDcp, 5), (std::vector<int>{4, 5}));
  const ParallelConfig four{.tp = 8, .dcp = 4, .pp = 2};
  EXPECT_EQ(GroupRanks(four, Group::kDcp, 13), (std::vector<int>{12, 13, 14, 15}));
}

// The verifier's byte count and the plan's agree: each DCP peer's queries
// and, from each, its partials of this rank's heads.
TEST(DecodeContextParallel, TheExchangesBytesAreEachPeersQueriesAndPartials) {
  const Model m = MustModel("llama");
  const Plan p = MustBind(m, {.tp = 8, .dcp = 4});
  const PlanHeader& h = p.header();
  const StagePlan& s = p.line(kOrd)->stages.front();
  const int heads = m.dims->heads / 8;
  const double q = 3.0 * heads * m.dims->head_dim * 2, partials = 3.0 * heads * (m.dims->head_dim + 2) * 2;  // bf16
  EXPECT_EQ(BytesPerToken(s.compute[0], h), q);
  EXPECT_EQ(BytesPerToken(s.compute[1], h), partials);
  EXPECT_TRUE(Verify(p).empty()) << Describe(Verify(p));
}

TEST(DecodeContextParallel, EveryPlanOfTheRunShapesVerifies) {
  for (const char* model : {"llama", "qwen3-moe", "deepseek-v2-lite", "gpt-oss", "nemotron-h", "kimi-k2"}) {
    const Model m = MustModel(model);
    for (const ParallelConfig& cfg :
         {ParallelConfig{.tp = 4, .dcp = 2}, ParallelConfig{.tp = 8, .dcp = 4},
          ParallelConfig{.tp = 8, .attn_dp = 2, .dcp = 2, .pp = 2}, ParallelConfig{.tp = 8, .cp = 2, .dcp = 2},
          ParallelConfig{.tp = 4, .dcp = 2, .input_scattered = true}}) {
      // A mixer refuses cp and input-scattered batches, not dcp.
      if ((cfg.cp > 1 || cfg.input_scattered) && std::string_view(model) == "nemotron-h") continue;
      const Expected<Pipeline> p = BindPipeline(m, cfg);
      ASSERT_TRUE(p.ok()) << model << " " << Describe(cfg) << ": " << p.error().message;
      const std::vector<Violation> v = VerifyPipeline(*p);
      EXPECT_TRUE(v.empty()) << model << " " << Describe(cfg) << ": " << Describe(v);
    }
  }
}

// `seam models` says which families run under context and decode context
// parallelism: what it says is what binds (the whole pipeline, every rank).
TEST(DecodeContextParallel, SeamModelsSaysWhichFamiliesBindUnderCpAndDcp) {
  const std::regex cp("\\bCP\\b"), dcp("\\bDCP\\b");
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    const bool binds_cp = BindPipeline(m, {.tp = 4, .cp = 2}).ok();
    const bool binds_dcp = BindPipeline(m, {.tp = 8, .dcp = 2}).ok();
    EXPECT_EQ(std::regex_search(e.features, cp), binds_cp) << e.name << ": " << e.features;
    EXPECT_EQ(std::regex_search(e.features, dcp), binds_dcp) << e.name << ": " << e.features;
  }
}

// ---- what decode context parallelism refuses ----

TEST(DecodeContextParallelRejection, ADcpGroupMustBePartOfTheAttentionTpGroup) {
  const Status s = Validate({.tp = 8, .attn_dp = 2, .dcp = 8});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "dcp=8 does not divide the attention-TP size 4: a DCP group is dcp consecutive attention-TP ranks "
            "(divisors of 4: 1, 2, 4)");
}

TEST(DecodeContextParallelRejection, ADcpSizeMustDivideTheKeyClassesOfTheCanonicalOrder) {
  const Status s = Validate({.tp = 12, .dcp = 3});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "dcp=3 does not divide 8: the partials of the DCP ranks merge along the canonical attention order's "
            "tree over 8 key classes (dcp 2, 4 or 8)");
}

TEST(DecodeContextParallelRejection, ADcpOfZeroIsRefused) {
  const Status s = Validate({.tp = 4, .dcp = 0});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "dcp=0 must be at least 1");
}

// vLLM's ceiling: dcp <= tp / num_key_value_heads, since a DCP group's
// ranks must hold the same key/value heads. MLA's latent is on every rank.
TEST(DecodeContextParallelRejection, RanksThatHoldDifferentKeyValueHeadsCannotSplitOneCache) {
  const Model m = MustModel("llama");  // 2 key/value heads
  const Expected<Plan> p = Bind(m, {.tp = 8, .dcp = 8});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "dcp = 8 needs 8 attention-TP ranks that hold the same key/value heads; num_key_value_heads = 2 over "
            "attn_tp = 8 puts each head on 4 ranks, so dcp must divide 4 (attn_tp / key/value heads): 1, 2, 4");
  const Expected<Plan> own = Bind(m, {.tp = 2, .dcp = 2});
  ASSERT_FALSE(own.ok());
  EXPECT_EQ(own.error().message,
            "dcp = 2 needs 2 attention-TP ranks that hold the same key/value heads; num_key_value_heads = 2 over "
            "attn_tp = 2 puts each head on 1 rank, so dcp must divide 1 (attn_tp / key/value heads): 1");
  EXPECT_TRUE(Bind(MustModel("deepseek-v2-lite"), {.tp = 8, .dcp = 8}).ok());
}

}  // namespace
}  // namespace seam

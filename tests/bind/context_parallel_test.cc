// Context parallelism: each rule of the binder, named after what it
// guarantees. A CP rank's attention rows are its zig-zag shard of its DP
// group's requests (seam/runtime/batch.h), so everything that reads the
// attention rows reads a sequence shard, and only attention puts the
// sequence back together.
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "seam/model.h"
#include "seam/stage_shape.h"
#include "seam/verify.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using testing::MustBindPipeline;
using testing::MustModel;
using testing::StackOf;
using testing::StageOf;

constexpr Variant kOrd = Variant::kOrdinary;

std::string Entry(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).entry); }
std::string Compute(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).compute); }
std::string Exit(const Plan& p, int stage) { return ShortString(StageOf(p, kOrd, stage).exit); }

TEST(ContextParallel, EachAttentionGathersItsCpPeersKeysOverTheCpGroupBeforeItAttends) {
  const Plan p = MustBind(StackOf("A F A F"), {.tp = 4, .cp = 2});
  for (int stage : {0, 2}) {
    const std::vector<Step>& compute = StageOf(p, kOrd, stage).compute;
    ASSERT_EQ(compute.size(), 2U) << Compute(p, stage);
    EXPECT_EQ(compute[0].kind, StepKind::kGatherKeys);
    EXPECT_EQ(compute[0].group, Group::kCp);
    EXPECT_EQ(compute[0].operand, Operand::kKeys);
    EXPECT_EQ(compute[0].rows_in, Rows::Attention(p.config()));  // the rows stay the shard's
    EXPECT_EQ(compute[0].rows_out, Rows::Attention(p.config()));
    EXPECT_EQ(compute[1].kind, StepKind::kCompute);
  }
  // The FFNs gather no keys; without context parallelism nothing does.
  EXPECT_EQ(Compute(p, 1).find("ag-kv"), std::string::npos);
  const Plan plain = MustBind(StackOf("A F A F"), {.tp = 4});
  EXPECT_EQ(Compute(plain, 0).find("ag-kv"), std::string::npos);
}

// What the gather moves is what a rank caches of a token: GQA's K and V of
// the KV heads it holds (replicated once attention TP exceeds them), MLA's
// latent and rotary key whole on every rank.
TEST(ContextParallel, TheKeysGatherIsAsWideAsTheCacheEntryTheRankHolds) {
  struct Case {
    const char* model;
    ParallelConfig cfg;
  };
  for (const Case& c : {Case{"llama", {.tp = 4, .cp = 2}}, Case{"llama", {.tp = 8, .cp = 2}},
                        Case{"deepseek-v2-lite", {.tp = 4, .cp = 2}}}) {
    const Model m = MustModel(c.model);
    const ModelDims& d = *m.dims;
    const int attn_tp = c.cfg.attn_tp();
    const int want =
        d.mla.kv_lora > 0 ? d.mla.kv_lora + d.mla.qk_rope : 2 * d.head_dim * std::max(1, d.kv_heads / attn_tp);
    const Plan p = MustBind(m, c.cfg);
    int seen = 0;
    for (const StagePlan& s : p.line(kOrd)->stages) {
      for (const Step& step : s.compute) {
        if (step.kind != StepKind::kGatherKeys) continue;
        EXPECT_EQ(step.width, want) << c.model << " " << Describe(c.cfg);
        ++seen;
      }
    }
    EXPECT_GT(seen, 0) << c.model;
  }
}

// The attention-row peers of a TP FFN are every shard: the DP groups' CP
// ranks, so the gather to every row spans the CP group too.
TEST(ContextParallel, ATpFfnGathersEveryDpGroupsEveryCpShardToTheFullRows) {
  const ParallelConfig cfg{.tp = 8, .attn_dp = 2, .cp = 2};
  const Plan p = MustBind(StackOf("A F"), cfg);
  EXPECT_EQ(Entry(p, 1), "ar+add+norm(attn_tp) attn; ag(dp) input attn->full");
  EXPECT_EQ(GroupSize(cfg, Group::kDp), 4);
  EXPECT_EQ(GroupRanks(cfg, Group::kDp, 0), (std::vector<int>{0, 2, 4, 6}));
  // It returns the rows to each shard as under attention DP.
  EXPECT_EQ(Exit(p, 1), "ar(tp) value full; slice value full->attn");
}

TEST(ContextParallel, ADenseFfnAtTheAttentionTpWidthRunsOnTheSequenceShard) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .cp = 2, .dense_tp = 2});
  EXPECT_EQ(Entry(p, 1), "ar+add+norm(attn_tp) attn");
  EXPECT_EQ(Compute(p, 1), "compute attn owes attn_tp");
}

TEST(ContextParallel, AnA2aMoeDispatchesFromTheSliceOfTheSequenceShard) {
  const Plan p = MustBind(StackOf("A E"), {.tp = 4, .cp = 2, .moe = MoeMode::kA2a});
  EXPECT_EQ(Entry(p, 1), "rs(attn_tp) value attn->slice; slice residual attn->slice; add slice; norm slice");
  EXPECT_EQ(StageOf(p, kOrd, 1).compute.front().kind, StepKind::kDispatch);
}

// The embedding under context parallelism is whole on every rank and looks
// up its own shard's tokens, as under attention DP: a vocabulary split over
// the TP group would sum rows that other CP ranks hold.
TEST(ContextParallel, TheEmbeddingLooksUpTheShardsTokensWithTheWholeTable) {
  const Plan p = MustBind(StackOf("A F"), {.tp = 4, .cp = 2});
  EXPECT_EQ(ShortString(p.line(kOrd)->start), "embed attn");
}

// A handoff carries each rank's slice of its own sequence shard: nothing is
// gathered over the CP group (or the attention-row peers) to cross it.
TEST(ContextParallel, AHandoffSendsEachRanksSliceOfItsSequenceShard) {
  const Pipeline ranks = MustBindPipeline(StackOf("A F A F"), {.tp = 4, .cp = 2, .pp = 2});
  const std::string send = ShortString(ranks[0].line(kOrd)->end.steps);
  const std::string recv = ShortString(ranks[1].line(kOrd)->start);
  // The TP FFN before the cut returned its rows to the shard complete.
  EXPECT_EQ(send, "slice value attn->slice; slice residual attn->slice; send(pp) value slice; send(pp) residual slice");
  EXPECT_EQ(recv,
            "recv(pp) value slice; recv(pp) residual slice; ag(attn_tp) value slice->attn; "
            "ag(attn_tp) residual slice->attn");
  for (const std::string& s : {send, recv}) {
    EXPECT_EQ(s.find("(dp)"), std::string::npos) << s;
    EXPECT_EQ(s.find("(cp)"), std::string::npos) << s;
  }
  // Ending on an attention, the owed sum completes onto the slice first.
  const Pipeline partial = MustBindPipeline(StackOf("A F A F A"), {.tp = 4, .cp = 2, .pp = 2, .pp_split = {3, 2}});
  EXPECT_EQ(ShortString(partial[0].line(kOrd)->end.steps),
            "rs(attn_tp) value attn->slice; slice residual attn->slice; send(pp) value slice; send(pp) residual slice");
}

TEST(ContextParallel, EveryPlanOfTheRunMatrixShapesVerifies) {
  for (const char* model : {"llama", "qwen3-moe", "deepseek-v2-lite", "gpt-oss", "zaya1"}) {
    const Model m = MustModel(model);
    for (const ParallelConfig& cfg :
         {ParallelConfig{.tp = 2, .cp = 2}, ParallelConfig{.tp = 4, .cp = 4},
          ParallelConfig{.tp = 8, .attn_dp = 2, .cp = 2, .pp = 2}, ParallelConfig{.tp = 4, .cp = 2, .dense_tp = 1}}) {
      const Expected<Pipeline> p = BindPipeline(m, cfg);
      ASSERT_TRUE(p.ok()) << model << " " << Describe(cfg) << ": " << p.error().message;
      const std::vector<Violation> v = VerifyPipeline(*p);
      EXPECT_TRUE(v.empty()) << model << " " << Describe(cfg) << ": " << Describe(v);
    }
  }
}

// ---- what context parallelism refuses ----

TEST(ContextParallelRejection, AMixerIsRefusedNamingItsRecurrence) {
  const Expected<Plan> p = Bind(StackOf("A F M F"), {.tp = 4, .cp = 2});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(p.error().message,
            "stage 2 (mixer, layer 2): a mixer runs its recurrence over every token of a request in order, but "
            "with cp=2 each CP rank holds a zig-zag shard of them (rule: context parallelism shards a request's "
            "tokens for attention only); drop --cp (SGLang's and vLLM's context parallelism serve attention-only "
            "stacks)");
}

TEST(ContextParallelRejection, TpMustSplitIntoEveryDpGroupsCpRanks) {
  const Status s = Validate({.tp = 4, .attn_dp = 2, .cp = 4});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "tp=4 is not divisible by attn_dp * cp = 2 * 4; each CP rank of each DP group needs its own "
            "attention-TP ranks (divisors of 2: 1, 2)");
}

TEST(ContextParallelRejection, InputScatteredBatchesRefuseCp) {
  const Status s = Validate({.tp = 4, .cp = 2, .input_scattered = true});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "input-scattered batches need cp=1 (cp=2): the reduce-scatter at each attention entry runs over the "
            "whole TP group, which spans other CP ranks' sequence shards; drop --cp or --input-scattered");
}

TEST(ContextParallelRejection, ACpOfZeroIsRefused) {
  const Status s = Validate({.tp = 4, .cp = 0});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "cp=0 must be at least 1");
}

}  // namespace
}  // namespace seam

// seam compare: every configuration accounted for, the ranking in order,
// each ranked cost the cost model's for its plan.
#include <gtest/gtest.h>

#include "cost/configs.h"
#include "seam/bind.h"
#include "seam/compare.h"

namespace seam {
namespace {

CompareOptions On(int gpus, int nodes, const std::string& hw = "h100") {
  return {.gpus = gpus, .nodes = nodes, .hardware = LoadHardware(hw).value()};
}

TEST(Compare, AccountsForEveryConfigurationItConsidered) {
  const Expected<Comparison> c = Compare(Config("deepseek-v2-lite.json"), On(8, 1));
  ASSERT_TRUE(c.ok()) << c.error().message;
  int rejected = 0;
  for (const auto& [reason, n] : c->rejected) rejected += n;
  EXPECT_EQ(c->considered, static_cast<int>(c->ranked.size()) + c->merged + rejected);
  EXPECT_GT(c->ranked.size(), 20U);
  EXPECT_GT(c->merged, 0);
}

// Qwen3-30B-A3B in bf16 (61 GB) with 512 sequences of 4096 tokens on 8
// H100s: replicated on every GPU it does not fit, split 8 ways it does.
TEST(Compare, RanksFittingConfigurationsByOutputTokensPerGpuThenTheRestByMemory) {
  CompareOptions o = On(8, 1);
  o.load.batch = 512;
  const Model m = Config("qwen3-30b-a3b.json");
  const Expected<Comparison> c = Compare(m, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->ranked.front().fits);
  ASSERT_FALSE(c->ranked.back().fits);
  for (size_t i = 1; i < c->ranked.size(); ++i) {
    const Candidate& a = c->ranked[i - 1];
    const Candidate& b = c->ranked[i];
    ASSERT_TRUE(a.fits || !b.fits) << i;
    if (a.fits && b.fits) {
      EXPECT_GE(a.tokens_per_gpu, b.tokens_per_gpu) << i;
    }
    if (!a.fits && !b.fits) {  // those that do not fit: the closest to fitting first
      EXPECT_LE(a.memory.total(), b.memory.total()) << i;
    }
  }
  // Each ranked cost is the cost model's for the plan its flags bind.
  for (size_t i = 0; i < c->ranked.size(); i += 3) {
    const Candidate& k = c->ranked[i];
    const Expected<Pipeline> p = BindPipeline(m, k.config);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(CostOf(*p, o.load, o.hardware, k.replicas).decode_seconds, k.cost.decode_seconds) << FlagsOf(k);
    EXPECT_EQ(MemoryOf(m, k.config, k.replicas, o.load, o.memory).total(), k.memory.total());
    // A decode step: each pipeline rank's work and collectives in turn; the
    // batch's tokens over that time and the GPUs.
    const RankWork w = WorkOf(m, WeightSpecs(m).value(), k.config, k.replicas, o.load, o.hardware,
                              {.weight_bytes = o.memory.weight_bytes, .kv = o.memory.kv})
                           .value();
    const PlanCost cost = CostOf(*p, o.load, o.hardware, k.replicas);
    double step = 0;
    for (size_t r = 0; r < w.decode.size(); ++r) step += w.decode[r].seconds + cost.decode_per_pp_rank[r];
    EXPECT_DOUBLE_EQ(k.step_seconds, step) << FlagsOf(k);
    EXPECT_DOUBLE_EQ(k.tokens_per_gpu, 512 / step / 8) << FlagsOf(k);
  }
}

// Llama 3.1 8B on 24 GPUs: tp 3, 6, 12 and 24 meet heads that do not split
// or sum groups the canonical reduction cannot take; each is counted by its
// reason, numbers left out.
TEST(Compare, CountsRejectionsByReason) {
  const Expected<Comparison> c = Compare(Config("llama-3.1-8b.json"), On(24, 3));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_GT(c->rejected.count("num_attention_heads does not split over attn_tp"), 0U);
  EXPECT_GT(c->rejected.count("input-scattered eligibility"), 0U);
  for (const auto& [reason, n] : c->rejected) {
    EXPECT_EQ(reason.find_first_of("0123456789"), std::string::npos) << reason;
  }
}

TEST(Compare, RefusesGpusThatDoNotFitItsNodes) {
  EXPECT_EQ(Compare(Config("llama-3.1-8b.json"), On(12, 5)).error().message, "--gpus 12 does not split over --nodes 5");
  EXPECT_EQ(Compare(Config("llama-3.1-8b.json"), On(16, 1)).error().message,
            "16 GPUs on 1 node(s) is 16 a node, more than the 8 a h100 node has");
}

}  // namespace
}  // namespace seam

namespace seam {
namespace {

// Llama-3.1-70B on 8 H100s, requests of 1000 tokens in and out, a token
// every 40 ms at most: each candidate at the batch that makes the most
// output tokens per GPU within that and its memory.
CompareOptions Serving(double tpot) {
  CompareOptions o = {.gpus = 8, .nodes = 1, .hardware = LoadHardware("h100").value()};
  o.load = {.prefill = 1000, .context = 1500};
  o.targets = {.tpot = tpot, .osl = 1000};
  o.best_batch = true;
  return o;
}

TEST(Compare, EachCandidateRunsTheBatchThatMakesTheMostTokensWithinItsTargetsAndMemory) {
  const Model m = Config("llama-3.1-70b.json");
  const CompareOptions o = Serving(0.040);
  const Expected<Comparison> c = Compare(m, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Candidate& best = c->ranked.front();
  EXPECT_TRUE(best.fits && best.meets) << FlagsOf(best);
  EXPECT_LE(best.step_seconds, 0.040);
  // Twice its batch either does not fit, misses the target or makes fewer tokens.
  CompareOptions fixed = o;
  fixed.best_batch = false;
  fixed.load.batch = best.batch * 2;
  const Expected<Comparison> twice = Compare(m, fixed);
  ASSERT_TRUE(twice.ok());
  for (const Candidate& k : twice->ranked) {
    if (k.config != best.config || k.replicas != best.replicas) continue;
    EXPECT_TRUE(!k.fits || k.step_seconds > 0.040 || k.tokens_per_gpu <= best.tokens_per_gpu) << FlagsOf(k);
  }
  // Output tokens: batch x 1000 over 1000 steps and each replica's prefills.
  EXPECT_NEAR(best.tokens_per_gpu * 8,
              best.batch * 1000.0 / (1000 * best.step_seconds + best.batch / best.replicas * best.ttft_seconds),
              best.tokens_per_gpu * 8 * 0.25);
}

TEST(Compare, ACandidatePastATargetRanksAfterEveryOneWithinIt) {
  const Expected<Comparison> c = Compare(Config("llama-3.1-70b.json"), Serving(0.020));
  ASSERT_TRUE(c.ok()) << c.error().message;
  bool past = false;
  for (const Candidate& k : c->ranked) {
    if (!k.fits) break;
    if (!k.meets) past = true;
    EXPECT_FALSE(past && k.meets) << FlagsOf(k) << " meets the target but ranks after one that does not";
    if (k.meets) {
      EXPECT_LE(k.step_seconds, 0.020) << FlagsOf(k);
    }
  }
  EXPECT_TRUE(c->ranked.front().meets);
}

}  // namespace
}  // namespace seam

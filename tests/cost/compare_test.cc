// seam compare: every configuration accounted for, the ranking in order,
// each ranked cost the cost model's for its plan.
#include <gtest/gtest.h>

#include "cost/configs.h"
#include "seam/bind.h"
#include "seam/compare.h"
#include "seam/engine.h"

namespace seam {
namespace {

CompareOptions On(int gpus, int nodes, const std::string& hw = "h100") {
  return {.gpus = gpus, .nodes = nodes, .hardware = LoadHardware(hw).value()};
}

// The candidate of exactly this configuration, one replica.
const Candidate& Find(const Comparison& c, const ParallelConfig& cfg) {
  for (const Candidate& k : c.ranked) {
    if (k.replicas == 1 && SeamFlags(k.config, {}) == SeamFlags(cfg, {})) return k;
  }
  throw std::runtime_error("not ranked: " + SeamFlags(cfg, {}));
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
    EXPECT_EQ(MemoryOf(m, k.config, k.replicas, o.load, o.memory).total(), k.memory.total());
    // A decode step: one micro-batch a pipeline rank (at most a sequence a
    // DP group each), every micro-batch through each rank's work and
    // collectives; the batch's tokens over that time and the GPUs.
    Workload load = o.load;
    load.parts = std::min(k.config.pp, 512 / (k.replicas * k.config.attn_dp));
    EXPECT_EQ(k.micro_batches, load.parts) << FlagsOf(k);
    const RankWork w = WorkOf(m, WeightSpecs(m).value(), k.config, k.replicas, load, o.hardware,
                              {.weight_bytes = o.memory.weight_bytes, .kv = o.memory.kv})
                           .value();
    const PlanCost cost = CostOf(*p, load, o.hardware, k.replicas);
    EXPECT_EQ(cost.decode_seconds, k.cost.decode_seconds) << FlagsOf(k);
    double sum = 0, slowest = 0;
    for (size_t r = 0; r < w.decode.size(); ++r) {
      sum += w.decode[r].seconds + cost.decode_per_pp_rank[r];
      slowest = std::max(slowest, w.decode[r].seconds + cost.decode_per_pp_rank[r]);
    }
    const double step = std::max(sum, load.parts * slowest);
    if (k.overlapped) {
      EXPECT_LT(k.step_seconds, step) << FlagsOf(k);
    } else {
      EXPECT_DOUBLE_EQ(k.step_seconds, step) << FlagsOf(k);
    }
    EXPECT_DOUBLE_EQ(k.tokens_per_gpu, 512 / k.step_seconds / 8) << FlagsOf(k);
  }
}

// A pipeline decodes a micro-batch a rank, as vLLM and SGLang schedule
// it: at a large batch each rank passes each of them, and the step is the
// slowest rank's passes; at one sequence the one micro-batch goes through
// every rank in turn.
TEST(Compare, APipelineDecodesAMicroBatchARankPacedByItsSlowestRank) {
  const Model m = Config("llama-3.1-70b.json");
  CompareOptions o = On(8, 1);
  const ParallelConfig cfg{.tp = 4, .pp = 2};
  for (const int batch : {1, 256}) {
    o.load.batch = batch;
    const Expected<Comparison> c = Compare(m, o);
    ASSERT_TRUE(c.ok()) << c.error().message;
    const Candidate& k = Find(*c, cfg);
    EXPECT_EQ(k.micro_batches, batch == 1 ? 1 : 2);
    Workload load = o.load;
    load.parts = k.micro_batches;
    const RankWork w = WorkOf(m, WeightSpecs(m).value(), cfg, 1, load, o.hardware, {}).value();
    const PlanCost cost = CostOf(BindPipeline(m, cfg).value(), load, o.hardware, 1);
    const double first = w.decode[0].seconds + cost.decode_per_pp_rank[0];
    const double second = w.decode[1].seconds + cost.decode_per_pp_rank[1];
    // The last rank holds the LM head: it is the slower.
    ASSERT_GT(second, first);
    EXPECT_DOUBLE_EQ(k.step_seconds, batch == 1 ? first + second : 2 * second);
  }
}

// Two-batch overlap, where the engines run it (an all-to-all MoE), decodes
// each micro-batch as two halves, one's dispatch and combine behind the
// other's compute: at a large batch it hides the all-to-alls; at one
// sequence a half reads every weight again and overlap is not taken.
TEST(Compare, TwoBatchOverlapIsTakenWhereItHidesMoreThanTheSecondReadCosts) {
  const Model m = Config("deepseek-v3.json", 8);
  CompareOptions o = On(16, 2, "h200");
  o.memory.weight_bytes = 1;
  const ParallelConfig cfg{.tp = 16, .attn_dp = 16, .dense_tp = 1, .moe = MoeMode::kA2a};
  for (const int batch : {16, 4096}) {
    o.load.batch = batch;
    o.overlap = true;
    const Expected<Comparison> c = Compare(m, o);
    ASSERT_TRUE(c.ok()) << c.error().message;
    const Candidate& k = Find(*c, cfg);
    o.overlap = false;
    const Expected<Comparison> plain = Compare(m, o);
    ASSERT_TRUE(plain.ok());
    const Candidate& n = Find(*plain, cfg);
    EXPECT_FALSE(n.overlapped);
    EXPECT_EQ(k.overlapped, batch == 4096) << batch;
    if (k.overlapped) {
      EXPECT_LT(k.step_seconds, n.step_seconds);
    } else {
      EXPECT_EQ(k.step_seconds, n.step_seconds);
    }
    // By hand: two halves of the rank's pass, each its other collectives
    // and the longer of its compute and its all-to-alls.
    Workload load = o.load;
    load.parts = 2;
    const RankWork w = WorkOf(m, WeightSpecs(m).value(), cfg, 1, load, o.hardware, {.weight_bytes = 1}).value();
    Hardware hw = o.hardware;
    const PlanCost cost = CostOf(BindPipeline(m, cfg).value(), load, hw, 1);
    const double a2a = cost.a2a_per_pp_rank[0];
    ASSERT_GT(a2a, 0);
    const double halves = 2 * (cost.decode_per_pp_rank[0] - a2a + std::max(w.decode[0].seconds, a2a));
    EXPECT_DOUBLE_EQ(k.step_seconds, std::min(halves, n.step_seconds)) << batch;
  }
  // A TP MoE has no all-to-all to hide.
  o.load.batch = 4096;
  o.overlap = true;
  const Expected<Comparison> c = Compare(m, o);
  for (const Candidate& k : c->ranked) {
    if (k.config.moe != MoeMode::kA2a) {
      EXPECT_FALSE(k.overlapped) << FlagsOf(k);
    }
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

// Whether a serves a user at least as fast and a GPU at least as well as b,
// and one of them better.
bool Dominates(const Candidate& a, const Candidate& b) {
  return a.tpot_seconds <= b.tpot_seconds && a.tokens_per_gpu >= b.tokens_per_gpu &&
         (a.tpot_seconds < b.tpot_seconds || a.tokens_per_gpu > b.tokens_per_gpu);
}

// The frontier against every candidate at every batch a fixed-batch
// comparison gives (each a power of two a DP group of every replica
// holds): each point that fits and meets the target is on the frontier or
// beaten on both by a point of it, and no frontier point is beaten by one.
TEST(Compare, TheFrontierHoldsEveryPointNoOtherBeatsOnBoth) {
  const Model m = Config("llama-3.1-8b.json");
  CompareOptions o = On(4, 1);
  ApplyAsk({.isl = 500, .osl = 200, .tpot = 0.012}, o);
  o.pareto = true;
  const Expected<Comparison> c = Compare(m, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_GT(c->frontier.size(), 3U);
  std::vector<Candidate> every;
  for (int batch = 1; batch <= 4096; batch *= 2) {
    CompareOptions fixed = o;
    fixed.best_batch = fixed.pareto = false;
    fixed.load.batch = batch;
    const Expected<Comparison> at = Compare(m, fixed);
    ASSERT_TRUE(at.ok());
    for (const Candidate& k : at->ranked) {
      // The batch search starts at one sequence a DP group of every replica.
      const int unit = k.replicas * k.config.attn_dp;
      if (k.fits && k.meets && batch % unit == 0) every.push_back(k);
    }
  }
  for (const Candidate& k : every) {
    const bool on = std::any_of(c->frontier.begin(), c->frontier.end(), [&](const Candidate& f) {
      return f.batch == k.batch && f.replicas == k.replicas && SeamFlags(f.config, {}) == SeamFlags(k.config, {});
    });
    // Beaten, or tied on both with a point of the frontier (another spelling of the same step).
    const bool beaten = std::any_of(c->frontier.begin(), c->frontier.end(), [&](const Candidate& f) {
      return Dominates(f, k) || (f.tpot_seconds == k.tpot_seconds && f.tokens_per_gpu == k.tokens_per_gpu);
    });
    EXPECT_TRUE(on || beaten) << FlagsOf(k) << " at " << k.batch;
  }
  for (const Candidate& f : c->frontier) {
    EXPECT_TRUE(f.fits && f.meets);
    EXPECT_LE(f.tpot_seconds, 0.012);
    for (const Candidate& k : every) EXPECT_FALSE(Dominates(k, f)) << FlagsOf(k) << " beats " << FlagsOf(f);
  }
}

// The objective chooses each candidate's batch and the order: latency the
// shortest TPOT (one sequence a DP group), ttft the shortest prefill, and
// throughput the most output per GPU.
TEST(Compare, TheObjectiveChoosesEachCandidatesBatchAndTheOrder) {
  const Model m = Config("llama-3.1-8b.json");
  CompareOptions o = On(4, 1);
  ApplyAsk({.isl = 500, .osl = 200}, o);
  for (const Objective objective : {Objective::kThroughput, Objective::kLatency, Objective::kTtft}) {
    o.objective = objective;
    const Expected<Comparison> c = Compare(m, o);
    ASSERT_TRUE(c.ok());
    const auto key = [&](const Candidate& k) {
      switch (objective) {
        case Objective::kThroughput: return -k.tokens_per_gpu;
        case Objective::kLatency: return k.tpot_seconds;
        case Objective::kTtft: return k.ttft_seconds;
      }
      return 0.0;
    };
    for (size_t i = 1; i < c->ranked.size(); ++i) {
      if (c->ranked[i].fits) {
        EXPECT_LE(key(c->ranked[i - 1]), key(c->ranked[i])) << Name(objective) << " " << i;
      }
    }
    if (objective != Objective::kLatency) continue;
    // No batch gives a candidate a shorter step than the one it runs: not
    // its smallest (a sequence a DP group of every replica), nor any other
    // (a pipeline's steps are as short at up to a sequence a rank).
    for (int batch = 1; batch <= 64; batch *= 2) {
      CompareOptions fixed = o;
      fixed.best_batch = false;
      fixed.load.batch = batch;
      const Expected<Comparison> at = Compare(m, fixed);
      ASSERT_TRUE(at.ok());
      for (const Candidate& k : at->ranked) {
        if (!k.fits || batch % (k.replicas * k.config.attn_dp) != 0) continue;
        const Candidate& chosen = *std::find_if(c->ranked.begin(), c->ranked.end(), [&](const Candidate& x) {
          return x.replicas == k.replicas && SeamFlags(x.config, {}) == SeamFlags(k.config, {});
        });
        EXPECT_LE(chosen.tpot_seconds, k.tpot_seconds) << FlagsOf(k) << " at " << batch;
      }
    }
  }
  EXPECT_EQ(ParseObjective("tokens").error().message,
            "'tokens' is not an objective: throughput (output tokens a second per GPU), latency (per user) or ttft "
            "(time to the first token)");
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
  EXPECT_LE(best.tpot_seconds, 0.040);
  // Twice its batch either does not fit, misses the target or makes fewer tokens.
  CompareOptions fixed = o;
  fixed.best_batch = false;
  fixed.load.batch = best.batch * 2;
  const Expected<Comparison> twice = Compare(m, fixed);
  ASSERT_TRUE(twice.ok());
  for (const Candidate& k : twice->ranked) {
    if (k.config != best.config || k.replicas != best.replicas) continue;
    EXPECT_TRUE(!k.fits || k.tpot_seconds > 0.040 || k.tokens_per_gpu <= best.tokens_per_gpu) << FlagsOf(k);
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
      EXPECT_LE(k.tpot_seconds, 0.020) << FlagsOf(k);
    }
  }
  EXPECT_TRUE(c->ranked.front().meets);
}
}  // namespace
}  // namespace seam

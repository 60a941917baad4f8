// Disaggregated prefill and decode: every split of the GPUs priced from
// the best single instance of each pool, at the slower pool's pace.
#include <gtest/gtest.h>

#include <map>

#include "cost/configs.h"
#include "seam/disaggregate.h"
#include "seam/engine.h"

namespace seam {
namespace {

CompareOptions Serving(int gpus, int nodes) {
  CompareOptions o{.gpus = gpus, .nodes = nodes, .hardware = LoadHardware("h100").value()};
  ApplyAsk({.isl = 2000, .osl = 500, .tpot = 0.03}, o);
  return o;
}

// The best single instance of `size` GPUs by a rate, recomputed with a
// one-replica comparison.
double BestRate(const Model& m, const CompareOptions& o, int size, bool prefill) {
  CompareOptions one = o;
  one.gpus = size;
  one.nodes = 1;
  one.replicas = 1;
  one.targets = {.tpot = o.targets.tpot};
  const Comparison c = Compare(m, one).value();
  double best = 0;
  for (const Candidate& k : c.ranked) {
    if (!k.fits) continue;
    const double world = WorldSize(k.config);
    if (prefill) {
      best = std::max(best, 1 / (k.prefill_interval * world));
    } else if (k.meets) {
      best = std::max(best, k.batch / (k.step_seconds * world));
    }
  }
  return best;
}

// Llama-3.1-8B on one node of 8: every split of 1..7 GPUs for prefill;
// each pool holds copies of the best instance of a size that divides it,
// the split serves at the slower pool's pace, and a prompt's first token
// waits for its prefill and its KV cache's transfer.
TEST(Disaggregate, EachSplitRunsEachPoolsBestInstanceAtTheSlowerPoolsPace) {
  const Model m = Config("llama-3.1-8b.json");
  const CompareOptions o = Serving(8, 1);
  const std::vector<Disaggregated> d = Disaggregate(m, o).value();
  ASSERT_EQ(d.size(), 7U);
  std::map<int, std::pair<double, double>> best;  // size -> (prompts, tokens) a GPU a second
  for (int size = 1; size <= 7; ++size) {
    best[size] = {BestRate(m, o, size, true), BestRate(m, o, size, false)};
  }
  for (const Disaggregated& x : d) {
    EXPECT_EQ(x.prefill.gpus + x.decode.gpus, 8);
    const int ps = WorldSize(x.prefill.layout.config), ds = WorldSize(x.decode.layout.config);
    EXPECT_EQ(x.prefill.instances * ps, x.prefill.gpus);
    EXPECT_EQ(x.decode.instances * ds, x.decode.gpus);
    // No instance of a size that divides the pool does better.
    for (int size = 1; size <= 7; ++size) {
      if (x.prefill.gpus % size == 0) {
        EXPECT_GE(1 / (x.prefill.layout.prefill_interval * ps), best[size].first * (1 - 1e-12)) << size;
      }
      if (x.decode.gpus % size == 0) {
        EXPECT_GE(x.decode.layout.batch / (x.decode.layout.step_seconds * ds), best[size].second * (1 - 1e-12)) << size;
      }
    }
    const double prompts = x.prefill.instances / x.prefill.layout.prefill_interval;
    const double finishing = x.decode.instances * x.decode.layout.batch / (500 * x.decode.layout.step_seconds);
    EXPECT_DOUBLE_EQ(x.requests_per_second, std::min(prompts, finishing));
    EXPECT_DOUBLE_EQ(x.tokens_per_gpu, x.requests_per_second * 500 / 8);
    EXPECT_DOUBLE_EQ(x.ttft_seconds, x.prefill.layout.ttft_seconds + x.kv_transfer_seconds);
    EXPECT_LE(x.tpot_seconds, 0.03);
  }
  for (size_t i = 1; i < d.size(); ++i) EXPECT_GE(d[i - 1].tokens_per_gpu, d[i].tokens_per_gpu);
  // A prompt's KV cache: 2000 tokens of 32 layers' 8 KV heads of 128, K and V in bf16.
  EXPECT_DOUBLE_EQ(d.front().kv_bytes, 2000.0 * 32 * 8 * 128 * 2 * 2);
}

// Across nodes the pools are whole nodes: 16 GPUs on 2 nodes split 8 + 8.
TEST(Disaggregate, PoolsAcrossNodesAreWholeNodes) {
  const std::vector<Disaggregated> d = Disaggregate(Config("llama-3.1-8b.json"), Serving(16, 2)).value();
  ASSERT_EQ(d.size(), 1U);
  EXPECT_EQ(d.front().prefill.gpus, 8);
  EXPECT_EQ(d.front().decode.gpus, 8);
}

TEST(Disaggregate, NeedsRequestsLengthsAndTwoGpus) {
  CompareOptions o = Serving(8, 1);
  o.targets.osl = 0;
  EXPECT_EQ(Disaggregate(Config("llama-3.1-8b.json"), o).error().message,
            "disaggregated serving is priced for requests: give their lengths (--isl and --osl)");
  EXPECT_EQ(Disaggregate(Config("llama-3.1-8b.json"), Serving(1, 1)).error().message,
            "disaggregated serving needs at least 2 GPUs, one for each pool");
}

}  // namespace
}  // namespace seam

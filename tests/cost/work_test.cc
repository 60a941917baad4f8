// The work model: each rank's FLOPs and HBM bytes for a decode step and a
// prefill, counted here again from the models' published sizes, and each
// stage's roofline.
#include <gtest/gtest.h>

#include "cost/configs.h"
#include "seam/work.h"

namespace seam {
namespace {

std::vector<WeightSpec> Specs(const Model& m) { return WeightSpecs(m).value(); }

RankWork WorkFor(const Model& m, const ParallelConfig& cfg, const Workload& load, const WorkOptions& o = {},
                 const Hardware& hw = LoadHardware("h100").value()) {
  Expected<RankWork> w = WorkOf(m, Specs(m), cfg, 1, load, hw, o);
  if (!w) throw std::runtime_error(w.error().message);
  return *std::move(w);
}

// Llama-3.1-8B's sizes, from its config.json: 32 layers of hidden 4096,
// 32 query heads and 8 KV heads of 128, an FFN of 14336, a vocabulary of
// 128256 (the LM head apart from the embedding).
constexpr double kHidden = 4096, kLayers = 32, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kFfn = 14336, kVocab = 128256;
constexpr double kLayerMatrices =
    kHidden * (kHeads + 2 * kKvHeads) * kHeadDim + kHeads * kHeadDim * kHidden + 3 * kHidden * kFfn;
constexpr double kLayerVectors = 2 * kHidden;

TEST(Work, ADecodeStepMultipliesEveryWeightOnceATokenAndAttendsOverTheContext) {
  const Model m = Config("llama-3.1-8b.json");
  const double batch = 16, context = 1000;
  const RankWork w = WorkFor(m, {.tp = 1}, {.batch = 16, .context = 1000});
  ASSERT_EQ(w.decode.size(), 1u);
  const double projections = 2 * batch * kLayerMatrices * kLayers;
  const double attention = kLayers * batch * kHeads * 4 * kHeadDim * context;  // QK^T and PV
  const double head = 2 * batch * kVocab * kHidden;
  EXPECT_DOUBLE_EQ(w.decode[0].flops, projections + attention + head);
  // Every weight it holds read once, bf16, and every sequence's cache.
  const double cache = kLayers * batch * context * 2 * kKvHeads * kHeadDim * 2;
  EXPECT_DOUBLE_EQ(w.decode[0].bytes, 2 * (kLayerMatrices + kLayerVectors) * kLayers + 2 * kVocab * kHidden + cache);
  // At tp 4 each rank holds a quarter of every matrix, attends with a
  // quarter of the heads and caches a quarter of the KV heads.
  const RankWork four = WorkFor(m, {.tp = 4}, {.batch = 16, .context = 1000});
  EXPECT_DOUBLE_EQ(four.decode[0].flops, (projections + attention + head) / 4);
  EXPECT_DOUBLE_EQ(four.decode[0].bytes,
                   2 * (kLayerMatrices / 4 + kLayerVectors) * kLayers + 2 * kVocab * kHidden / 4 + cache / 4);
}

TEST(Work, APrefillAttendsOverHalfItsPromptOnAverageAndRunsTheHeadOnItsLastToken) {
  const Model m = Config("llama-3.1-8b.json");
  const double prompt = 2048;
  const RankWork w = WorkFor(m, {.tp = 2}, {.prefill = 2048});
  const double projections = 2 * prompt * kLayerMatrices * kLayers / 2;
  const double attention = kLayers * prompt * kHeads / 2 * 4 * kHeadDim * prompt / 2;
  const double head = 2 * kVocab * kHidden / 2;
  EXPECT_DOUBLE_EQ(w.prefill[0].flops, projections + attention + head);
}

// Under context parallelism a rank projects and attends its shard of the
// prompt with the heads of its attention-TP group, and runs the TP FFN on
// every row with its share of the whole TP group: tp 8 at cp 2 is half of
// tp 4's work a rank, its attention at the same width.
TEST(Work, AContextParallelPrefillHalvesEachRanksWorkAtTheSameAttentionWidth) {
  const Model m = Config("llama-3.1-8b.json");
  const RankWork tp4 = WorkFor(m, {.tp = 4}, {.prefill = 2048});
  const RankWork cp2 = WorkFor(m, {.tp = 8, .cp = 2}, {.prefill = 2048});
  EXPECT_DOUBLE_EQ(cp2.prefill[0].flops, tp4.prefill[0].flops / 2);
  // It writes every token's keys and values of its group, gathered, as tp 4 does:
  // what it reads less is the FFN's and the head's half of their weights.
  const double halved = 2 * (3 * kHidden * kFfn * kLayers + kVocab * kHidden) / 8;
  EXPECT_DOUBLE_EQ(cp2.prefill[0].bytes, tp4.prefill[0].bytes - halved);
}

// Under decode context parallelism a rank reads one token in dcp of its
// sequences' caches and attends the group's dcp x as many heads over them:
// the same FLOPs, half the cache at dcp 2 (Llama 3.1 8B at tp 16: each of
// its 8 KV heads on two ranks, which split its tokens).
TEST(Work, ADcpRankReadsItsShareOfTheCacheForTheGroupsHeads) {
  const Model m = Config("llama-3.1-8b.json");
  const Workload load{.batch = 16, .context = 1000};
  const RankWork tp16 = WorkFor(m, {.tp = 16}, load);
  const RankWork dcp = WorkFor(m, {.tp = 16, .dcp = 2}, load);
  EXPECT_DOUBLE_EQ(dcp.decode[0].flops, tp16.decode[0].flops);
  const double cache = kLayers * 16 * 1000 * 2 * kHeadDim * 2;  // one KV head a rank, bf16
  EXPECT_DOUBLE_EQ(tp16.decode[0].bytes - dcp.decode[0].bytes, cache / 2);
}

TEST(Work, EachPipelineRankCountsItsOwnLayersAndTheLastTheHead) {
  const Model m = Config("llama-3.1-8b.json");
  const RankWork one = WorkFor(m, {.tp = 1}, {.batch = 4, .context = 10});
  const RankWork two = WorkFor(m, {.tp = 1, .pp = 2, .pp_split = {12, 20}}, {.batch = 4, .context = 10});
  ASSERT_EQ(two.decode.size(), 2u);
  const double head = 2 * 4 * kVocab * kHidden;
  const double layer = (one.decode[0].flops - head) / kLayers;
  EXPECT_DOUBLE_EQ(two.decode[0].flops, 12 * layer);
  EXPECT_DOUBLE_EQ(two.decode[1].flops, 20 * layer + head);
}

TEST(Work, TouchedExpertsAreTheExpectedDistinctChoices) {
  EXPECT_DOUBLE_EQ(TouchedExperts(128, 8, 1), 8);
  EXPECT_DOUBLE_EQ(TouchedExperts(8, 2, 2), 8 * (1 - 0.75 * 0.75));
  EXPECT_NEAR(TouchedExperts(256, 8, 4096), 256, 1e-9);
  EXPECT_DOUBLE_EQ(TouchedExperts(256, 8, 0), 0);
}

// Qwen3-30B-A3B: 48 layers of 128 experts, 8 a token, each three matrices
// of 2048 x 768.
TEST(Work, AMoeStepReadsTheExpertsItsBatchTouchesAndComputesTopKOfThem) {
  const Model m = Config("qwen3-30b-a3b.json");
  const double expert = 3.0 * 2048 * 768;
  const RankWork one = WorkFor(m, {.tp = 1}, {.batch = 1, .context = 1});
  const RankWork many = WorkFor(m, {.tp = 1}, {.batch = 512, .context = 1});
  // One token reads 8 experts a layer, 512 tokens nearly all 128.
  const double touched = (TouchedExperts(128, 8, 512) - 8) * expert * 2 * 48;
  const double other = many.decode[0].bytes - one.decode[0].bytes - touched;
  EXPECT_GT(other, 0);               // the larger batch's cache
  EXPECT_LT(other, 0.01 * touched);  // is small beside the experts it reads
  // Under an all-to-all over 8 ranks each rank holds 16 experts and its
  // expert group sees the batch: a rank reads its share of what is touched.
  const RankWork a2a =
      WorkFor(m, {.tp = 8, .attn_dp = 8, .moe = MoeMode::kA2a, .dp_lm_head = true}, {.batch = 512, .context = 1});
  const RankWork tp = WorkFor(m, {.tp = 8}, {.batch = 512, .context = 1});
  const double routed_flops = 2.0 * 8 * expert * 512 / 8 * 48;
  EXPECT_GT(a2a.decode[0].flops, routed_flops);
  EXPECT_GT(tp.decode[0].flops, routed_flops);
  // The same routed work either way; attention differs (whole heads on a
  // DP rank's own rows against a share of the heads on every row).
  const double attention_tp = tp.decode[0].flops - routed_flops;
  const double attention_a2a = a2a.decode[0].flops - routed_flops;
  EXPECT_GT(attention_tp, 0);
  EXPECT_GT(attention_a2a, 0);
}

TEST(Work, AStageTakesTheSlowerOfItsComputeAndItsMemoryTraffic) {
  const Model m = Config("llama-3.1-8b.json");
  Hardware hw = LoadHardware("h100").value();
  hw.gpu.stage_us = 0;
  // A decode step of one sequence reads far more than it computes: its
  // time is its bytes over HBM bandwidth.
  const RankWork small = WorkFor(m, {.tp = 1}, {.batch = 1, .prefill = 8192, .context = 1}, {}, hw);
  EXPECT_DOUBLE_EQ(small.decode[0].seconds, small.decode[0].bytes / (hw.gpu.hbm_tbs * 1e12 * hw.gpu.memory_efficiency));
  // A long prefill computes far more than it reads: FLOPs over the peak
  // (all but the LM head, run on one token, which reads its weights).
  const double compute = small.prefill[0].flops / (hw.gpu.tflops_bf16 * 1e12 * hw.gpu.compute_efficiency);
  EXPECT_GT(small.prefill[0].seconds, compute);
  EXPECT_LT(small.prefill[0].seconds, compute * 1.003);
  // fp8 weights run on the fp8 peak, twice bf16's on an H100.
  const RankWork fp8 = WorkFor(m, {.tp = 1}, {.batch = 1, .prefill = 8192, .context = 1}, {.weight_bytes = 1}, hw);
  EXPECT_NEAR(fp8.prefill[0].seconds * 2, small.prefill[0].seconds, small.prefill[0].seconds * 0.003);
  // Each stage's kernels add their fixed time: 64 stages and the LM head.
  hw.gpu.stage_us = 20;
  const RankWork timed = WorkFor(m, {.tp = 1}, {.batch = 1, .prefill = 8192, .context = 1}, {}, hw);
  EXPECT_NEAR(timed.decode[0].seconds - small.decode[0].seconds, 65 * 20e-6, 1e-12);
}

TEST(Work, HardwareWithoutComputeFiguresIsRefused) {
  const Model m = Config("llama-3.1-8b.json");
  Hardware hw = LoadHardware("h100").value();
  hw.gpu = {};
  EXPECT_EQ(WorkOf(m, Specs(m), {.tp = 1}, 1, {}, hw, {}).error().message,
            "the hardware states no GPU compute or memory bandwidth to price work on");
}

}  // namespace
}  // namespace seam

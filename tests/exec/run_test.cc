// Running plans: bit-identical to the unsharded reference, empty ranks,
// the record backend, and the errors a run reports.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <string>

#include "exec_testing.h"
#include "seam/runtime/exec.h"

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
    EXPECT_EQ(testing::ReduceScatters(ran.ranks[static_cast<size_t>(rank)]), testing::OwedSumsOf(p, Variant::kOrdinary))
        << "rank " << rank;
  }
  EXPECT_GT(ran.ranks[0].elements_sent(), 0);
}

// The record backend walks the plans without kernels; every call and every
// element it counts is the data run's, except the all-to-all's elements,
// which depend on the routing (record spreads tokens evenly over experts).
TEST(Run, TheRecordBackendCountsTheDataRunsCallsWithoutWeights) {
  struct Case {
    const char* model;
    ParallelConfig cfg;
  };
  const Case cases[] = {
      {"llama", {.tp = 4, .attn_dp = 2, .reduction = Reduction::kRs, .pp = 2}},
      {"llama", {.tp = 2, .input_scattered = true, .pp = 2}},
      {"deepseek-qlora", {.tp = 4, .input_scattered = true}},
      {"deepseek-v2-lite", {.tp = 4, .dense_tp = 1, .moe = MoeMode::kA2a}},
      {"qwen3-moe", {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2}},
      {"nemotron-h", {.tp = 2, .pp = 2}},
      {"mhc", {.tp = 2, .attn_dp = 2}},
      {"nemotron-nas", {.tp = 4, .reduction = Reduction::kRsRsv}},
  };
  for (const Case& c : cases) {
    const Model m = *CatalogueModel(c.model);
    const Batch b = MustBatch(19, 3);
    const testing::Ran data = MustRun(m, c.cfg, MustWeights(m, Dtype::kF32), b, Dtype::kF32);
    const testing::Ran record = MustRun(m, c.cfg, Weights(), b, Dtype::kF32, Backend::kRecord);
    ASSERT_EQ(record.ranks.size(), data.ranks.size());
    for (size_t r = 0; r < data.ranks.size(); ++r) {
      const auto& got = record.ranks[r].ops;
      const auto& want = data.ranks[r].ops;
      ASSERT_EQ(got.size(), want.size()) << c.model << " rank " << r;
      for (const auto& [op, counts] : want) {
        ASSERT_TRUE(got.count(op)) << c.model << " rank " << r << " " << Name(op);
        EXPECT_EQ(got.at(op).calls, counts.calls) << c.model << " rank " << r << " " << Name(op);
        if (op == CommOp::kAllToAll) continue;
        EXPECT_EQ(got.at(op).elements_sent, counts.elements_sent) << c.model << " rank " << r << " " << Name(op);
      }
    }
  }
}

// Under the even spread, with as many experts as members, 8 consecutive rows
// of a slice take every expert k times: a rank sends 7 of its 8 rows' k slots
// away (each with its expert id) and returns as many rows to the others.
TEST(Run, TheRecordBackendSpreadsTheAllToAllEvenlyOverExperts) {
  const Model m = *CatalogueModel("qwen3-moe");
  ASSERT_EQ(m.dims->experts, 8);
  const ParallelConfig cfg{.tp = 8, .moe = MoeMode::kA2a};
  const testing::Ran record = MustRun(m, cfg, Weights(), MustBatch(64, 2), Dtype::kF32, Backend::kRecord);
  int64_t want = 0;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (s.decl.kind != StageKind::kSparseFfn) continue;
    const int64_t k = s.decl.top_k;
    want += 7 * k * (m.hidden + 1) + 7 * k * m.hidden;  // dispatch, then combine
  }
  ASSERT_GT(want, 0);
  for (size_t r = 0; r < record.ranks.size(); ++r) {
    EXPECT_EQ(record.ranks[r].ops.at(CommOp::kAllToAll).elements_sent, want) << "rank " << r;
  }
}

// The weights are held whole once (the reference computes with them and
// every rank reads its part in place, whatever the sharding); each rank and
// the reference hold working buffers, and keep as many again for reuse.
TEST(RunMemory, TheWeightsOnceAndEachRankItsWorkingBuffers) {
  const Model m = LlamaModel(4);
  const ModelDims& d = *m.dims;
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .pp = 2};
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  ASSERT_TRUE(specs.ok());
  int64_t whole = 0, halves = 0;
  for (const WeightSpec& s : *specs) {
    whole += int64_t{4} * s.rows * s.cols;
    halves += int64_t{s.rows > 1 ? 2 : 4} * s.rows * s.cols;  // bf16: matrices in 16 bits, vectors as floats
  }
  Expected<MemoryEstimate> e = EstimateRunMemory(m, cfg, 20, Dtype::kF32);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->weights, whole);
  EXPECT_EQ(EstimateRunMemory(m, {.tp = 4, .pp = 2}, 20, Dtype::kF32)->weights, whole);  // any sharding: the same
  EXPECT_EQ(EstimateRunMemory(m, cfg, 20, Dtype::kBf16)->weights, halves);
  EXPECT_EQ(EstimateRunMemory(m, cfg, 20, Dtype::kBf16)->activations, e->activations);
  const int64_t widest = std::max({m.hidden, d.intermediate, d.heads * d.head_dim});
  EXPECT_EQ(e->activations, int64_t{8 + 1} * 2 * 8 * 20 * widest * 4);  // 8 ranks and the reference, live and kept
  EXPECT_EQ(e->total(), (e->weights + e->activations) * 17 / 16);
  // What a thread keeps is bounded: at 100,000 tokens the live buffers pass 256 MiB.
  const int64_t live = int64_t{8} * 100000 * widest * 4;
  ASSERT_GT(live, int64_t{256} << 20);
  EXPECT_EQ(EstimateRunMemory(m, cfg, 100000, Dtype::kF32)->activations,
            int64_t{8 + 1} * (live + (int64_t{256} << 20)));
}

// The refusal names the most leading layers that fit, and they do fit.
TEST(RunMemory, ARunOverTheLimitIsRefusedNamingTheLayersThatFit) {
  const Model m = LlamaModel(4);
  const ParallelConfig cfg{.tp = 2};
  Model three = m;
  three.num_layers = 3;
  const MemoryLimit limit{EstimateRunMemory(three, cfg, 32, Dtype::kBf16)->total(), "--max-memory"};
  EXPECT_TRUE(CheckRunMemory(three, cfg, 32, Dtype::kBf16, limit).ok());
  const Status s = CheckRunMemory(m, cfg, 32, Dtype::kBf16, limit);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("(--max-memory); --layers 3 fits, and --backend record counts the plan without "
                                   "weights"),
            std::string::npos)
      << s.error().message;
}

// Under ulimit -v the default limit is what the address space leaves, so a
// run too big for it is refused before it allocates, not ended by bad_alloc.
TEST(RunMemory, TheDefaultLimitIsWhatTheAddressSpaceLimitLeaves) {
  const auto mapped = [] {
    std::ifstream in("/proc/self/status");
    std::string key;
    int64_t kib = 0;
    while (in >> key) {
      if (key == "VmSize:" && in >> kib) return kib * 1024;
    }
    return int64_t{0};
  };
  constexpr int64_t kHeadroom = int64_t{1} << 30;  // below this machine's available memory
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
  rlimit tight = before;
  tight.rlim_cur = static_cast<rlim_t>(mapped() + kHeadroom);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  const MemoryLimit limited = RunMemoryLimit(0);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &before), 0);
  EXPECT_EQ(limited.source, "what ulimit -v leaves this process; --max-memory sets another");
  EXPECT_LE(limited.bytes, kHeadroom);
  EXPECT_GT(limited.bytes, kHeadroom - (int64_t{64} << 20)) << "less only what the test mapped meanwhile";
  EXPECT_EQ(RunMemoryLimit(12345).bytes, 12345);
  EXPECT_EQ(RunMemoryLimit(12345).source, "--max-memory");
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
  EXPECT_EQ(
      CheckRunnable(few, {.tp = 8}).error().message,
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
  EXPECT_EQ(RandomBatch(2, 3, 256, 1).error().message, "--tokens 2 cannot fill 3 requests of at least one token each");
  EXPECT_EQ(RandomBatch(4, 0, 256, 1).error().message, "--requests 0 must be at least 1");
}

TEST(Run, WeightsOfAnotherShapeAreRejected) {
  const Model m = LlamaModel(2);
  std::map<std::string, Tensor> tensors = MustWeights(m, Dtype::kF32).Copies();
  tensors["model.layers.1.mlp.up_proj.weight"] = Tensor(64, 64);
  const Weights bad(std::move(tensors));
  Expected<Pipeline> plans = BindPipeline(m, {.tp = 2});
  ASSERT_TRUE(plans.ok());
  EXPECT_EQ(RunPlans(m, *plans, bad, MustBatch(4, 1), {}).error().message,
            "weight 'model.layers.1.mlp.up_proj.weight' is [64, 64] but the model needs [128, 64]");
}

TEST(Run, TheSameSeedGivesTheSameWeightsAndAnotherSeedOthers) {
  const Model m = LlamaModel(1);
  const Weights a = MustWeights(m, Dtype::kF32, 5), b = MustWeights(m, Dtype::kF32, 5),
                c = MustWeights(m, Dtype::kF32, 6);
  EXPECT_EQ(a.at("model.layers.0.self_attn.q_proj.weight"), b.at("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_FALSE(a.at("model.layers.0.self_attn.q_proj.weight") == c.at("model.layers.0.self_attn.q_proj.weight"));
  // Different everywhere: no two tensors of one shape hold the same values.
  EXPECT_FALSE(a.at("model.layers.0.self_attn.k_proj.weight") == a.at("model.layers.0.self_attn.v_proj.weight"));
  for (float v : a.at("model.layers.0.input_layernorm.weight").span()) EXPECT_NEAR(v, 1.0f, 0.05f);
}

}  // namespace
}  // namespace seam

// Context parallelism on numbers: where each request's tokens sit, and that
// every family with attention gives the reference's bits with them sharded.
#include <gtest/gtest.h>

#include <functional>
#include <string_view>

#include "exec_testing.h"
#include "seam/model.h"
#include "seam/runtime/batch.h"

namespace seam {
namespace {

using testing::MustBatch;
using testing::MustReference;
using testing::MustRun;
using testing::MustWeights;

// ---- the zig-zag split: SGLang's in-seq split, vLLM's DualChunkSwap ----

TEST(ZigZag, CpRankCHoldsBlockCAndItsMirrorSoEveryRankHasEarlyAndLateTokens) {
  // 16 tokens, cp 4: eight blocks of two.
  EXPECT_EQ(ZigZagShards(16, 4),
            (std::vector<std::vector<int>>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
}

TEST(ZigZag, TheRemainderGoesToTheLowestBlocks) {
  // 10 tokens, cp 2: blocks of 3, 3, 2, 2.
  EXPECT_EQ(ZigZagShards(10, 2), (std::vector<std::vector<int>>{{0, 1, 2, 8, 9}, {3, 4, 5, 6, 7}}));
  // 5 tokens, cp 2: blocks of 2, 1, 1, 1.
  EXPECT_EQ(ZigZagShards(5, 2), (std::vector<std::vector<int>>{{0, 1, 4}, {2, 3}}));
}

TEST(ZigZag, APartShorterThanTheBlocksLeavesTheHighCpRanksEmpty) {
  // A decode step's one token is CP rank 0's; three tokens over cp 4 fill blocks 0..2.
  EXPECT_EQ(ZigZagShards(1, 2), (std::vector<std::vector<int>>{{0}, {}}));
  EXPECT_EQ(ZigZagShards(3, 4), (std::vector<std::vector<int>>{{0}, {1}, {2}, {}}));
}

TEST(ZigZag, ALayoutOrdersRowsByDpGroupThenCpRankWithEveryRequestsShare) {
  Batch b;
  b.requests = {{10, 11, 12, 13}, {20, 21}, {30, 31, 32, 33, 34, 35}};  // groups 0, 1, 0
  const BatchLayout l = LayoutOf(b, /*attn_dp=*/2, /*cp=*/2);
  // Group 0 CP 0: request 0's positions 0, 3 and request 2's 0, 1, 5; CP 1: 1, 2 and 2, 3, 4.
  // Group 1 CP 0: request 1's position 0; CP 1: its position 1.
  EXPECT_EQ(l.token_ids, (std::vector<int>{10, 13, 30, 31, 35, 11, 12, 32, 33, 34, 20, 21}));
  EXPECT_EQ(l.positions, (std::vector<int>{0, 3, 0, 1, 5, 1, 2, 2, 3, 4, 0, 1}));
  EXPECT_EQ(l.batch_index, (std::vector<int>{0, 3, 6, 7, 11, 1, 2, 8, 9, 10, 4, 5}));
  EXPECT_EQ(l.group_offset, (std::vector<int>{0, 5, 10, 11}));
  EXPECT_EQ(l.group_rows, (std::vector<int>{5, 5, 1, 1}));
  // Each rank's attention rows are its shard's: tp 8 under attn-dp 2 and cp 2 is attn_tp 2.
  const ParallelConfig cfg{.tp = 8, .attn_dp = 2, .cp = 2};
  EXPECT_EQ(SpanOf(l, cfg, Rows::Attention(cfg), CoordOf(cfg, 3)), (RowSpan{5, 10}));   // dp 0, cp 1
  EXPECT_EQ(SpanOf(l, cfg, Rows::Attention(cfg), CoordOf(cfg, 4)), (RowSpan{10, 11}));  // dp 1, cp 0
  EXPECT_EQ(SpanOf(l, cfg, Rows::Slice(cfg), CoordOf(cfg, 3)), (RowSpan{8, 10}));       // its slice
}

// ---- the same bits as the reference ----

bool HasMixer(const Model& m) {
  for (int l = 0; l < m.num_layers; ++l) {
    for (const StageDecl& d : m.layer(l)) {
      if (d.kind == StageKind::kMixer) return true;
    }
  }
  return false;
}

// Each catalogue family at each configuration, fp32 and bf16, on 37 tokens
// in 5 requests: its bits against the reference's, or its refusal, which
// `expected(model, message)` must accept.
struct Outcomes {
  int ran = 0;
  int refused = 0;
};
Outcomes RunEveryFamily(std::initializer_list<ParallelConfig> configs,
                        const std::function<bool(const Model&, const std::string&)>& expected) {
  Outcomes out;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    for (Dtype d : {Dtype::kF32, Dtype::kBf16}) {
      const Weights w = MustWeights(m, d);
      const Batch b = MustBatch(37, 5);
      for (const ParallelConfig& cfg : configs) {
        const Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
        if (!plans) {
          EXPECT_TRUE(expected(m, plans.error().message))
              << e.name << " " << Describe(cfg) << ": " << plans.error().message;
          ++out.refused;
          continue;
        }
        const Tensor ref = MustReference(m, cfg, w, b, d);
        EXPECT_EQ(MustRun(m, cfg, w, b, d).hidden, ref) << e.name << " " << Describe(cfg) << " " << Name(d);
        ++out.ran;
      }
    }
  }
  return out;
}

bool Says(const std::string& message, std::string_view what) { return message.find(what) != std::string::npos; }

// Every family with attention, at CP 2 and 4, with attention TP, under
// attention DP, across a pipeline cut and with an a2a MoE, fp32 and bf16.
// Requests longer and shorter than the 2 x cp blocks, so some ranks hold
// few or no rows of a request.
TEST(ContextParallel, EveryFamilyWithAttentionRunsBitIdenticalToTheReference) {
  const Outcomes o = RunEveryFamily(
      {ParallelConfig{.tp = 2, .cp = 2}, ParallelConfig{.tp = 4, .cp = 4},
       ParallelConfig{.tp = 8, .attn_dp = 2, .cp = 2, .pp = 2}, ParallelConfig{.tp = 4, .cp = 2, .dense_tp = 2},
       ParallelConfig{.tp = 8, .attn_dp = 2, .cp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4}},
      [](const Model& m, const std::string& why) {
        return (HasMixer(m) && Says(why, "a mixer runs its recurrence")) || Says(why, "no all-to-all dispatch path");
      });
  EXPECT_GE(o.ran, 9 * 2 * 5 - 2 * 2);  // nine families with attention alone; gpt-oss has no a2a
  EXPECT_GT(o.refused, 0);
}

// One token over four CP ranks: three hold no rows of it, and every rank
// still joins every collective (the same count on each), and the token's
// bits are the reference's.
TEST(ContextParallel, CpRanksWithoutRowsStillJoinEveryCollective) {
  const Model m = CatalogueModel("llama").value();
  const Weights w = MustWeights(m, Dtype::kF32);
  const Batch b = MustBatch(1, 1);
  const ParallelConfig cfg{.tp = 4, .cp = 4};
  const testing::Ran r = MustRun(m, cfg, w, b, Dtype::kF32);
  EXPECT_EQ(r.hidden, MustReference(m, cfg, w, b, Dtype::kF32));
  ASSERT_EQ(r.ranks.size(), 4u);
  for (const CommStats& s : r.ranks) {
    EXPECT_GT(s.calls(), 0);
    EXPECT_EQ(s.calls(), r.ranks.front().calls());
  }
}

// ---- decode context parallelism: the cache split by position ----

// Every family with attention, its cache split over DCP groups of 2, 4 and
// 8 ranks, with attention DP and a pipeline cut, under prefill context
// parallelism, on input-scattered batches and with an a2a MoE, fp32 and
// bf16: the same bits as one rank holding the whole cache. Where a
// family's key/value heads are not shared by a DCP group's ranks it is
// refused saying so.
TEST(DecodeContextParallel, EveryFamilyWithAttentionRunsBitIdenticalToTheReference) {
  const Outcomes o = RunEveryFamily(
      {ParallelConfig{.tp = 4, .dcp = 2}, ParallelConfig{.tp = 8, .dcp = 4}, ParallelConfig{.tp = 8, .dcp = 8},
       ParallelConfig{.tp = 8, .attn_dp = 2, .dcp = 2, .pp = 2}, ParallelConfig{.tp = 8, .cp = 2, .dcp = 2},
       ParallelConfig{.tp = 4, .dcp = 2, .input_scattered = true},
       ParallelConfig{.tp = 8, .attn_dp = 2, .dcp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4}},
      [](const Model& m, const std::string& why) {
        return Says(why, "attention-TP ranks that hold the same key/value heads") ||
               (HasMixer(m) && Says(why, "a mixer runs its recurrence")) || Says(why, "no all-to-all dispatch path") ||
               Says(why, "input-scattered");
      });
  // 75 of the 14 families' 98 pairs run (the rest refused as above), in both dtypes.
  EXPECT_EQ(o.ran, 2 * 75);
  EXPECT_EQ(o.refused, 2 * 23);
}

}  // namespace
}  // namespace seam

// The memory model against the engines' own formulas: a token's KV cache
// and a request's recurrent state on a rank as SGLang and vLLM count them,
// SGLang's default --mem-fraction-static, vLLM's budget, and the largest
// batch that fits. The expected numbers are worked by hand from each
// engine's source (SGLang's get_cell_size_per_token, Mamba2StateShape and
// memory_hook.handle_gpu_memory_settings; vLLM's FullAttentionSpec,
// MLAAttentionSpec and MambaStateShapeCalculator) and each model's config.
#include <gtest/gtest.h>

#include "cost/configs.h"
#include "seam/compare.h"
#include "seam/cost.h"

namespace seam {
namespace {

// One sequence of one token: a token's KV cache over the fullest rank's
// layers, and one request's states.
MemoryUse OneToken(const Model& m, const ParallelConfig& cfg, WireDtype kv, MemoryFill fill) {
  return MemoryOf(m, cfg, 1, {.batch = cfg.attn_dp, .prefill = 1, .context = 1}, {.kv = kv, .fill = fill});
}

double KvPerToken(const std::string& config, const ParallelConfig& cfg, WireDtype kv = WireDtype::kBf16) {
  return OneToken(Config(config), cfg, kv, MemoryFill::kVllm).cache;
}

// GQA: K and V of the KV heads a rank holds, one replicated once TP passes
// them (Llama-3.1-70B: 8 KV heads of 128 over 80 layers).
TEST(EngineMemory, AGqaTokenIsItsRanksKvHeadsAndReplicatedPastThem) {
  EXPECT_EQ(KvPerToken("llama-3.1-70b.json", {.tp = 1}), 327680);
  EXPECT_EQ(KvPerToken("llama-3.1-70b.json", {.tp = 2}), 163840);
  EXPECT_EQ(KvPerToken("llama-3.1-70b.json", {.tp = 8}), 40960);
  EXPECT_EQ(KvPerToken("llama-3.1-70b.json", {.tp = 16}), 40960);
  EXPECT_EQ(KvPerToken("llama-3.1-70b.json", {.tp = 8}, WireDtype::kFp8), 20480);
}

// MLA: the 512 + 64 latent whole on every rank, 61 layers (DeepSeek-V3),
// under TP and under DP attention alike.
TEST(EngineMemory, AnMlaTokenIsItsLatentWholeOnEveryRank) {
  EXPECT_EQ(KvPerToken("deepseek-v3.json", {.tp = 1}), 70272);
  EXPECT_EQ(KvPerToken("deepseek-v3.json", {.tp = 8}), 70272);
  EXPECT_EQ(KvPerToken("deepseek-v3.json", {.tp = 8, .attn_dp = 8, .dense_tp = 1}), 70272);
  EXPECT_EQ(KvPerToken("deepseek-v3.json", {.tp = 8}, WireDtype::kFp8), 35136);
}

// Hybrids: only the attention layers cache tokens (Qwen3-Next: 12 of 48
// with 2 KV heads of 256; Nemotron-H-56B: 10 of 118 with 8 of 128); each
// request keeps its mixers' conv windows and states, SGLang's state in
// fp32, vLLM's in the model's dtype.
TEST(EngineMemory, AHybridCachesItsAttentionTokensAndARequestsStates) {
  EXPECT_EQ(KvPerToken("qwen3-next-80b-a3b.json", {.tp = 1}), 24576);
  EXPECT_EQ(KvPerToken("qwen3-next-80b-a3b.json", {.tp = 2}), 12288);
  EXPECT_EQ(KvPerToken("qwen3-next-80b-a3b.json", {.tp = 8}), 12288);
  EXPECT_EQ(KvPerToken("nemotron-h-56b.json", {.tp = 1}), 40960);
  EXPECT_EQ(KvPerToken("nemotron-h-56b.json", {.tp = 8}), 5120);
  const Model next = Config("qwen3-next-80b-a3b.json");
  EXPECT_EQ(OneToken(next, {.tp = 1}, WireDtype::kBf16, MemoryFill::kSglang).states, 77266944);
  EXPECT_EQ(OneToken(next, {.tp = 8}, WireDtype::kBf16, MemoryFill::kSglang).states, 9658368);
  EXPECT_EQ(OneToken(next, {.tp = 1}, WireDtype::kBf16, MemoryFill::kVllm).states, 39518208);
  EXPECT_EQ(OneToken(next, {.tp = 8}, WireDtype::kBf16, MemoryFill::kVllm).states, 4939776);
  const Model nemotron = Config("nemotron-h-56b.json");
  EXPECT_EQ(OneToken(nemotron, {.tp = 1}, WireDtype::kBf16, MemoryFill::kSglang).states, 912605184);
  EXPECT_EQ(OneToken(nemotron, {.tp = 8}, WireDtype::kBf16, MemoryFill::kSglang).states, 114075648);
  EXPECT_EQ(OneToken(nemotron, {.tp = 1}, WireDtype::kBf16, MemoryFill::kVllm).states, 459620352);
  EXPECT_EQ(OneToken(nemotron, {.tp = 8}, WireDtype::kBf16, MemoryFill::kVllm).states, 57452544);
}

// SGLang's default --mem-fraction-static at TP 8: its reserve (512 MiB,
// 1.5 a token of an 8192-token chunk, 1024 for every 8 ranks of TP x PP,
// the decode graphs' 2 x 512 and the prefill graphs') out of what
// nvidia-smi reports (H100 81559 MiB, H200 143771 MiB).
TEST(EngineMemory, SglangsDefaultFractionIsWhatItsReserveLeaves) {
  const Hardware h100 = LoadHardware("h100").value(), h200 = LoadHardware("h200").value();
  const Model llama = Config("llama-3.1-70b.json"), v3 = Config("deepseek-v3.json");
  const MemoryOptions sglang{.fill = MemoryFill::kSglang};
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8}, h100, sglang).fraction, 0.812);
  EXPECT_DOUBLE_EQ(BudgetOf(v3, {.tp = 8}, h100, sglang).fraction, 0.799);
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8}, h200, sglang).fraction, 0.893);
  EXPECT_DOUBLE_EQ(BudgetOf(v3, {.tp = 8}, h200, sglang).fraction, 0.886);
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8, .pp = 2}, h100, sglang).fraction, 0.800);
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8, .pp = 4}, h100, sglang).fraction, 0.775);
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8, .pp = 4}, h200, sglang).fraction, 0.872);
  // The line's own --mem-fraction-static is taken as given.
  const MemoryOptions given{.fill = MemoryFill::kSglang, .fraction = 0.7};
  EXPECT_DOUBLE_EQ(BudgetOf(llama, {.tp = 8}, h100, given).usable, 0.7 * h100.memory_gb * 1e9);
}

// vLLM: 0.9 of the memory less the activations of its profile run and the
// all-to-all's buffers; DeepEP's low-latency buffer for DeepSeek-V3 (256
// experts of 128 tokens of 7168 bf16 values and their scales, four times)
// is 1.91 GB of it.
TEST(EngineMemory, VllmsBudgetIsItsShareLessActivationsAndBuffers) {
  const Hardware h200 = LoadHardware("h200").value();
  const Model v3 = Config("deepseek-v3.json");
  const MemoryBudget tp = BudgetOf(v3, {.tp = 8}, h200, {});
  const MemoryBudget a2a = BudgetOf(v3, {.tp = 8, .attn_dp = 8, .dense_tp = 1, .moe = MoeMode::kA2a}, h200, {});
  EXPECT_DOUBLE_EQ(tp.fraction, 0.9);
  EXPECT_EQ(tp.buffers, 0);
  EXPECT_DOUBLE_EQ(tp.usable, 0.9 * h200.memory_gb * 1e9 - tp.activations);
  const double low_latency = 4.0 * 256 * 128 * (2 * 7168 + 4 * 7168 / 128);
  EXPECT_NEAR(low_latency, 1.9084e9, 1e6);
  EXPECT_GT(a2a.buffers, low_latency);
  EXPECT_LT(a2a.buffers, low_latency + 0.4e9);  // and the normal mode's NVLink buffer, about 0.38 GB
  EXPECT_DOUBLE_EQ(a2a.usable, 0.9 * h200.memory_gb * 1e9 - a2a.activations - a2a.buffers);
}

// SGLang gives a hybrid's states 0.9/1.9 of what its weights leave and
// keeps three of them a running request; the KV cache takes the rest.
// vLLM keeps one a sequence in one pool with the cache.
TEST(EngineMemory, SglangSplitsAHybridsPoolBetweenStatesAndCache) {
  const Hardware h100 = LoadHardware("h100").value();
  const Model next = Config("qwen3-next-80b-a3b.json");
  const MemoryBudget sglang = BudgetOf(next, {.tp = 8}, h100, {.fill = MemoryFill::kSglang});
  EXPECT_DOUBLE_EQ(sglang.state_share, 0.9 / 1.9);
  EXPECT_EQ(sglang.states_per_request, 3);
  const double rest = sglang.usable - 20e9;
  const double states = rest * 0.9 / 1.9 / 3;  // exactly the states' share
  EXPECT_TRUE(Fits({.weights = 20e9, .cache = 1e9, .states = states}, sglang));
  EXPECT_FALSE(Fits({.weights = 20e9, .cache = 1e9, .states = states * 1.01}, sglang));
  EXPECT_TRUE(Fits({.weights = 20e9, .cache = rest / 1.9, .states = 0}, sglang));
  EXPECT_FALSE(Fits({.weights = 20e9, .cache = rest / 1.9 * 1.01, .states = 1}, sglang));
  // vLLM: one pool, whatever the split.
  const MemoryBudget vllm = BudgetOf(next, {.tp = 8}, h100, {});
  EXPECT_EQ(vllm.state_share, 0);
  EXPECT_TRUE(Fits({.weights = 20e9, .cache = 1e9, .states = vllm.usable - 21e9}, vllm));
  EXPECT_FALSE(Fits({.weights = 20e9, .cache = 1e9, .states = vllm.usable - 20.9e9}, vllm));
}

// The largest batch that fits, computed: Llama-3.1-70B in bf16 at TP 8 on
// H100s with 4096 tokens a sequence, as each engine fills the memory, is
// the most sequences whose cache fits what the weights leave.
TEST(EngineMemory, TheBestBatchIsTheLargestThatFitsTheEnginesBudget) {
  const Model m = Config("llama-3.1-70b.json");
  for (const MemoryFill fill : {MemoryFill::kVllm, MemoryFill::kSglang}) {
    CompareOptions o{.gpus = 8, .nodes = 1, .hardware = LoadHardware("h100").value()};
    o.load = {.prefill = 4096, .context = 4096};
    o.best_batch = true;
    o.memory.fill = fill;
    const Expected<Comparison> c = Compare(m, o);
    ASSERT_TRUE(c.ok());
    const Candidate& k = *std::find_if(c->ranked.begin(), c->ranked.end(), [](const Candidate& x) {
      return x.replicas == 1 && x.config == ParallelConfig{.tp = 8};
    });
    const MemoryBudget b = BudgetOf(m, {.tp = 8}, o.hardware, o.memory);
    const double weights = k.memory.weights;
    const double per_sequence = 40960.0 * 4096;
    const int largest = static_cast<int>((b.usable - weights) / per_sequence);
    EXPECT_EQ(k.batch, largest) << (fill == MemoryFill::kSglang ? "sglang" : "vllm");
    EXPECT_GT(largest, 0);
    EXPECT_NE(largest & (largest - 1), 0) << "not a power of two: the search does not stop at one";
    EXPECT_TRUE(k.fits);
  }
}

}  // namespace
}  // namespace seam

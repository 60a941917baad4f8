// What each rank holds: its shard of the weights and its share of the cache.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/cache.h"
#include "seam/cost.h"
#include "seam/pipeline.h"
#include "seam/stage_shape.h"
#include "seam/weight_specs.h"
#include "seam/work.h"

namespace seam {

MemoryUse MemoryOf(const Model& m, const ParallelConfig& cfg, int replicas, const Workload& load,
                   const MemoryOptions& o) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return {};
  return MemoryOf(m, *specs, cfg, replicas, load, o);
}

MemoryUse MemoryOf(const Model& m, const std::vector<WeightSpec>& specs, const ParallelConfig& cfg, int replicas,
                   const Workload& load, const MemoryOptions& o) {
  Expected<ModelWeights> weights = SumWeights(m, specs);
  if (!weights) return {};
  return MemoryOf(m, *weights, cfg, replicas, load, o);
}

namespace {

// A stage's weights on one rank: matrices split over the group its
// weights are split over (seam/stage_shape.h), vectors and the matrices held
// whole (routers, MLA's down-projections) whole; a shared expert whole
// under an all-to-all, split over TP under a TP MoE; nothing split in a
// no-op stage.
double StageWeightsOnRank(const StageWeights& st, const ParallelConfig& cfg) {
  if (st.stage.decl.kind == StageKind::kNoOp) return st.vectors + st.whole + st.shared + st.split + st.routed;
  const StageShape shape = ShapeOf(st.stage.decl, cfg);
  const double shard = shape.shard ? GroupSize(cfg, *shape.shard) : 1;
  const double shared = cfg.moe == MoeMode::kA2a ? st.shared : st.shared / shard;
  return st.vectors + st.whole + shared + (st.split + st.routed) / shard;
}

// The embedding on the first rank (vocabulary-parallel over the TP group,
// or whole under attention DP); the final norm and the LM head
// (vocabulary-parallel over its group) on the last.
double EndsOnRank(const ModelWeights& w, const ParallelConfig& cfg, bool first, bool last) {
  double out = 0;
  if (first) {
    const StageShape shape = EmbeddingShape(cfg);
    out += w.embedding / (shape.shard ? GroupSize(cfg, *shape.shard) : 1);
  }
  if (last) {
    const StageShape shape = LmHeadShape(cfg);
    out += w.final_norm + w.lm_head / (shape.shard ? GroupSize(cfg, *shape.shard) : 1);
  }
  return out;
}

}  // namespace

MemoryUse MemoryOf(const Model& m, const ModelWeights& weights, const ParallelConfig& cfg, int replicas,
                   const Workload& load, const MemoryOptions& o) {
  MemoryUse fullest;
  Expected<std::vector<LayerRange>> ranges = SplitLayers(cfg, m.num_layers);
  if (!ranges || !m.dims) return fullest;
  const ModelDims& dims = *m.dims;
  const CacheBytes bytes = CacheBytesOf(o.kv, o.fill);
  // Sequences one rank caches: its replica's share, split over DP groups.
  const double sequences = static_cast<double>(load.batch) / replicas / cfg.attn_dp;
  for (size_t r = 0; r < ranges->size(); ++r) {
    const LayerRange range = (*ranges)[r];
    MemoryUse use{.pp_rank = static_cast<int>(r)};
    use.weights = EndsOnRank(weights, cfg, r == 0, r + 1 == ranges->size()) * o.weight_bytes;
    for (const StageWeights& st : weights.stages) {
      const StageRef& s = st.stage;
      if (s.layer < range.first || s.layer >= range.last) continue;
      use.weights += StageWeightsOnRank(st, cfg) * o.weight_bytes;
      const CacheRow c = CacheOf(s.decl, dims, cfg, bytes);
      // Decode context parallelism: each token's entry on one rank of its DCP group.
      const int held = s.decl.window > 0 ? std::min(s.decl.window, load.context) : load.context;
      use.cache += sequences * c.per_token * held / cfg.dcp;
      use.states += sequences * c.per_sequence;
    }
    if (use.total() > fullest.total()) fullest = use;
  }
  return fullest;
}

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// SGLang's default --mem-fraction-static (memory_hook.py,
// handle_gpu_memory_settings): what it reserves, in MiB, is 512 of
// metadata, 1.5 a token of the prefill chunk (as given: it divides the
// chunk over DP groups only after, in _handle_data_parallelism), 1024 for every 8 ranks of TP x PP, 2 a sequence of
// the decode CUDA graphs (256 below TP 4, else 512) and, under DP
// attention, 3 (and 1.5 more above 300) a sequence a DP group; 1536 for an
// MLA model's prefill graphs, 8 a size of the 58 of another's; at least
// 10 GiB on a GPU above 60 GiB, and 2 GiB more for DeepEP.
double SglangFraction(const Model& m, const ParallelConfig& cfg, const Hardware& hw, int chunk) {
  const double gpu = hw.memory_gb * 1e9 / kMiB;
  const double graph_bs = cfg.tp < 4 ? 256 : 512;
  const int dp = cfg.attn_dp;
  double reserved = 512 + 1.5 * std::max(chunk, 2048) + cfg.tp * cfg.pp / 8.0 * 1024 + 2 * graph_bs;
  reserved += m.dims && m.dims->mla.kv_lora > 0 ? 1536 : 8 * 58;
  if (dp > 1) reserved += graph_bs * dp * (graph_bs > 300 ? 4.5 : 3);
  if (gpu > 60 * 1024) reserved = std::max(reserved, 10240.0);
  if (cfg.moe == MoeMode::kA2a) reserved += 2048;
  return std::round((gpu - reserved) / gpu * 1000) / 1000;
}

// vLLM's profile run: a forward of the prefill chunk's tokens, whose peak a
// rank holds is about the residual, its normed copy, attention's input and
// output and the widest FFN's gate, up and product (a routed expert's
// rows top_k a token), in bf16; and its sampler over max_num_seqs
// sequences (1024 on GPUs of 70 GiB or more, else 256) of fp32 logits.
double VllmActivations(const Model& m, const ParallelConfig& cfg, const Hardware& hw, int chunk) {
  if (!m.dims) return 0;
  const ModelDims& d = *m.dims;
  const double dense = static_cast<double>(d.intermediate) / cfg.dense_tp_size();
  int top_k = 0;
  for (const StageRef& st : StagesOf(m, 0, m.num_layers)) top_k = std::max(top_k, st.decl.top_k);
  const double routed = static_cast<double>(d.moe_intermediate) * top_k / cfg.tp;
  const double per_token = 2.0 * (4.0 * m.hidden + 3.0 * std::max(dense, routed));
  const double seqs = hw.memory_gb * 1e9 >= 70 * kGiB ? 1024 : 256;
  return chunk * per_token + seqs * d.vocab * 4.0;
}

// DeepEP's buffers a GPU holds for an all-to-all MoE (csrc/config.hpp): the
// low-latency buffer for 128 tokens a rank (SGLang's default
// SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK), four of every expert's
// 128 tokens of bf16 rows and their fp32 scales; and the normal mode's
// NVLink buffer, 10 channels of 288 tokens from each of up to 8 peers.
double DeepEpBuffers(const Model& m, const ParallelConfig& cfg) {
  if (cfg.moe != MoeMode::kA2a || !m.dims) return 0;
  const double hidden = m.hidden;
  const double low_latency = 4.0 * m.dims->experts * 128 * (2 * hidden + 4 * hidden / 128);
  const double peers = std::min(cfg.ep_size(), 8);
  const double normal = 10 * peers * 288 * (2 * hidden + 8 + 128 * 16);
  return low_latency + normal;
}

}  // namespace

int DefaultPrefillChunk(const Hardware& hw, MemoryFill fill) {
  const double gib = hw.memory_gb * 1e9 / kGiB;
  if (gib < 70) return 2048;
  return fill == MemoryFill::kSglang && gib >= 160 ? 16384 : 8192;
}

MemoryBudget BudgetOf(const Model& m, const ParallelConfig& cfg, const Hardware& hw, const MemoryOptions& o) {
  const double memory = hw.memory_gb * 1e9;
  const int chunk = o.prefill_chunk > 0 ? o.prefill_chunk : DefaultPrefillChunk(hw, o.fill);
  MemoryBudget b;
  if (o.fill == MemoryFill::kSglang) {
    b.fraction = o.fraction > 0 ? o.fraction : SglangFraction(m, cfg, hw, chunk);
    b.usable = b.fraction * memory;
    // Within what it reserves; said, not subtracted again.
    b.activations = 1.5 * kMiB * std::max(chunk, 2048);
    b.buffers = cfg.moe == MoeMode::kA2a ? 2 * kGiB : 0;
    // A hybrid's states take r / (1 + r) of what the weights leave
    // (mamba_full_memory_ratio r = 0.9), three a running request.
    if (HasStageKind(m, StageKind::kMixer)) {
      b.state_share = 0.9 / 1.9;
      b.states_per_request = 3;
    }
    return b;
  }
  b.fraction = o.fraction > 0 ? o.fraction : 0.9;
  b.activations = VllmActivations(m, cfg, hw, chunk);
  b.buffers = DeepEpBuffers(m, cfg);
  b.usable = b.fraction * memory - b.activations - b.buffers;
  return b;
}

bool Fits(const MemoryUse& use, const MemoryBudget& b) {
  if (b.state_share <= 0 || use.states <= 0) return use.total() <= b.usable;
  const double rest = b.usable - use.weights;
  return use.states * b.states_per_request <= rest * b.state_share && use.cache <= rest * (1 - b.state_share);
}

Expected<double> ParseWeightBytes(std::string_view text) {
  if (text == "bf16" || text == "fp16") return 2.0;
  if (text == "fp8") return 1.0;
  if (text == "fp32") return 4.0;
  return InvalidArgument(fmt::format("'{}' is not a weight dtype: bf16, fp16, fp8 or fp32", text));
}

}  // namespace seam

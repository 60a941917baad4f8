// seam/cost.h — what a bound pipeline costs on a machine: the time of its
// collectives for a decode step and a prefill, and the memory each rank
// holds.
//
// A collective takes its link's latency plus the bytes the plan says a rank
// moves (bus-factor included) over the bus bandwidth of the slowest link its
// group crosses: within a node its NVLink or PCIe, across nodes the NICs of
// the group's members on a node together (one a GPU, rail-aligned), never
// more than the node's links; an all-to-all takes DeepEP's bandwidth
// instead. Ranks are
// placed in order, gpus_per_node to a node (pipeline rank outermost, as
// GlobalRank numbers them); `replicas` copies of the pipeline sit side by
// side and share the batch. Times are per busiest rank: the pipeline rank
// and the rank within it whose collectives take longest.
//
//   const Workload load{.batch = 64, .prefill = 4096, .context = 4096};
//   PlanCost c = CostOf(pipeline, load, hw, /*replicas=*/1);
//   MemoryUse m = MemoryOf(model, cfg, 1, load, {.weight_bytes = 1, .kv = WireDtype::kBf16});
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "seam/hardware.h"
#include "seam/model.h"
#include "seam/plan.h"
#include "seam/weight_specs.h"

namespace seam {

struct Workload {
  int batch = 64;      // sequences decoding together, over all replicas
  int prefill = 4096;  // tokens of one prefill
  int context = 4096;  // tokens each sequence holds in the KV cache
  // A replica's share of the batch decodes as this many micro-batches, one
  // after another (a pipeline's micro-batches, two-batch overlap's halves):
  // a decode pass moves batch / replicas / parts sequences.
  int parts = 1;
};

// Where a rank of one pipeline replica runs: replicas sit side by side, so
// replica k's rank r is GPU k * world + r.
struct Placement {
  int gpus_per_node = 8;
  int first_gpu = 0;  // the replica's rank 0
  int NodeOf(int rank) const { return (first_gpu + rank) / gpus_per_node; }
};

struct StepCost {
  double seconds = 0;
  bool crosses_nodes = false;
};
// One step of `plan` on `rank` (a global rank of the pipeline, GlobalRank's
// numbering), moving `tokens` tokens of the batch.
StepCost CostOfStep(const Step& s, const Plan& plan, int rank, double tokens, const Hardware& hw, Placement at);

struct PlanCost {
  double decode_seconds = 0;             // one decode step of the batch, busiest rank
  double prefill_seconds_per_token = 0;  // a prefill, per token, busiest rank
  double bytes_per_token = 0;            // the busiest pipeline rank's bytes per token
  double network_bytes_per_token = 0;    // of them, the bytes that cross nodes
  int busiest_pp_rank = 0;
  std::vector<double> decode_per_pp_rank;   // each pipeline rank's decode step
  std::vector<double> prefill_per_pp_rank;  // each pipeline rank's prefill
  std::vector<double> a2a_per_pp_rank;      // of each rank's decode step, its dispatch and combine
  // One decode step's collectives end to end: every pipeline rank's in turn
  // (what a token waits for when nothing overlaps).
  double pipeline_seconds = 0;
};
// Prices each rank's first line as it stands (a hand-edited plan too); a
// rank with no line (a file's, unverified) prices as nothing.
PlanCost CostOf(const Pipeline& ranks, const Workload& load, const Hardware& hw, int replicas);

// Which of a rank's collectives leave its node and over how many NICs: per
// group (kEveryGroup's order) 0 when it stays on one node, else the fewest
// of its members any node holds; and whether its send crosses.
struct Crossings {
  std::array<int, kEveryGroup.size()> rails{};
  bool send = false;
  bool operator==(const Crossings&) const = default;
};

// A pipeline placed on a machine once, priced at many workloads (the
// batches a comparison tries): each pipeline rank's distinct crossings
// over its TP ranks and replicas are worked out when it is placed.
class PlacedPipeline {
 public:
  PlacedPipeline(const Pipeline& ranks, const Hardware& hw, int replicas);
  PlanCost CostAt(const Workload& load) const;

 private:
  const Pipeline* ranks_;
  Hardware hw_;
  int replicas_;
  std::vector<std::vector<Crossings>> kinds_;  // per pipeline rank
};

// How an engine fills a GPU's memory. vLLM (and seam, unless told SGLang)
// gives --gpu-memory-utilization (0.9) of the memory to weights, KV cache
// and recurrent states, less the activations its profile run measures at
// --max-num-batched-tokens and the all-to-all's buffers; it keeps a mixer's
// state in the model's dtype. SGLang gives --mem-fraction-static of it to
// weights, KV cache and states, a fraction it derives from the memory, TP
// and PP sizes and features (activations, CUDA graphs, DeepEP buffers are
// the rest), splits what the weights leave between states and KV cache,
// keeps three states a running request and a mixer's state in fp32.
enum class MemoryFill { kVllm, kSglang };

struct MemoryOptions {
  double weight_bytes = 2;          // per parameter: bf16 2, fp8 1
  WireDtype kv = WireDtype::kBf16;  // the KV cache's dtype
  MemoryFill fill = MemoryFill::kVllm;
  double fraction = 0;    // --mem-fraction-static or --gpu-memory-utilization (0: the engine's default)
  int prefill_chunk = 0;  // tokens a prefill runs at once (0: the engine's default for the GPU)
};

// A weight dtype's bytes a parameter: bf16 and fp16 2, fp8 1, fp32 4.
Expected<double> ParseWeightBytes(std::string_view text);

struct MemoryUse {
  double weights = 0;  // bytes on the fullest rank
  double cache = 0;    // KV cache on it
  double states = 0;   // recurrent state on it (Mamba2, Gated DeltaNet), one a sequence
  int pp_rank = 0;     // the pipeline rank it is on
  double total() const { return weights + cache + states; }
};
// The fullest rank's weights (matrices split over the group a stage's
// weights are split over, vectors whole; the embedding and the LM head
// split over the vocabulary where their shapes say) and cache (each DP group
// holds its own sequences; MLA's latent cache is whole on every
// attention-TP rank).
MemoryUse MemoryOf(const Model& m, const ParallelConfig& cfg, int replicas, const Workload& load,
                   const MemoryOptions& o);
// The same from the model's weight list (WeightSpecs(m)), for a caller that
// prices many configurations of one model: the list is the costly part.
MemoryUse MemoryOf(const Model& m, const std::vector<WeightSpec>& specs, const ParallelConfig& cfg, int replicas,
                   const Workload& load, const MemoryOptions& o);
// The same from the weights summed per stage (seam/work.h SumWeights),
// which a large MoE's tens of thousands of weights come to a few per stage.
struct ModelWeights;
MemoryUse MemoryOf(const Model& m, const ModelWeights& weights, const ParallelConfig& cfg, int replicas,
                   const Workload& load, const MemoryOptions& o);

// What an engine lets a configuration's weights, KV cache and states take
// on each GPU, and what it keeps back for the rest.
struct MemoryBudget {
  double usable = 0;       // bytes for weights, KV cache and states
  double fraction = 0;     // of the GPU's memory, before what is kept back below
  double activations = 0;  // a prefill chunk's activations
  double buffers = 0;      // the all-to-all's buffers (DeepEP)
  // SGLang's pool for a model with recurrent states: the share of what the
  // weights leave that holds states, and the states a running request
  // keeps (0: states and KV cache share one pool, a state a sequence).
  double state_share = 0;
  int states_per_request = 1;
};
MemoryBudget BudgetOf(const Model& m, const ParallelConfig& cfg, const Hardware& hw, const MemoryOptions& o);
// Whether the fullest rank's weights, cache and states fit the budget.
bool Fits(const MemoryUse& use, const MemoryBudget& b);

// The prefill chunk an engine runs on a GPU by default: SGLang's
// chunked_prefill_size and vLLM's max_num_batched_tokens for a server are
// 8192 on GPUs of 70 GiB or more (16384 for SGLang from 160 GiB), else 2048.
int DefaultPrefillChunk(const Hardware& hw, MemoryFill fill);

}  // namespace seam

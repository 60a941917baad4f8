// seam/work.h — what each rank computes and reads from its GPU's memory in
// one decode step and one prefill, from the plan's own shards.
//
// A stage on a rank multiplies the tokens of the rows it computes on
// (seam/stage_shape.h) by the weights it holds (split over the stage's
// shard group); routed experts are counted by what a batch touches: each
// token runs top_k of E experts, so a step reads the distinct experts its
// tokens chose, E (1 - (1 - k/E)^T) of them in expectation, and computes
// top_k experts' work per token spread evenly over the TP group. Attention
// adds its scores and values over the context and, in a decode step, reads
// the KV cache; a recurrent mixer reads and writes its state. A stage takes
// the longer of its FLOPs over the GPU's peak and its bytes over HBM
// bandwidth (each at the hardware's efficiency): the roofline.
//
//   Expected<RankWork> w = WorkOf(model, specs, cfg, replicas, load, hw, {.weight_bytes = 1});
//   double slowest = *std::max_element(w->decode_seconds.begin(), w->decode_seconds.end());
#pragma once

#include <string>
#include <vector>

#include "seam/cost.h"

namespace seam {

// One step's work on one rank.
struct Work {
  double flops = 0;
  double bytes = 0;    // read (and, for recurrent state, written) from HBM
  double seconds = 0;  // each stage's roofline, summed
  Work& operator+=(const Work& o) {
    flops += o.flops;
    bytes += o.bytes;
    seconds += o.seconds;
    return *this;
  }
};

struct WorkOptions {
  double weight_bytes = 2;              // per parameter as the GPU holds it (fp8 block-scaled: 1 and its scales)
  WireDtype kv = WireDtype::kBf16;      // the KV cache's dtype
  MemoryFill fill = MemoryFill::kVllm;  // how the engine keeps a mixer's state
  bool parts = false;                   // also each rank's decode step by what does the work (RankWork::decode_parts)
};

// Each pipeline rank's busiest rank: a decode step of one part of the
// replica's share of the batch (one token a sequence, each with `context`
// tokens cached; Workload::parts), and a prefill of `prefill` tokens.
struct RankWork {
  std::vector<Work> decode;   // per pipeline rank
  std::vector<Work> prefill;  // per pipeline rank
  // With WorkOptions::parts, each pipeline rank's decode step by what does
  // the work: a stage kind ("attention", "sparse-ffn", ...) or "lm-head",
  // summed over its stages (empty otherwise: a ranking needs only totals).
  struct Part {
    std::string what;
    int count = 0;
    Work work;
  };
  std::vector<std::vector<Part>> decode_parts;
};

Expected<RankWork> WorkOf(const Model& m, const std::vector<WeightSpec>& specs, const ParallelConfig& cfg, int replicas,
                          const Workload& load, const Hardware& hw, const WorkOptions& o);

// A model's weights summed per stage by how a rank holds them: what the
// work model reads instead of every weight (a large MoE has tens of
// thousands), for a caller that prices many configurations of one model.
struct StageWeights {
  StageRef stage;
  double vectors = 0;  // elements of vectors: whole wherever read, no FLOPs
  double whole = 0;    // matrices whole on each rank of the stage (routers, MLA's down-projections)
  double shared = 0;   // a shared expert's: split over TP under a TP MoE, whole under an all-to-all
  double split = 0;    // matrices split over the stage's shard group
  double routed = 0;   // every routed expert's matrices
};
struct ModelWeights {
  std::vector<StageWeights> stages;
  // As the memory model places them: the embedding (on the first pipeline
  // rank), an untied LM head and the final norm (on the last).
  double embedding = 0;
  double lm_head = 0;
  double final_norm = 0;
  // The LM head's elements the last rank multiplies by (the embedding's when they are tied).
  double head() const { return lm_head > 0 ? lm_head : embedding; }
};
Expected<ModelWeights> SumWeights(const Model& m, const std::vector<WeightSpec>& specs);
Expected<RankWork> WorkOf(const Model& m, const ModelWeights& weights, const ParallelConfig& cfg, int replicas,
                          const Workload& load, const Hardware& hw, const WorkOptions& o);

// Distinct experts of `experts` that `tokens` tokens choosing `top_k` each
// touch, in expectation (routing taken as uniform).
double TouchedExperts(int experts, int top_k, double tokens);

}  // namespace seam

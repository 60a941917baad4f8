// seam/compare.h — every configuration seam can bind for a model on a number
// of GPUs, ranked by what its communication costs there.
//
// Enumerated: replicas of the pipeline (engines' plain data parallelism),
// pipeline ranks (split evenly), TP, attention DP, the dense FFN's width,
// the MoE mode, input-scattered batches and the boundary reduction. Each is
// bound and verified; a rejection is counted by its reason. The rest are
// ranked: those that fit in memory first, then by the busiest rank's
// collective time per decode step, then per prefill token. Configurations
// that bind the same steps under a wider --reduction are kept once, as the
// narrowest.
//
//   Expected<Comparison> c = Compare(model, {.gpus = 16, .nodes = 2, .hardware = *LoadHardware("h200")});
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "seam/cost.h"
#include "seam/engine.h"
#include "seam/model.h"
#include "seam/topology.h"
#include "seam/wire.h"
#include "seam/work.h"

namespace seam {

// What a deployment must meet: the time to a request's first token and
// between its tokens (0: no target), for requests of `osl` output tokens.
struct Targets {
  double ttft = 0;  // seconds
  double tpot = 0;  // seconds
  int osl = 0;      // output tokens a request makes (0: decode only, prefill not charged)
};

// What a deployment is chosen for, among those that fit and meet the
// targets: the output tokens a GPU makes a second (throughput), the tokens
// a user sees a second (latency: the shortest TPOT), or the shortest time
// to a first token (ttft). Each candidate runs the batch that serves it
// best, and the ranking follows it.
enum class Objective { kThroughput, kLatency, kTtft };
std::string_view Name(Objective o);
Expected<Objective> ParseObjective(std::string_view text);

struct CompareOptions {
  int gpus = 8;
  int nodes = 1;
  Hardware hardware;
  Workload load;
  WireDtypes wire;
  MemoryOptions memory;
  Targets targets;
  // Each candidate at the batch that makes the most output tokens per GPU
  // within the targets and its memory (load.batch is then ignored).
  bool best_batch = false;
  // Where the engines can (an all-to-all MoE: SGLang's
  // --enable-two-batch-overlap, vLLM's --enable-dbo), decode each
  // micro-batch as two halves whose dispatch and combine run behind the
  // other half's compute, when that is faster.
  bool overlap = true;
  Objective objective = Objective::kThroughput;
  // Only layouts of this many replicas (0: every count that divides the GPUs).
  int replicas = 0;
  // Also the frontier of output tokens a second per GPU against per user:
  // every candidate at every batch it can hold, those no other beats on both.
  bool pareto = false;
};

struct Candidate {
  ParallelConfig config;
  int replicas = 1;
  PlanCost cost;  // the collectives
  MemoryUse memory;
  MemoryBudget budget;  // what the engine lets it take on a GPU (seam/cost.h)
  bool fits = false;
  // At `batch` sequences (the workload's, or the best): a decode step end
  // to end, every pipeline rank's compute and memory traffic (seam/work.h)
  // and collectives in turn, which is the time between a request's tokens;
  // a prompt's prefill the same way, the time to its first token; and the
  // output tokens a GPU makes a second (each request's prefill charged
  // once per `osl` tokens where the targets give osl).
  int batch = 0;
  // tpot_seconds: the time between a request's tokens as a serving
  // benchmark measures it, a decode step and the share of the prefills the
  // replica runs between steps (the step alone without osl).
  // A pipeline decodes as many micro-batches as it has ranks (fewer when
  // a DP group has fewer sequences), each through every rank in turn;
  // `overlapped`: each micro-batch as two overlapped halves.
  int micro_batches = 1;
  bool overlapped = false;
  double step_seconds = 0;
  double tpot_seconds = 0;
  double ttft_seconds = 0;
  double prefill_interval = 0;  // a replica starts a prompt this often: its slowest pipeline rank's prefill
  double tokens_per_gpu = 0;
  bool meets = true;  // within the targets at that batch
};

struct Comparison {
  std::vector<Candidate> ranked;
  // With CompareOptions::pareto: the points within the targets that no
  // other point beats on both tokens a second per GPU and per user, the
  // fastest for a user first.
  std::vector<Candidate> frontier;
  std::map<std::string, int> rejected;  // reason -> how many configurations
  int considered = 0;
  int merged = 0;  // the same steps as a narrower --reduction
};

Expected<Comparison> Compare(const Model& m, const CompareOptions& o);

// What a user asks of a deployment, as `seam compare` and the Python
// package take it: a batch, or requests' lengths and latency targets.
struct Ask {
  int batch = 64;
  bool batch_given = false;  // else the best batch, where lengths or targets are given
  int prefill = 4096;        // tokens of one prefill (isl overrides)
  int context = 4096;        // tokens each sequence caches (isl and osl override)
  int isl = 0;               // a request's input tokens
  int osl = 0;               // its output tokens
  double ttft = 0;           // seconds; 0: no target
  double tpot = 0;
};
// The workload, targets and batch search an Ask means: a request's prompt
// is the prefill, and while it decodes it caches the prompt and, on
// average, half its output; with lengths or targets and no batch, each
// candidate runs at its best batch.
void ApplyAsk(const Ask& a, CompareOptions& o);

// The memory as the engine of a launch line fills it, at the line's own
// share of the GPU and prefill chunk where it gives them.
void FillAs(Engine e, const EngineChoice& line, MemoryOptions& m);

// Where a configuration (an engine's, say) ranks (0-based): the best-ranked
// candidate with its layout and replicas, a wider --reduction that binds the
// same steps having been merged into a narrower one; none when it is not
// among them.
std::optional<size_t> RankOf(const Comparison& c, const ParallelConfig& cfg, int replicas);

// About how long Compare takes: the configurations it will bind times the
// model's layers, at the rate measured on a 2-core Zen 4 (about 1.7 us a
// configuration and layer for Kimi-K2 on 16 GPUs, 1.1 us for DeepSeek-V3
// on 96, each at its best batch; counted at 4 us).
inline constexpr double kSecondsPerConfigLayer = 4e-6;
double EstimatedSeconds(const Model& m, const CompareOptions& o);

// A candidate's decode step taken apart, per pipeline rank as its first
// TP rank of the first replica runs it: one micro-batch's pass, its work by
// what does it (seam/work.h) and its collectives by kind and group, each
// with its count and time; then what the pipeline and the overlap make of
// the passes.
struct Explained {
  struct Collective {
    std::string what;  // "ar+add+norm(tp)"
    int count = 0;
    double seconds = 0;
    double bytes = 0;  // what the rank moves, the micro-batch's tokens in all
    bool crosses_nodes = false;
  };
  struct Rank {
    int pp_rank = 0;
    std::vector<RankWork::Part> work;
    std::vector<Collective> collectives;
    double work_seconds = 0;
    double collective_seconds = 0;
    // The rank's pass as the step runs it: work and collectives, or with
    // two-batch overlap its two halves, the all-to-alls behind compute.
    double pass_seconds = 0;
    double hidden_seconds = 0;  // what the overlap saves on this rank's pass
    // Of each step, the time the rank waits for the others: the step less
    // its passes of every micro-batch (the pipeline's bubble).
    double idle_seconds = 0;
  };
  std::vector<Rank> ranks;
  int micro_batches = 1;
  bool overlapped = false;
  double step_seconds = 0;
};
Expected<Explained> Explain(const Model& m, const Candidate& k, const CompareOptions& o);

// The command-line flags of a candidate (seam's, with --replicas).
std::string FlagsOf(const Candidate& c);

// A ranked candidate as `seam compare --format json` writes it (and the
// Python package reads it): its flags without the replicas, the replicas,
// its resolved configuration, tokens per GPU, times, bytes and memory.
nlohmann::ordered_json CandidateJson(const Candidate& c, int rank);

}  // namespace seam

// seam/runtime/exec.h — running bound plans on numbers (the reference: seam/runtime/reference.h).
//
// RunPlans interprets every rank's plan step by step on one thread per rank
// (or records the calls without data), with the pipeline transport of the
// plan: one slice per attention-TP rank, gathered on the receiver. The
// reference runs the same model and weights unsharded, one token at a time.
// With the canonical reduction (every sum a fixed binary tree over the
// canonical K-blocks) and row-invariant kernels, the two agree bit for bit.
//
//   Expected<Pipeline> plans = BindPipeline(model, cfg);
//   Expected<RunOutput> out = RunPlans(model, *plans, weights, batch, {.dtype = Dtype::kBf16});
//   Expected<Tensor> ref = RunReference(model, weights, batch, NumericsOf(cfg, Dtype::kBf16));
//   bool same = out->hidden == *ref;
#pragma once

#include <optional>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"
#include "seam/runtime/batch.h"
#include "seam/runtime/comm.h"
#include "seam/runtime/reference.h"
#include "seam/runtime/weights.h"

namespace seam {

// What a configuration needs to run: a model with sizes, sharded as
// CheckSharding accepts (the same check `seam plan` makes).
Status CheckRunnable(const Model& m, const ParallelConfig& cfg);

// What a run on threads holds at its peak, in bytes: the whole weights,
// once (the reference computes with them and every rank reads its part in
// place; a run of dtype `d` keeps them as StoredBytes says: a bf16 run's
// matrices in 16 bits), and working buffers: a few per rank and for the reference, each
// tokens rows of the widest tensor a stage computes, and as many again
// (at most 256 MiB a thread) that a thread keeps for reuse; then a
// sixteenth more for the allocator and the process.
struct MemoryEstimate {
  int64_t weights = 0;
  int64_t activations = 0;  // working buffers, live and kept for reuse
  int64_t cache = 0;        // a generation's caches and outputs (GenerationCacheBytes)
  int64_t overhead() const { return (weights + activations + cache) / 16; }
  int64_t total() const { return weights + activations + cache + overhead(); }
};
// A generation's size: the requests, and the tokens they feed in all
// (prompts and the generated tokens fed back); none for a forward pass.
struct GenerationSize {
  int64_t fed = 0;
  int64_t requests = 0;
};
Expected<MemoryEstimate> EstimateRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d,
                                           GenerationSize generation = {});
// What a generation holds beyond a forward pass: every token's final hidden
// state and logits, and at most, every rank's caches: per attention stage each attention-TP rank's KV heads (or
// MLA's latent) for each token of its DP group's requests, per mixer its
// conv window and state for each request, as fp32 (the cost model's
// CacheOf at 4 bytes an element).
int64_t GenerationCacheBytes(const Model& m, const ParallelConfig& cfg, GenerationSize generation);
// The bytes a run may take, and what sets them (named in a refusal).
struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;  // "--max-memory", "the memory available now", ...
};
// Refuses (bad input) a run whose estimate exceeds the limit, with the
// estimate, the most leading layers of the model that would fit, and the
// record backend as the way to count the plan at any size.
Status CheckRunMemory(const Model& m, const ParallelConfig& cfg, int tokens, Dtype d, const MemoryLimit& limit,
                      GenerationSize generation = {});
// The memory the system could give this process now (MemAvailable), or 0
// when it cannot tell.
int64_t AvailableMemory();
// `max_memory` when above 0; else the least of what the system has
// available, what the address-space limit (ulimit -v) leaves this process
// and what its cgroup's memory.max leaves it; else (none can be told) no limit.
MemoryLimit RunMemoryLimit(int64_t max_memory);

// Attention's cost grows with the square of each request's length: the
// multiply-adds of every attention stage's scores and weighted values over
// the batch, for the ranks and the reference together.
double AttentionFlops(const Model& m, const Batch& b);
// Refuses (bad input) a run whose attention alone would take longer than
// `max_seconds` at kAttentionFlopsPerSecond, with the estimate and the flag
// that raises the bound.
inline constexpr double kAttentionFlopsPerSecond = 2e9;  // measured: 10,000 tokens of llama's 4 layers in 28 s
Status CheckRunSeconds(const Model& m, const Batch& b, double max_seconds);

struct RunOptions {
  Dtype dtype = Dtype::kF32;
  // kRecord runs no kernels and needs no weights (pass an empty Weights):
  // it counts every collective of the plans at its shape.
  Backend backend = Backend::kThreads;
  double timeout_seconds = 60.0;
  bool log_calls = false;  // keep every rank's calls in RunOutput::calls
};

struct RunOutput {
  Tensor hidden;                             // final hidden states, one row per token in batch order
  Tensor logits;                             // the LM head's, [tokens, vocabulary] in batch order
  std::vector<CommStats> ranks;              // per global rank
  std::vector<std::vector<CommCall>> calls;  // per global rank, with RunOptions::log_calls
  double seconds = 0;
};

Expected<RunOutput> RunPlans(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                             const RunOptions& options);

// Output that is not finite is a failed check whatever it equals: the first
// of the run's and the reference's hidden states and logits holding a NaN or
// an infinity, named, as a FailedCheck.
Status CheckFinite(const RunOutput& out, const Tensor& reference, const Tensor& reference_logits);

// One rank's share of a run: on the last pipeline rank its attention rows of
// the final hidden states (none elsewhere), and what it sent.
struct RankOutput {
  std::optional<Tensor> rows;
  std::optional<Tensor> logits;  // where the plan has an LM head
  CommStats stats;
  std::vector<CommCall> calls;  // with RunOptions::log_calls
};
// Runs global rank `rank`'s plan on `comm`: what a process hosting one rank
// (MPI) calls; RunPlans calls it on every rank.
RankOutput RunRankOf(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b, const RunOptions& options,
                     int rank, Comm& comm);
// The run's output from every rank's share: each DP group's rows placed in
// batch order.
RunOutput AssembleRun(const Model& m, const ParallelConfig& cfg, const Batch& b, std::vector<RankOutput> ranks);
// What RunPlans checks before it runs: a runnable configuration, the
// weights' shapes, one plan per pipeline rank.
Status CheckRun(const Model& m, const Pipeline& plans, const Weights& w, const RunOptions& options);

}  // namespace seam

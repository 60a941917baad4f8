// seam/runtime/trace_check.h — what an engine's ranks ran, checked against
// the plan: each rank's trace (seam/trace.h) aligned with the collectives
// its plan makes at the same batch, and the first step where they part,
// said plainly with the defect it looks like.
//
//   Expected<TraceCheck> c = CheckTraces(model, plans, traces, {});
//   for (const RankCheck& r : c->ranks)
//     if (r.divergence) ... r.divergence->where, ->expected, ->observed, ->defect ...
//
// The batch is read from the trace's own sizes (tokens per DP group) unless
// given. What engines legitimately do differently is allowed, each allowance
// stated once in Allowances() with where it comes from, and every use named
// in the report.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/plan.h"
#include "seam/runtime/exec.h"
#include "seam/trace.h"

namespace seam {

// One collective of a rank's plan, as a trace would show it.
struct PlannedCollective {
  TraceEvent event;  // op, group, shape {rows, row width}, elements, dtype, reduce, peer
  StepKind kind = StepKind::kAllReduce;
  std::optional<Group> group;         // the plan's name for the group (none: send, recv)
  Operand operand = Operand::kValue;  // the buffer it moves
  Owed owed_before = Owed::kNothing;
  std::string where;    // "layer 12 exit (sparse-ffn -> attention)"
  bool routed = false;  // an all-to-all: its rows follow the router, not the batch
  // A gather: what each member sends; a reduce-scatter: each member's part of the sum.
  std::vector<int64_t> member_elements;
};

// Every rank's planned collectives at a batch whose DP group g holds
// group_rows[g] rows (one count per attention-DP group; under context
// parallelism one per shard, each DP group's CP ranks in order).
Expected<std::vector<std::vector<PlannedCollective>>> PlannedTraces(const Model& m, const Pipeline& plans,
                                                                    std::span<const int> group_rows);

// What a run's ranks called (RunOptions::log_calls), as a trace: each call
// in the dtype the plan's wire carries it in, reduced by sum.
std::vector<RankTrace> TraceOfRun(const RunOutput& out, const Pipeline& plans);

// Something engines do differently from seam's plan that still computes the
// same thing, and the source that says they do.
struct Allowance {
  std::string_view name;
  std::string_view what;
  std::string_view source;
};
std::span<const Allowance> Allowances();

struct TraceDivergence {
  int pass = 1;        // the forward pass it met, from 1
  int plan_index = 0;  // the planned collective, in the pass's order (== its count: past the plan's end)
  int trace_line = 0;  // the line (or event) of the trace it met; 0: the trace had ended
  std::string where;
  std::string expected;  // "the plan completes the sum with a reduce-scatter over attn_tp (...)"
  std::string observed;  // "the engine ran an all_reduce over 8 ranks (...)"
  std::string defect;    // "a sum completed twice", ...
};

struct RankCheck {
  int rank = 0;
  int planned = 0;                      // collectives the plan makes on the rank, in every pass checked
  int matched = 0;                      // of them, matched before any divergence
  int skipped = 0;                      // the trace's bookkeeping calls passed over
  std::vector<std::string> allowances;  // the names of those used, each once
  std::optional<TraceDivergence> divergence;
};

// A trace may hold several forward passes (a profile run, a CUDA graph's
// capture at each batch size, prefills): each is checked in turn, at its own
// batch, until one diverges or the traces end.
struct TraceCheck {
  std::vector<int> group_rows;              // the first pass's batch: rows per DP group
  std::vector<std::vector<int>> pass_rows;  // every pass's, in order
  bool inferred = false;                    // read from the trace's sizes
  int replicas = 1;
  std::vector<RankCheck> ranks;  // those the trace holds, in rank order
  std::vector<int> missing;      // ranks of the configuration the trace does not hold
  bool ok() const;               // every rank the trace holds matches
};

struct TraceCheckOptions {
  std::vector<int> group_rows;  // empty: read from the trace
  int replicas = 1;             // copies of the configuration side by side (engine data parallel)
};

// Refused (bad input): a rank beyond the configuration's ranks, a batch
// given for another number of DP groups, a first pass whose batch cannot be
// read from the trace's sizes. Past the first pass, calls no batch fits are
// a divergence: collectives the plan does not have.
Expected<TraceCheck> CheckTraces(const Model& m, const Pipeline& plans, std::span<const RankTrace> traces,
                                 const TraceCheckOptions& options);

}  // namespace seam

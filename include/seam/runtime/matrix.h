// seam/runtime/matrix.h — a model run across a grid of configurations, each checked
// bit for bit against the unsharded reference.
//
// The grid varies one thing at a time around a set of base configurations:
// tp 1/2/4/8, attention DP, input-scattered batches, a fully data-parallel
// dense FFN, a2a MoE; every boundary reduction; every pipeline split up to
// four ranks; fused and unfused add+norm; fp32 and bf16. A case the binder
// rejects or the model's sizes cannot split is skipped with the reason.
//
//   std::vector<MatrixRow> rows = RunMatrix(model, MatrixCases(model), {}).value();
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "seam/runtime/exec.h"
#include "seam/runtime/generate.h"

namespace seam {

struct MatrixCase {
  std::string name;  // "tp4 attn-dp2 rs pp=2 (1+3) bf16"
  ParallelConfig cfg;
  Dtype dtype = Dtype::kF32;
  bool fuse = true;
};

// The grid for a model (`full` adds every split under every reduction).
std::vector<MatrixCase> MatrixCases(const Model& m, bool full = false);

enum class MatrixOutcome { kIdentical, kDiffers, kSkipped };

struct MatrixRow {
  MatrixCase c;
  MatrixOutcome outcome = MatrixOutcome::kSkipped;
  std::string note;  // why a case was skipped
  double max_diff = 0;
  int64_t max_calls = 0;     // collectives of the busiest rank
  int64_t max_elements = 0;  // elements sent by the busiest rank
  double seconds = 0;
};

struct MatrixOptions {
  int tokens = 24;
  int requests = 3;
  uint64_t seed = 1;
  // Above 0: each configuration generates this many tokens a request
  // (seam/runtime/generate.h), its requests in another order and arriving
  // at other steps than the configuration before, and every token fed is
  // checked against the reference's pass over the final sequences.
  int generate = 0;
  ServeOptions serve;
  std::function<void(size_t done, size_t total)> progress;
};

Expected<std::vector<MatrixRow>> RunMatrix(const Model& m, const std::vector<MatrixCase>& cases,
                                           const MatrixOptions& options);

// Pairs of runs that cannot agree bit for bit, with why: the reference of
// TP-MoE sums experts per K-block, an a2a MoE per expert. The tolerance holds
// on the tokens both runs routed to the same experts; a rounding difference
// can tip a near tie in a router and send a token elsewhere, which is counted
// and reported apart.
struct MatrixPair {
  std::string name;
  std::string reason;
  double max_diff = 0;  // over the tokens routed alike
  double tolerance = 0;
  int tokens = 0;
  int rerouted = 0;              // tokens some router sent to other experts
  double rerouted_max_diff = 0;  // over those
  // Within tolerance, and a near tie is rare: most tokens route alike.
  bool ok() const { return max_diff <= tolerance && 4 * rerouted <= tokens; }
};
Expected<std::vector<MatrixPair>> RunMatrixPairs(const Model& m, const MatrixOptions& options);

}  // namespace seam

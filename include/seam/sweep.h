// seam/sweep.h — the exhaustive cut sweep.
//
// Every stack of 1..max_stages single-stage layers over {always-partial
// attention, mixer, dense FFN, sparse FFN}, under every configuration of a
// grid and every boundary reduction, bound uncut and at every cut (every set
// of stage boundaries that makes at most max_pp pipeline ranks). Each cut is
// checked for the invariants: within each rank both sides of every boundary
// agree on the residual's rows; every handoff carries the attention rows with
// every sum complete; stages away from the cut bind as they do uncut; the cut
// and the uncut stack reject the same; every owed sum completes once. The
// catalogue's models go through the same checks, cut at every set of layer
// boundaries.
//
//   SweepReport r = Sweep({.max_stages = 5, .jobs = 2});
//   if (r.totals.violations > 0) ...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "seam/topology.h"
#include "seam/verify.h"

namespace seam {

// A configuration of the grid; the sweep crosses each with every reduction.
struct SweepConfig {
  std::string name;
  ParallelConfig cfg;
};
std::vector<SweepConfig> DefaultSweepConfigs();

struct SweepOptions {
  int max_stages = 5;
  int max_pp = 4;
  int jobs = 1;
  bool catalogue = true;  // also every catalogue model
  std::vector<SweepConfig> configs = DefaultSweepConfigs();
  size_t max_reported = 10;  // violations kept in full
  // Each rank segment is bound and checked once and reused in every cut
  // that holds it. With recheck, every cut is also bound whole and checked
  // as it stands; a difference from the reused result is a violation.
  bool recheck = false;
  // Called now and then from the calling thread with the work units done.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct SweepCounts {
  int64_t stacks = 0;  // stacks (or, for a model, configurations) checked
  int64_t cuts_bound = 0;
  int64_t rejected_uncut = 0;  // (stack, configuration) pairs the binder rejects uncut
  int64_t violations = 0;
  // What each invariant compared. Invariants 1-3 and 6-10 replay every step
  // of every plan (uncut and each rank of each cut); 4 compares every stage
  // of every cut with its uncut binding, counting what differs at the cut
  // and what is handed on beyond it;
  // 5 compares every cut's outcome with the uncut stack's, and where both
  // reject, the stage and rule they name.
  int64_t plans_verified = 0;
  int64_t steps_replayed = 0;
  CutCoverage away_from_cut;
  int64_t cut_outcomes = 0;
  int64_t rejections_compared = 0;
  SweepCounts& operator+=(const SweepCounts& o);
};

struct SweepReport {
  int64_t stacks = 0;
  int64_t configs = 0;  // grid configurations x reductions
  SweepCounts totals;
  std::vector<std::pair<std::string, SweepCounts>> per_config;
  int64_t models = 0;  // catalogue models, each under every configuration
  SweepCounts model_totals;
  std::vector<std::pair<std::string, SweepCounts>> per_model;
  std::vector<std::string> violations;  // the first max_reported, in full
  double seconds = 0;
};

Expected<SweepReport> Sweep(const SweepOptions& options);

}  // namespace seam

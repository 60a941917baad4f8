// Helpers for the tests that run plans on numbers.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>
#include <string>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/runtime/exec.h"
#include "testing.h"

namespace seam {
// Test names and failures name the dtype rather than its bytes.
inline void PrintTo(Dtype d, std::ostream* os) { *os << Name(d); }
}  // namespace seam

namespace seam::testing {

// A stack of single-stage layers (letters as in StackOf) with tiny sizes
// every kind can run with, split over up to 8 ranks.
inline Model RunnableStack(std::string_view letters) {
  Model m = StackOf(letters, 64);
  m.dims = ModelDims{.vocab = 128,
                     .heads = 8,
                     .kv_heads = 2,
                     .head_dim = 16,
                     .rms_eps = 1e-5,
                     .intermediate = 128,
                     .experts = 8,
                     .moe_intermediate = 32,
                     .shared_intermediate = 32,
                     .mixer_heads = 8,
                     .mixer_head_dim = 8,
                     .mixer_state = 8,
                     .mixer_groups = 8,
                     .mixer_conv = 4};
  return m;
}

struct Ran {
  Tensor hidden;
  std::vector<CommStats> ranks;
};

// Binds (verified), runs on threads, and returns the final hidden states.
inline Ran MustRun(const Model& m, const ParallelConfig& cfg, const Weights& w, const Batch& b, Dtype d,
                   Backend backend = Backend::kThreads) {
  Expected<Pipeline> plans = BindPipelineChecked(m, cfg);
  if (!plans) throw std::runtime_error("bind: " + plans.error().message);
  Expected<RunOutput> out = RunPlans(m, *plans, w, b, {.dtype = d, .backend = backend});
  if (!out) throw std::runtime_error("run: " + out.error().message);
  return {out->hidden, out->ranks};
}

inline Tensor MustReference(const Model& m, const ParallelConfig& cfg, const Weights& w, const Batch& b, Dtype d) {
  Expected<Tensor> ref = RunReference(m, w, b, NumericsOf(cfg, d));
  if (!ref) throw std::runtime_error("reference: " + ref.error().message);
  return *std::move(ref);
}

inline Weights MustWeights(const Model& m, Dtype d, uint64_t seed = 1) {
  Expected<Weights> w = GenerateWeights(m, seed, d);
  if (!w) throw std::runtime_error(w.error().message);
  return *std::move(w);
}

inline Batch MustBatch(int tokens, int requests, uint64_t seed = 3) {
  Expected<Batch> b = RandomBatch(tokens, requests, 128, seed);
  if (!b) throw std::runtime_error(b.error().message);
  return *std::move(b);
}

// The owed sums a rank's plan produces: each must complete by exactly one
// reduce-scatter (an all-reduce is a reduce-scatter and an all-gather).
inline int64_t OwedSumsOf(const Plan& p, Variant v) {
  int64_t n = 0;
  const LinePlan& line = *p.line(v);
  if (p.header().pp_rank == 0 && line.stages.front().arrives.value &&
      line.stages.front().arrives.value->owed != Owed::kNothing) {
    ++n;  // the vocab-parallel embedding of an input-scattered batch
  }
  for (const StagePlan& s : line.stages) {
    for (const Step& step : s.compute) n += step.kind == StepKind::kCompute && step.owed_after != Owed::kNothing;
  }
  return n;
}

inline int64_t ReduceScatters(const CommStats& s) {
  auto it = s.ops.find(CommOp::kReduceScatter);
  return it == s.ops.end() ? 0 : it->second.calls;
}

}  // namespace seam::testing

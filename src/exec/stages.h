// The compute of each stage kind, on the share of the stage a rank holds.
//
// The sharded runs and the reference use these same kernels; the reference
// is simply every stage held whole (Shard{0, 1}), fed one token at a time.
// A row-parallel output comes back as the fp32 tree sum of the rank's
// canonical K-blocks (the whole sum when the rank holds all of them); the
// caller owes the rest of the tree to the group, or rounds a whole sum.
#pragma once

#include <span>
#include <vector>

#include "seam/exec.h"
#include "seam/kernels.h"
#include "seam/model.h"
#include "seam/weights.h"

namespace seam::exec {

using Numerics = RunNumerics;

// This rank's place in the group a stage is split over.
struct Shard {
  int index = 0;
  int count = 1;
};

class AttentionKernel {
 public:
  AttentionKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n);
  int q_width() const { return q_.rows(); }
  int kv_width() const { return k_.rows(); }
  // Projections of rows x at their positions, rounded, rotary applied.
  void Project(const Tensor& x, std::span<const int> positions, Tensor& q, Tensor& k, Tensor& v) const;
  // Row i of q attends over rows [begin[i], end[i]) of k and v; rounded.
  Tensor Attend(const Tensor& q, const Tensor& k, const Tensor& v, std::span<const int> begin,
                std::span<const int> end) const;
  // The output projection: the tree sum of this rank's K-blocks.
  Tensor Output(const Tensor& o) const;
  // All three for rows that hold whole requests (request_start: per row,
  // the row of its request's first token).
  Tensor Run(const Tensor& x, std::span<const int> positions, std::span<const int> request_start) const;

 private:
  const ModelDims& d_;
  Numerics n_;
  Shard shard_;
  int heads_ = 0;      // query heads this rank holds
  int kv_first_ = 0;   // first key/value head it holds
  Tensor q_, k_, v_, o_;
};

// A gated linear recurrence with Mamba2's sharding: per-head projections
// (column-parallel), a per-head scan, a row-parallel output projection.
class MixerKernel {
 public:
  MixerKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n);
  // One request's scan state: heads x head_dim x state, fp32.
  std::vector<float> NewState() const;
  // The gated scan output of rows x, continuing `state` row after row.
  Tensor Scan(const Tensor& x, std::vector<float>& state) const;
  Tensor Output(const Tensor& g) const;
  // Rows holding whole requests: a fresh state at each request's first row.
  Tensor Run(const Tensor& x, std::span<const int> request_start) const;

 private:
  const ModelDims& d_;
  Numerics n_;
  Shard shard_;
  int heads_ = 0;
  Tensor x_, z_, dt_, b_, c_, a_log_, out_;
};

// A dense FFN (SwiGLU or ReLU^2) with this rank's share of its width.
class FfnKernel {
 public:
  FfnKernel(const Weights& w, const std::string& prefix, int width, Activation act, Shard shard, const Numerics& n);
  // The tree sum of this rank's down-projection K-blocks.
  Tensor Partial(const Tensor& x) const;
  // The K-block products themselves, before the tree.
  std::vector<Tensor> Blocks(const Tensor& x) const;

 private:
  Activation act_;
  Numerics n_;
  int blocks_ = 1;
  Tensor gate_, up_, down_;
};

// A MoE FFN: a replicated router, experts, an optional shared expert.
class MoeKernel {
 public:
  // TP-MoE: every expert split over the group; a2a: whole experts, expert
  // e on the member e % count.
  MoeKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, MoeMode mode, const Numerics& n);
  std::vector<Routing> Route(const Tensor& x) const;
  // TP-MoE: per K-block, the routed experts' products weighted and summed in
  // routing order, then the shared expert's; the tree over the rank's blocks.
  Tensor TpPartial(const Tensor& x) const;
  // a2a: one whole expert's output of rows x, rounded.
  Tensor Expert(int expert, const Tensor& x) const;
  // a2a: the shared expert's output, rounded; an empty tensor without one.
  Tensor Shared(const Tensor& x) const;
  // a2a: one row's output from its routed experts' outputs (in routing
  // order) and the shared expert's, rounded.
  void Fold(const Routing& r, std::span<const float* const> outputs, const float* shared, float* out) const;
  int OwnerOf(int expert) const { return expert % shard_.count; }
  int hidden() const { return hidden_; }

 private:
  const ModelDims& d_;
  int top_k_ = 1;
  int hidden_ = 0;
  Numerics n_;
  Shard shard_;
  Tensor router_;
  std::vector<std::unique_ptr<FfnKernel>> experts_;  // null where another rank holds it (a2a)
  std::unique_ptr<FfnKernel> shared_;
};

}  // namespace seam::exec

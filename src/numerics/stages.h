// The compute of each stage kind, on the share of the stage a rank holds
// (the mixers': numerics/mixer.h).
//
// The sharded runs and the reference use these same kernels; the reference
// is simply every stage held whole (Shard{0, 1}), fed one token at a time.
// A row-parallel output comes back as the fp32 tree sum of the rank's
// canonical K-blocks (the whole sum when the rank holds all of them); the
// caller owes the rest of the tree to the group, or rounds a whole sum.
#pragma once

#include <span>
#include <vector>

#include "seam/model.h"
#include "seam/runtime/kernels.h"
#include "seam/runtime/reference.h"
#include "seam/runtime/weights.h"
#include "seam/sharding.h"

namespace seam::exec {

using Numerics = RunNumerics;

// This rank's place in the group a stage is split over.
struct Shard {
  int index = 0;
  int count = 1;
};

// Attention on a rank's share of the heads: grouped-query attention (with
// the families' optional parts: query/key norms, sinks, a sliding window,
// an output gate, biases, partial, Llama 3- or YaRN-scaled RoPE) or
// DeepSeek's multi-head latent attention.
class AttentionKernel {
 public:
  // Under decode context parallelism (`dcp` > 1) the rank attends every
  // query head of its DCP group (the dcp consecutive shards its own is in)
  // over the cache positions it holds; it projects its own heads and
  // applies their output projection as without.
  AttentionKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n, int dcp = 1);
  // The kernel reads the weights in place: temporary ones would be gone.
  AttentionKernel(const StageRef&, const Model&, Weights&&, Shard, const Numerics&, int = 1) = delete;

  // What an input-scattered batch gathers: MLA with a query latent projects
  // its rows to the latents first; any other attention gathers its input.
  Tensor Prepare(const Tensor& x) const;
  int kv_width() const { return kv_heads_ * qk_dim_; }
  int v_width() const { return kv_heads_ * v_dim_; }

  struct Projected {
    Tensor q;        // per head, qk_dim wide; rounded, rotary applied
    Tensor entries;  // what each row leaves in its request's cache, cache_width() wide
    Tensor gate;     // the output gate's input, when the family has one
  };
  Projected Project(const Tensor& prepared, std::span<const int> positions) const;

  // What a token leaves in its request's cache, one row a position: GQA its
  // keys and values for the key/value heads this rank holds; MLA its normed
  // latent and its rotated key part, whole on every rank (each rank makes
  // its heads' keys and values from them, as engines keep one latent cache).
  int cache_width() const { return mla_ ? d_.mla.kv_lora + d_.mla.qk_rope : kv_heads_ * (qk_dim_ + v_dim_); }

  // Rows [first, last) of `p`, one request's tokens at `positions` (row r
  // at positions[r]), attend over that request's cache: `cache` holds its
  // entries by position from 0, up to at least the last row's. A query at
  // position t reads the keys at positions FirstKey(t) .. t, in that order,
  // whichever step or chunk wrote them. Written, rounded, into the same
  // rows of `out` ([rows, heads x v_dim]).
  void AttendCached(const Projected& p, int first, int last, std::span<const int> positions, const float* cache,
                    int cached, Tensor& out) const;
  int out_width() const { return heads_ * v_dim_; }

  // Decode context parallelism. The widths a rank's heads exchange: its
  // queries, and per head a partial (maximum, sum, v_dim weighted values).
  int query_width() const { return heads_ * qk_dim_; }
  int partial_width() const { return heads_ * (v_dim_ + 2); }
  // Rows [first, last) of `q_group` (every query head of the DCP group,
  // peer by peer) against the cache entries this rank holds: positions
  // residue, residue + stride, ... (`held` of them, from `cache`). Each
  // head's partial of the keys FirstKey(t) .. t among them, written into
  // the same rows of `partials` ([rows, dcp x partial_width()]).
  void AttendPartials(const Tensor& q_group, int first, int last, std::span<const int> positions, const float* cache,
                      int held, int stride, int residue, Tensor& partials) const;
  // Each row's partials of this rank's heads from every DCP peer (in peer
  // order: peer r held positions r mod dcp), merged in the canonical order
  // with the sink, written rounded into `out` ([rows, out_width()]).
  void MergePeers(std::span<const Tensor> from_each, Tensor& out) const;
  // The keys (qk_dim a key/value head) and values (v_dim) of cache entries
  // [lo, hi) for the heads this rank holds: GQA's are in the entries, MLA
  // makes each head's [nope | rope] key and its value from the latent.
  void KeyValues(const float* cache, int lo, int hi, Tensor& k, Tensor& v) const;
  // The output projection (after the gate): the tree sum of this rank's K-blocks.
  Tensor Output(const Tensor& o, const Tensor& gate) const;
  // The first position a query at `position` sees.
  int FirstKey(int position) const { return window_ > 0 ? std::max(0, position - window_ + 1) : 0; }

 private:
  void ProjectGqa(const Tensor& x, std::span<const int> positions, Projected& p) const;
  void ProjectMla(const Tensor& prepared, std::span<const int> positions, Projected& p) const;

  float SoftmaxScale() const;  // of q.k, once qk_dim_ is known

  const ModelDims& d_;
  Numerics n_;
  Shard shard_;
  bool mla_ = false;
  int heads_ = 0;      // query heads this rank holds
  int dcp_ = 1;        // the ranks its cache is split over (decode context parallelism)
  int attend_h0_ = 0;  // the first query head it attends: its DCP group's (its own without DCP)
  int attend_heads_ = 0;
  int kv_heads_ = 0;  // key/value heads it holds
  int group_ = 1;     // query heads per key/value head
  int kv_first_ = 0;  // its first key/value head (model-wide)
  int qk_dim_ = 0;
  int v_dim_ = 0;
  int window_ = 0;
  float scale_ = 1;
  RopeParams rope_;
  // Views of this rank's part of the weights, read in place.
  MatrixView q_, k_, v_, o_, gate_;               // GQA (q_ also MLA's direct query projection)
  MatrixView q_bias_, k_bias_, v_bias_, o_bias_;  // GQA biases (o_bias_ empty off block 0)
  MatrixView q_norm_, k_norm_, sinks_;
  MatrixView q_a_, q_a_norm_, q_b_, kv_a_, kv_a_norm_, kv_b_;  // MLA
};

// NAS's linear replacement: one replicated hidden x hidden product.
class LinearKernel {
 public:
  LinearKernel(const StageRef& s, const Weights& w, const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  LinearKernel(const StageRef&, Weights&&, const Numerics&) = delete;
  Tensor Run(const Tensor& x) const;  // complete, rounded

 private:
  Numerics n_;
  MatrixView w_;
};

// What an FFN is: its width, activation and whether its projections have
// biases (GPT-OSS's experts).
struct FfnShape {
  int width = 0;
  Activation act = Activation::kSwiGlu;
  bool bias = false;
  float limit = 7.0f;  // the clamped SwiGLU's
};

// A dense FFN stage: no biases in any family.
inline FfnShape DenseShape(const StageDecl& s, const ModelDims& d) {
  return {FfnWidthOf(s, d), d.activation, false, static_cast<float>(d.swiglu_limit)};
}

// A dense FFN (SwiGLU or ReLU^2) with this rank's share of its width.
class FfnKernel {
 public:
  FfnKernel(const Weights& w, const std::string& prefix, const FfnShape& shape, Shard shard, const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  FfnKernel(Weights&&, const std::string&, const FfnShape&, Shard, const Numerics&) = delete;
  // The tree sum of this rank's down-projection K-blocks.
  Tensor Partial(const Tensor& x) const;
  // The K-block products themselves, before the tree.
  std::vector<Tensor> Blocks(const Tensor& x) const;

 private:
  FfnShape shape_;
  Numerics n_;
  int blocks_ = 1;
  MatrixView gate_, up_, down_;                 // this rank's columns of the width, in place
  MatrixView gate_bias_, up_bias_, down_bias_;  // down_bias_ only where canonical block 0 is
};

// A MoE FFN: a replicated router, experts, an optional shared expert.
class MoeKernel {
 public:
  // TP-MoE: every expert split over the group; a2a: whole experts, expert
  // e on the member e % count.
  MoeKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, MoeMode mode, const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  MoeKernel(const StageRef&, const Model&, Weights&&, Shard, MoeMode, const Numerics&) = delete;
  std::vector<Routing> Route(const Tensor& x) const;
  // TP-MoE: per K-block, the routed experts' products weighted and summed in
  // routing order, then the shared expert's (times its gate); the tree over
  // the rank's blocks.
  Tensor TpPartial(const Tensor& x) const;
  // a2a: one whole expert's output of rows x, rounded.
  Tensor Expert(int expert, const Tensor& x) const;
  // a2a: the shared expert's output, rounded, then (with a shared-expert
  // gate) times each row's gate and rounded again; an empty tensor without one.
  Tensor Shared(const Tensor& x) const;
  // a2a: one row's output from its routed experts' outputs (in routing
  // order) and the shared expert's, rounded.
  void Fold(const Routing& r, std::span<const float* const> outputs, const float* shared, float* out) const;
  int OwnerOf(int expert) const { return ExpertOwner(expert, shard_.count); }
  // ZAYA1's skip expert: routed there, a row passes its input through.
  bool IsSkip(int expert) const { return expert == d_.experts; }
  int hidden() const { return hidden_; }

 private:
  const ModelDims& d_;
  int top_k_ = 1;
  int hidden_ = 0;
  Numerics n_;
  Shard shard_;
  MatrixView router_;
  MatrixView router_bias_;                           // empty without one
  MatrixView correction_;                            // selection-only bias per expert (empty without one)
  std::vector<std::unique_ptr<FfnKernel>> experts_;  // null where another rank holds it (a2a)
  std::unique_ptr<FfnKernel> shared_;
  MatrixView shared_gate_;  // [1, hidden]: sigmoid(x . gate) scales the shared expert (empty without one)
  // Per row of x: its shared expert's gate, or 1 without one.
  std::vector<float> SharedGates(const Tensor& x) const;
};

}  // namespace seam::exec

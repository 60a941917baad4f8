// Gated DeltaNet as Hugging Face's Qwen3NextGatedDeltaNet computes it
// (torch_recurrent_gated_delta_rule, which its chunked form equals), on a
// rank's share of the value heads and the key heads they use.
//
// Per row: in_proj_qkvz and in_proj_ba give, per key head, [q | k | v | z]
// and [b | a] for the value heads that share it (fix_query_key_value_ordering
// un-interleaves them); a causal depthwise conv without bias, then SiLU, runs
// over [q | k | v]; per value head h with key head h / (value heads per key
// head),
//   q, k  = l2norm(q), l2norm(k)   (x / sqrt(sum x^2 + 1e-6)); q /= sqrt(key dim)
//   beta  = sigmoid(b),  g = -exp(A_log) * softplus(a + dt_bias)
//   S     = S * exp(g);  S += k (x) ((v - S^T k) * beta);  o = S^T q
// with S [key dim, value dim]; then Qwen3NextRMSNormGated: RMSNorm of each
// head's o times its weight, times silu(z); out_proj.
//
// Rounding to the storage dtype: the projections' outputs, the conv's
// output, o, and the norm (its normalised value, the weighted one, and the
// gated one). The l2norms, beta, g and the state stay fp32.
#pragma once

#include "numerics/mixer.h"

namespace seam::exec {

class GatedDeltaNetKernel : public MixerKernel {
 public:
  // The rank holds whole key heads with their value heads (stack/sharding.cc).
  GatedDeltaNetKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  GatedDeltaNetKernel(const StageRef&, const Model&, Weights&&, Shard, const Numerics&) = delete;

  // The projections' outputs, rounded, un-interleaved, for this rank's heads.
  struct Projected {
    Tensor qkv;   // [rows, 2 * key_heads * key_dim + heads * value_dim]: q, then k, then v
    Tensor z;     // [rows, heads * value_dim]
    Tensor b, a;  // [rows, heads]
  };
  Projected Project(const Tensor& x) const;
  // The delta rule over rows of the conv's output, continuing `state`: o, rounded.
  Tensor Recur(const Tensor& qkv, const Tensor& b, const Tensor& a, State& state) const;
  // RMSNorm of each head's o times the weight, times silu(z); rounded.
  Tensor GatedNorm(const Tensor& o, const Tensor& z) const;

  Tensor Scan(const Tensor& x, State& state) const override;

 private:
  const ModelDims& d_;
  int heads_ = 0;                      // value heads, this rank's
  int key_heads_ = 0;                  // this rank's
  int per_key_ = 1;                    // value heads per key head
  std::vector<MatrixView> qkvz_, ba_;  // this rank's rows, in Projected's order, in place
  MatrixView dt_bias_, norm_;
  Tensor a_;  // -exp(A_log) of this rank's heads
};

}  // namespace seam::exec

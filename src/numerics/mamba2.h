// Mamba2 as Hugging Face's NemotronHMamba2Mixer computes it (torch_forward,
// the recurrent form of its chunked scan), on a rank's share of the heads.
//
// Per row: in_proj gives [z | x | B | C | dt] (z and x per head, B and C per
// group of heads, dt per head); a causal depthwise conv with bias and SiLU
// runs over [x | B | C]; per head h of group g,
//   dt    = clamp(softplus(dt + dt_bias), time_step_limit)  (as HF's CUDA path
//           does; its torch_forward clamps at time_step_min from below instead)
//   state = state * exp(dt * A) + (dt * B_g) (x) x_h     A = -exp(A_log)
//   y_h   = state . C_g + D_h * x_h
// then MambaRMSNormGated (Zamba2RMSNormGated): y * silu(z), RMSNorm over
// each group's intermediate / n_groups channels, times its weight; out_proj.
//
// Rounding to the storage dtype: in_proj's outputs, the conv's output, y,
// and the norm (its normalised value, then the weighted one). dt, the state
// and the gate's product stay fp32.
#pragma once

#include "numerics/mixer.h"

namespace seam::exec {

class Mamba2Kernel : public MixerKernel {
 public:
  // The rank holds whole groups of heads (stack/sharding.cc's rule).
  Mamba2Kernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  Mamba2Kernel(const StageRef&, const Model&, Weights&&, Shard, const Numerics&) = delete;

  // in_proj's outputs, rounded, for this rank's heads and groups.
  struct Projected {
    Tensor z;    // [rows, heads * head_dim]
    Tensor xbc;  // [rows, heads * head_dim + 2 * groups * state]: x, then B, then C
    Tensor dt;   // [rows, heads], before the bias
  };
  Projected Project(const Tensor& x) const;
  // The time step of head h (this rank's) from its projection.
  float TimeStep(float dt, int h) const;
  // The recurrence over rows of the conv's output, continuing `state`: y, rounded.
  Tensor Ssm(const Tensor& xbc, const Tensor& dt, State& state) const;
  // y * silu(z), normed per group, rounded.
  Tensor GatedNorm(const Tensor& y, const Tensor& z) const;

  Tensor Scan(const Tensor& x, State& state) const override;

 private:
  const ModelDims& d_;
  int heads_ = 0;                    // this rank's
  int groups_ = 0;                   // this rank's
  int per_group_ = 1;                // heads per group
  std::vector<MatrixView> in_proj_;  // this rank's rows, in Projected's order, in place
  MatrixView dt_bias_, d_skip_, norm_;
  Tensor a_;  // -exp(A_log) of this rank's heads
};

}  // namespace seam::exec

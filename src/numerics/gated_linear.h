// The gated linear recurrence Qwen3-Next's mixers run until they compute
// Gated DeltaNet: S = a*S + x (x) B, y = (S.C) * silu(z), per head.
#pragma once

#include "numerics/mixer.h"

namespace seam::exec {

class GatedLinearKernel : public MixerKernel {
 public:
  GatedLinearKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n);
  Tensor Scan(const Tensor& x, State& state) const override;

 private:
  const ModelDims& d_;
  int heads_ = 0;
  Tensor x_, z_, dt_, b_, c_, a_log_;
};

}  // namespace seam::exec

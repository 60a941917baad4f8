#include "numerics/gated_linear.h"

#include <cmath>

#include "seam/gemm.h"

namespace seam::exec {
namespace {

Tensor Linear(const Tensor& x, const Tensor& w, Dtype d) {
  Tensor y = Gemm(x, w);
  RoundToStorage(y, d);
  return y;
}

MixerParts Parts(const StageRef& s, const ModelDims& d, const Weights& w, Shard shard, const Numerics& n) {
  const int heads = d.mixer_heads / shard.count, h0 = shard.index * heads, hp = d.mixer_head_dim;
  return {.out_proj = w.at(StagePrefix(s) + ".out_proj.weight").ColRange(h0 * hp, (h0 + heads) * hp),
          .conv_weight = Tensor(0, 1),
          .recurrent_size = static_cast<size_t>(heads * hp * d.mixer_state),
          .shard = shard,
          .numerics = n};
}

// One row of the scan for every head: S = a*S + x (x) B, y = S.C, g = y*silu(z).
void Step(int heads, int hp, int ns, const float* x, const float* z, const float* dt, const float* b, const float* c,
          const float* a_log, float* state, float* g) {
  for (int h = 0; h < heads; ++h) {
    const float a = std::exp(-Softplus(dt[h]) * std::exp(a_log[h]));
    for (int p = 0; p < hp; ++p) {
      float* s = state + (static_cast<size_t>(h) * hp + p) * ns;
      const float xv = x[h * hp + p];
      for (int k = 0; k < ns; ++k) s[k] = a * s[k] + xv * b[h * ns + k];
      g[h * hp + p] = Dot(s, c + h * ns, ns) * Silu(z[h * hp + p]);
    }
  }
}

}  // namespace

GatedLinearKernel::GatedLinearKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard,
                                     const Numerics& n)
    : MixerKernel(Parts(s, *m.dims, w, shard, n)), d_(*m.dims) {
  const std::string p = StagePrefix(s);
  SEAM_CHECK(d_.mixer_heads % shard.count == 0, "mixer heads do not split over the group");
  heads_ = d_.mixer_heads / shard.count;
  const int h0 = shard.index * heads_;
  const int h1 = h0 + heads_;
  const int hp = d_.mixer_head_dim;
  const int ns = d_.mixer_state;
  x_ = w.at(p + ".x_proj.weight").RowRange(h0 * hp, h1 * hp);
  z_ = w.at(p + ".z_proj.weight").RowRange(h0 * hp, h1 * hp);
  dt_ = w.at(p + ".dt_proj.weight").RowRange(h0, h1);
  b_ = w.at(p + ".B_proj.weight").RowRange(h0 * ns, h1 * ns);
  c_ = w.at(p + ".C_proj.weight").RowRange(h0 * ns, h1 * ns);
  a_log_ = w.at(p + ".A_log").ColRange(h0, h1);
}

Tensor GatedLinearKernel::Scan(const Tensor& x, State& state) const {
  const Dtype d = numerics().dtype;
  const Tensor xp = Linear(x, x_, d), zp = Linear(x, z_, d), dt = Linear(x, dt_, d);
  const Tensor bp = Linear(x, b_, d), cp = Linear(x, c_, d);
  Tensor g(x.rows(), xp.cols());
  for (int r = 0; r < x.rows(); ++r) {
    Step(heads_, d_.mixer_head_dim, d_.mixer_state, xp.row(r), zp.row(r), dt.row(r), bp.row(r), cp.row(r),
         a_log_.row(0), state.recurrent.data(), g.row(r));
  }
  RoundToStorage(g, d);
  return g;
}

}  // namespace seam::exec

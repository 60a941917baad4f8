#include "numerics/mamba2.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "seam/runtime/gemm.h"

namespace seam::exec {
namespace {

// This rank's heads [h0, h1) and the groups [g0, g1) they make up,
// model-wide, and where their channels sit in the conv's input
// [x (heads * head_dim) | B (groups * state) | C (groups * state)].
struct Layout {
  int h0 = 0, h1 = 0, g0 = 0, g1 = 0;
  int head_dim = 0, state = 0, width = 0, groups = 0;

  Layout(const ModelDims& d, Shard shard) : head_dim(d.mixer_head_dim), state(d.mixer_state), groups(d.mixer_groups) {
    SEAM_CHECK(d.mixer_groups > 0 && d.mixer_heads % d.mixer_groups == 0 && d.mixer_groups % shard.count == 0,
               "the rank would not hold whole groups of mixer heads");
    const int heads = d.mixer_heads / shard.count, per_group = d.mixer_heads / d.mixer_groups;
    h0 = shard.index * heads;
    h1 = h0 + heads;
    g0 = h0 / per_group;
    g1 = h1 / per_group;
    width = d.mixer_heads * head_dim;
  }
  int conv_dim() const { return width + 2 * groups * state; }
  std::vector<Range> ConvChannels(int offset = 0) const {
    const int b = width, c = width + groups * state;
    return {{offset + h0 * head_dim, offset + h1 * head_dim},
            {offset + b + g0 * state, offset + b + g1 * state},
            {offset + c + g0 * state, offset + c + g1 * state}};
  }
  // in_proj's rows: [z | x B C | dt], each part this rank's.
  std::vector<Range> InProjRows() const {
    std::vector<Range> rows = {{h0 * head_dim, h1 * head_dim}};
    for (const Range& r : ConvChannels(width)) rows.push_back(r);
    rows.push_back({width + conv_dim() + h0, width + conv_dim() + h1});
    return rows;
  }
  Range HeadChannels() const { return {h0 * head_dim, h1 * head_dim}; }
};

MixerParts Parts(const StageRef& s, const ModelDims& d, const Weights& w, Shard shard, const Numerics& n) {
  const std::string p = StagePrefix(s);
  const Layout l(d, shard);
  const auto [first, last] = l.HeadChannels();
  return {.out_proj = w.at(p + ".out_proj.weight").Cols(first, last),
          .conv_weight = PickRows(w.at(p + ".conv1d.weight"), l.ConvChannels()),
          .conv_bias = PickCols(w.at(p + ".conv1d.bias"), l.ConvChannels()),
          .recurrent_size = static_cast<size_t>(last - first) * static_cast<size_t>(d.mixer_state),
          .shard = shard,
          .numerics = n};
}

}  // namespace

Mamba2Kernel::Mamba2Kernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n)
    : MixerKernel(Parts(s, *m.dims, w, shard, n)), d_(*m.dims) {
  const std::string p = StagePrefix(s);
  const Layout l(d_, shard);
  heads_ = l.h1 - l.h0;
  groups_ = l.g1 - l.g0;
  per_group_ = d_.mixer_heads / d_.mixer_groups;
  in_proj_ = RowParts(w.at(p + ".in_proj.weight"), l.InProjRows());
  dt_bias_ = w.at(p + ".dt_bias").Cols(l.h0, l.h1);
  a_ = w.at(p + ".A_log").Cols(l.h0, l.h1).Copy();
  for (size_t i = 0; i < a_.size(); ++i) a_.data()[i] = -std::exp(a_.data()[i]);
  d_skip_ = w.at(p + ".D").Cols(l.h0, l.h1);
  norm_ = w.at(p + ".norm.weight").Cols(l.HeadChannels().first, l.HeadChannels().second);
}

Mamba2Kernel::Projected Mamba2Kernel::Project(const Tensor& x) const {
  Tensor y = GemmStacked(x, in_proj_);
  RoundToStorage(y, numerics().dtype);
  const int z = heads_ * d_.mixer_head_dim;
  const int xbc = z + 2 * groups_ * d_.mixer_state;
  return {y.ColRange(0, z), y.ColRange(z, z + xbc), y.ColRange(z + xbc, y.cols())};
}

float Mamba2Kernel::TimeStep(float dt, int h) const {
  const float lo = static_cast<float>(d_.mixer_dt_min), hi = static_cast<float>(d_.mixer_dt_max);
  return std::min(std::max(Softplus(dt + dt_bias_.at(0, h)), lo), hi);
}

Tensor Mamba2Kernel::Ssm(const Tensor& xbc, const Tensor& dt, State& state) const {
  const int hp = d_.mixer_head_dim, ns = d_.mixer_state;
  const int width = heads_ * hp;
  Tensor y(xbc.rows(), width);
  for (int r = 0; r < xbc.rows(); ++r) {
    const float* x = xbc.row(r);
    for (int h = 0; h < heads_; ++h) {
      const int g = h / per_group_;
      const float* b = x + width + g * ns;
      const float* c = x + width + groups_ * ns + g * ns;
      const float step = TimeStep(dt.at(r, h), h);
      const float decay = std::exp(step * a_.at(0, h));
      for (int p = 0; p < hp; ++p) {
        const float xv = x[h * hp + p];
        float* s = state.recurrent.data() + static_cast<size_t>(h * hp + p) * static_cast<size_t>(ns);
        for (int k = 0; k < ns; ++k) s[k] = s[k] * decay + (step * b[k]) * xv;
        y.at(r, h * hp + p) = Dot(s, c, ns) + d_skip_.at(0, h) * xv;
      }
    }
  }
  RoundToStorage(y, numerics().dtype);
  return y;
}

Tensor Mamba2Kernel::GatedNorm(const Tensor& y, const Tensor& z) const {
  Tensor gated(y.rows(), y.cols());
  for (size_t i = 0; i < y.size(); ++i) gated.data()[i] = y.data()[i] * Silu(z.data()[i]);
  const int width = per_group_ * d_.mixer_head_dim;  // intermediate / n_groups
  const float eps = static_cast<float>(d_.rms_eps);
  Tensor out(y.rows(), y.cols());
  for (int g = 0; g < groups_; ++g) {
    const Tensor part = RmsNorm(gated.ColRange(g * width, (g + 1) * width),
                                norm_.span().subspan(static_cast<size_t>(g * width), static_cast<size_t>(width)), eps,
                                numerics().dtype);
    for (int r = 0; r < y.rows(); ++r) std::copy(part.row(r), part.row(r) + width, out.row(r) + g * width);
  }
  return out;
}

Tensor Mamba2Kernel::Scan(const Tensor& x, State& state) const {
  const Projected p = Project(x);
  return GatedNorm(Ssm(Conv(p.xbc, state), p.dt, state), p.z);
}

}  // namespace seam::exec

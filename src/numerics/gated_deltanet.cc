#include "numerics/gated_deltanet.h"

#include <cmath>
#include <string>

#include "seam/runtime/gemm.h"

namespace seam::exec {
namespace {

// This rank's value heads [h0, h1) and the key heads [k0, k1) they use,
// model-wide, and where their rows sit in each projection.
struct Layout {
  int h0 = 0, h1 = 0, k0 = 0, k1 = 0;
  int per_key = 1, key_dim = 0, value_dim = 0, key_width = 0;

  Layout(const ModelDims& d, Shard shard)
      : key_dim(d.mixer_state), value_dim(d.mixer_head_dim), key_width(d.mixer_groups * d.mixer_state) {
    SEAM_CHECK(d.mixer_groups > 0 && d.mixer_heads % d.mixer_groups == 0 && d.mixer_groups % shard.count == 0,
               "the rank would not hold whole key heads");
    const int heads = d.mixer_heads / shard.count;
    per_key = d.mixer_heads / d.mixer_groups;
    h0 = shard.index * heads;
    h1 = h0 + heads;
    k0 = h0 / per_key;
    k1 = h1 / per_key;
  }
  // in_proj_qkvz holds, per key head, [q | k | v | z] of its value heads;
  // the rank stacks its q, then k, then v, then z.
  std::vector<Range> QkvzRows() const {
    const int group_v = per_key * value_dim, block = 2 * key_dim + 2 * group_v;
    std::vector<Range> rows;
    for (const int part : {0, 1}) {
      for (int kh = k0; kh < k1; ++kh) rows.push_back({kh * block + part * key_dim, kh * block + (part + 1) * key_dim});
    }
    for (const int part : {0, 1}) {
      for (int kh = k0; kh < k1; ++kh) {
        const int first = kh * block + 2 * key_dim + part * group_v;
        rows.push_back({first, first + group_v});
      }
    }
    return rows;
  }
  // in_proj_ba holds, per key head, [b | a] of its value heads.
  std::vector<Range> BaRows() const {
    std::vector<Range> rows;
    for (const int part : {0, 1}) {
      for (int kh = k0; kh < k1; ++kh) rows.push_back({(2 * kh + part) * per_key, (2 * kh + part + 1) * per_key});
    }
    return rows;
  }
  // The conv's channels: [q (key heads) | k (key heads) | v (value heads)].
  std::vector<Range> ConvChannels() const {
    return {{k0 * key_dim, k1 * key_dim},
            {key_width + k0 * key_dim, key_width + k1 * key_dim},
            {2 * key_width + h0 * value_dim, 2 * key_width + h1 * value_dim}};
  }
  Range ValueChannels() const { return {h0 * value_dim, h1 * value_dim}; }
};

MixerParts Parts(const StageRef& s, const ModelDims& d, const Weights& w, Shard shard, const Numerics& n) {
  const std::string p = StagePrefix(s);
  const Layout l(d, shard);
  const auto [first, last] = l.ValueChannels();
  return {.out_proj = w.at(p + ".out_proj.weight").Cols(first, last),
          .conv_weight = PickRows(w.at(p + ".conv1d.weight"), l.ConvChannels()),
          .recurrent_size = static_cast<size_t>(last - first) * static_cast<size_t>(d.mixer_state),
          .shard = shard,
          .numerics = n};
}

// x / sqrt(sum x^2 + 1e-6) * scale, in place (FLA's l2norm, which HF matches).
void L2Norm(float* x, int n, float scale) {
  const float inv = 1.0f / std::sqrt(Dot(x, x, n) + 1e-6f);
  for (int i = 0; i < n; ++i) x[i] = x[i] * inv * scale;
}

}  // namespace

GatedDeltaNetKernel::GatedDeltaNetKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard,
                                         const Numerics& n)
    : MixerKernel(Parts(s, *m.dims, w, shard, n)), d_(*m.dims) {
  const std::string p = StagePrefix(s);
  const Layout l(d_, shard);
  heads_ = l.h1 - l.h0;
  key_heads_ = l.k1 - l.k0;
  per_key_ = l.per_key;
  qkvz_ = RowParts(w.at(p + ".in_proj_qkvz.weight"), l.QkvzRows());
  ba_ = RowParts(w.at(p + ".in_proj_ba.weight"), l.BaRows());
  dt_bias_ = w.at(p + ".dt_bias").Cols(l.h0, l.h1);
  a_ = w.at(p + ".A_log").Cols(l.h0, l.h1).Copy();
  for (size_t i = 0; i < a_.size(); ++i) a_.data()[i] = -std::exp(a_.data()[i]);
  norm_ = w.at(p + ".norm.weight");
}

GatedDeltaNetKernel::Projected GatedDeltaNetKernel::Project(const Tensor& x) const {
  Tensor qkvz = GemmStacked(x, qkvz_), ba = GemmStacked(x, ba_);
  RoundToStorage(qkvz, numerics().dtype);
  RoundToStorage(ba, numerics().dtype);
  const int qkv = 2 * key_heads_ * d_.mixer_state + heads_ * d_.mixer_head_dim;
  return {qkvz.ColRange(0, qkv), qkvz.ColRange(qkv, qkvz.cols()), ba.ColRange(0, heads_),
          ba.ColRange(heads_, 2 * heads_)};
}

Tensor GatedDeltaNetKernel::Recur(const Tensor& qkv, const Tensor& b, const Tensor& a, State& state) const {
  const int dk = d_.mixer_state, dv = d_.mixer_head_dim;
  const int keys = key_heads_ * dk;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
  Tensor o(qkv.rows(), heads_ * dv);
  std::vector<float> qk(static_cast<size_t>(2 * keys));  // this row's normed q, then k
  for (int r = 0; r < qkv.rows(); ++r) {
    std::copy(qkv.row(r), qkv.row(r) + 2 * keys, qk.begin());
    for (int kh = 0; kh < key_heads_; ++kh) {
      L2Norm(qk.data() + kh * dk, dk, scale);
      L2Norm(qk.data() + keys + kh * dk, dk, 1.0f);
    }
    const float* v = qkv.row(r) + 2 * keys;
    for (int h = 0; h < heads_; ++h) {
      const float* q = qk.data() + (h / per_key_) * dk;
      const float* k = q + keys;
      const float beta = Sigmoid(b.at(r, h));
      const float decay = std::exp(a_.at(0, h) * Softplus(a.at(r, h) + dt_bias_.at(0, h)));
      // Row j of a head's state is column j of HF's [key dim, value dim] S.
      float* s = state.recurrent.data() + static_cast<size_t>(h) * static_cast<size_t>(dv * dk);
      for (int j = 0; j < dv; ++j) {
        float* col = s + static_cast<size_t>(j) * static_cast<size_t>(dk);
        for (int i = 0; i < dk; ++i) col[i] = col[i] * decay;
        const float delta = (v[h * dv + j] - Dot(col, k, dk)) * beta;
        for (int i = 0; i < dk; ++i) col[i] = col[i] + k[i] * delta;
        o.at(r, h * dv + j) = Dot(col, q, dk);
      }
    }
  }
  RoundToStorage(o, numerics().dtype);
  return o;
}

Tensor GatedDeltaNetKernel::GatedNorm(const Tensor& o, const Tensor& z) const {
  const int dv = d_.mixer_head_dim;
  const Tensor per_head(o.rows() * heads_, dv, std::vector<float>(o.data(), o.data() + o.size()));
  const Tensor normed = RmsNorm(per_head, norm_.span(), static_cast<float>(d_.rms_eps), numerics().dtype);
  Tensor out(o.rows(), o.cols());
  for (size_t i = 0; i < out.size(); ++i) out.data()[i] = normed.data()[i] * Silu(z.data()[i]);
  RoundToStorage(out, numerics().dtype);
  return out;
}

Tensor GatedDeltaNetKernel::Scan(const Tensor& x, State& state) const {
  const Projected p = Project(x);
  return GatedNorm(Recur(Conv(p.qkv, state), p.b, p.a, state), p.z);
}

}  // namespace seam::exec

// Gated DeltaNet against Hugging Face's Qwen3NextGatedDeltaNet
// (torch_recurrent_gated_delta_rule), worked out here in double from its
// formulas: the un-interleaving of the projections, the l2norms, two steps
// of the delta rule, the head grouping, the gated norm, and all of them
// together. Tolerances: mixer_testing.h.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "mixer_testing.h"
#include "numerics/gated_deltanet.h"

namespace seam::exec {
namespace {

using testing::ExpectRel;
using testing::Filled;
using testing::kScanAbs;
using testing::MixerModel;
using testing::SigmoidD;
using testing::SiluD;
using testing::SoftplusD;

// Four value heads of width 2 sharing two key heads of width 3 (value heads
// 0 and 1 use key head 0, heads 2 and 3 key head 1), a conv of width 2.
// in_proj_qkvz holds per key head [q (3) | k (3) | v (2 x 2) | z (2 x 2)],
// in_proj_ba per key head [b (2) | a (2)]; the conv runs over
// [q (2 x 3) | k (2 x 3) | v (4 x 2)].
constexpr int kHeads = 4, kValueDim = 2, kKeyHeads = 2, kKeyDim = 3, kWidth = 2, kHidden = 4;
constexpr int kPerKey = kHeads / kKeyHeads, kKeys = kKeyHeads * kKeyDim, kValues = kHeads * kValueDim;
constexpr int kBlock = 2 * kKeyDim + 2 * kPerKey * kValueDim;  // one key head's rows of in_proj_qkvz
constexpr int kConvDim = 2 * kKeys + kValues;

ModelDims Dims() {
  return {.vocab = 8,
          .heads = 1,
          .kv_heads = 1,
          .head_dim = 4,
          .rms_eps = 0.01,
          .mixer_heads = kHeads,
          .mixer_head_dim = kValueDim,
          .mixer_state = kKeyDim,
          .mixer = MixerKind::kGatedDeltaNet,
          .mixer_groups = kKeyHeads,
          .mixer_conv = kWidth};
}

struct Fixture : MixerModel {
  std::map<std::string, Tensor> t;

  explicit Fixture(int hidden = kHidden) : MixerModel(Dims(), hidden) {
    t[prefix + ".in_proj_qkvz.weight"] = Filled(kKeyHeads * kBlock, hidden, 1, 0.5);
    t[prefix + ".in_proj_ba.weight"] = Filled(2 * kHeads, hidden, 2, 0.5);
    t[prefix + ".conv1d.weight"] = Filled(kConvDim, kWidth, 3);
    t[prefix + ".dt_bias"] = Filled(1, kHeads, 4, 0.5);
    t[prefix + ".A_log"] = Filled(1, kHeads, 5, 0.5);
    t[prefix + ".norm.weight"] = Filled(1, kValueDim, 6);
    t[prefix + ".out_proj.weight"] = Filled(hidden, kValues, 7, 0.5);
  }
  const Tensor& at(const std::string& name) const { return t.at(prefix + "." + name); }
  Tensor& at(const std::string& name) { return t.at(prefix + "." + name); }
  // A kernel reads its weights in place: each is built on a snapshot of `t`
  // (tests change it between kernels) that lives as long as the fixture.
  GatedDeltaNetKernel Kernel(Shard shard = {}) const {
    return GatedDeltaNetKernel(stage, model, held.emplace_back(t), shard, RunNumerics{});
  }
  mutable std::deque<Weights> held;
};

// ---- the projections ----

TEST(GatedDeltaNet, ProjectionsAreUninterleavedPerKeyHeadAsFixQueryKeyValueOrderingDoes) {
  // Identity projections: a row's projection is its input, so each output
  // column names the HF row it came from.
  Fixture f(kKeyHeads * kBlock);
  Tensor eye(kKeyHeads * kBlock, kKeyHeads * kBlock), ba(2 * kHeads, kKeyHeads * kBlock);
  for (int i = 0; i < eye.rows(); ++i) eye.at(i, i) = 1.0f;
  for (int i = 0; i < ba.rows(); ++i) ba.at(i, i) = 1.0f;
  f.at("in_proj_qkvz.weight") = eye;
  f.at("in_proj_ba.weight") = ba;
  Tensor x(1, kKeyHeads * kBlock);
  for (int i = 0; i < x.cols(); ++i) x.at(0, i) = static_cast<float>(i);
  for (const Shard shard : {Shard{0, 1}, Shard{0, 2}, Shard{1, 2}}) {
    const GatedDeltaNetKernel::Projected p = f.Kernel(shard).Project(x);
    const int k0 = shard.index * kKeyHeads / shard.count, keys = kKeyHeads / shard.count;
    std::vector<float> q, k, v, z, b, a;
    for (int kh = k0; kh < k0 + keys; ++kh) {
      for (int i = 0; i < kKeyDim; ++i) q.push_back(static_cast<float>(kh * kBlock + i));
      for (int i = 0; i < kKeyDim; ++i) k.push_back(static_cast<float>(kh * kBlock + kKeyDim + i));
      for (int i = 0; i < kPerKey * kValueDim; ++i) {
        v.push_back(static_cast<float>(kh * kBlock + 2 * kKeyDim + i));
        z.push_back(static_cast<float>(kh * kBlock + 2 * kKeyDim + kPerKey * kValueDim + i));
      }
      for (int i = 0; i < kPerKey; ++i) {
        b.push_back(static_cast<float>(2 * kh * kPerKey + i));
        a.push_back(static_cast<float>((2 * kh + 1) * kPerKey + i));
      }
    }
    std::vector<float> qkv = q;
    qkv.insert(qkv.end(), k.begin(), k.end());
    qkv.insert(qkv.end(), v.begin(), v.end());
    const std::string where = "shard " + std::to_string(shard.index) + " of " + std::to_string(shard.count);
    EXPECT_EQ(std::vector<float>(p.qkv.data(), p.qkv.data() + p.qkv.size()), qkv) << where;
    EXPECT_EQ(std::vector<float>(p.z.data(), p.z.data() + p.z.size()), z) << where;
    EXPECT_EQ(std::vector<float>(p.b.data(), p.b.data() + p.b.size()), b) << where;
    EXPECT_EQ(std::vector<float>(p.a.data(), p.a.data() + p.a.size()), a) << where;
  }
}

// ---- the delta rule ----

std::vector<double> L2NormD(const float* x, int n, double scale) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  std::vector<double> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = x[i] / std::sqrt(sum + 1e-6) * scale;
  return out;
}

double DotD(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// torch_recurrent_gated_delta_rule in double over rows of conv output:
// value head h reads key head h / 2.
std::vector<std::vector<double>> DeltaRuleByHand(const Fixture& f, const Tensor& qkv, const Tensor& b,
                                                 const Tensor& a) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(kKeyDim));
  std::vector<std::vector<double>> s(kHeads, std::vector<double>(kKeyDim * kValueDim, 0.0));  // [i][j]
  std::vector<std::vector<double>> o(static_cast<size_t>(qkv.rows()), std::vector<double>(kValues));
  for (int t = 0; t < qkv.rows(); ++t) {
    for (int h = 0; h < kHeads; ++h) {
      const int kh = h / kPerKey;
      const std::vector<double> q = L2NormD(qkv.row(t) + kh * kKeyDim, kKeyDim, scale);
      const std::vector<double> k = L2NormD(qkv.row(t) + kKeys + kh * kKeyDim, kKeyDim, 1.0);
      const double beta = SigmoidD(b.at(t, h));
      const double g = -std::exp(static_cast<double>(f.at("A_log").at(0, h))) *
                       SoftplusD(static_cast<double>(a.at(t, h)) + f.at("dt_bias").at(0, h));
      std::vector<double>& st = s[static_cast<size_t>(h)];
      for (double& e : st) e *= std::exp(g);
      for (int j = 0; j < kValueDim; ++j) {
        double kv = 0;
        for (int i = 0; i < kKeyDim; ++i) kv += st[static_cast<size_t>(i * kValueDim + j)] * k[static_cast<size_t>(i)];
        const double delta = (qkv.at(t, 2 * kKeys + h * kValueDim + j) - kv) * beta;
        double out = 0;
        for (int i = 0; i < kKeyDim; ++i) {
          double& e = st[static_cast<size_t>(i * kValueDim + j)];
          e += k[static_cast<size_t>(i)] * delta;
          out += e * q[static_cast<size_t>(i)];
        }
        o[static_cast<size_t>(t)][static_cast<size_t>(h * kValueDim + j)] = out;
      }
    }
  }
  return o;
}

TEST(GatedDeltaNet, TheFirstStepReadsBetaTimesVThroughTheL2NormedScaledQueryAndKey) {
  // From a zero state: o = (q^ . k^) / sqrt(3) * beta * v, q^ and k^ of unit length.
  const Fixture f;
  const GatedDeltaNetKernel k = f.Kernel();
  Tensor qkv(1, kConvDim);
  const float q[] = {3, 4, 0}, key[] = {1, 2, 2};  // lengths 5 and 3
  for (int i = 0; i < kKeyDim; ++i) {
    qkv.at(0, i) = q[i];
    qkv.at(0, kKeys + i) = key[i];
  }
  qkv.at(0, 2 * kKeys) = 0.5f;
  qkv.at(0, 2 * kKeys + 1) = -1.5f;
  const Tensor b = testing::Row({0.75f, 0, 0, 0}), a = testing::Row({0.25f, 0, 0, 0});
  MixerKernel::State s = k.NewState();
  const Tensor o = k.Recur(qkv, b, a, s);
  const double qk = (3.0 + 8.0) / (std::sqrt(25.0 + 1e-6) * std::sqrt(9.0 + 1e-6));
  ExpectRel(o.at(0, 0), qk / std::sqrt(3.0) * SigmoidD(0.75) * 0.5, "head 0, value 0");
  ExpectRel(o.at(0, 1), qk / std::sqrt(3.0) * SigmoidD(0.75) * -1.5, "head 0, value 1");
}

TEST(GatedDeltaNet, TwoStepsDecayTheStateAndWriteOnlyTheDeltaFromWhatTheKeyReads) {
  // One head by hand: S1 = beta1 k1 (x) v1; at step two S decays by e^g2
  // and gains k2 (x) (v2 - S^T k2) beta2, so
  //   o2 = e^g2 beta1 (k1 . q2) v1 + (k2 . q2) beta2 (v2 - e^g2 beta1 (k1 . k2) v1).
  const Fixture f;
  const GatedDeltaNetKernel k = f.Kernel();
  const Tensor qkv = Filled(2, kConvDim, 8), b = Filled(2, kHeads, 9, 2.0), a = Filled(2, kHeads, 10, 2.0);
  MixerKernel::State s = k.NewState();
  const Tensor o = k.Recur(qkv, b, a, s);
  const int h = 3, kh = h / kPerKey;  // value head 3 reads key head 1
  const double scale = 1.0 / std::sqrt(3.0);
  const auto q1 = L2NormD(qkv.row(0) + kh * kKeyDim, kKeyDim, scale);
  const auto q2 = L2NormD(qkv.row(1) + kh * kKeyDim, kKeyDim, scale);
  const auto k1 = L2NormD(qkv.row(0) + kKeys + kh * kKeyDim, kKeyDim, 1.0);
  const auto k2 = L2NormD(qkv.row(1) + kKeys + kh * kKeyDim, kKeyDim, 1.0);
  const double beta1 = SigmoidD(b.at(0, h)), beta2 = SigmoidD(b.at(1, h));
  const double a2 = -std::exp(static_cast<double>(f.at("A_log").at(0, h)));
  const double decay2 = std::exp(a2 * SoftplusD(static_cast<double>(a.at(1, h)) + f.at("dt_bias").at(0, h)));
  for (int j = 0; j < kValueDim; ++j) {
    const double v1 = qkv.at(0, 2 * kKeys + h * kValueDim + j), v2 = qkv.at(1, 2 * kKeys + h * kValueDim + j);
    ExpectRel(o.at(0, h * kValueDim + j), beta1 * DotD(k1, q1) * v1, "step one, value " + std::to_string(j));
    const double delta2 = beta2 * (v2 - decay2 * beta1 * DotD(k1, k2) * v1);
    ExpectRel(o.at(1, h * kValueDim + j), decay2 * beta1 * DotD(k1, q2) * v1 + DotD(k2, q2) * delta2,
              "step two, value " + std::to_string(j));
  }
  // Every head, both steps, each value head on its own key head.
  const auto want = DeltaRuleByHand(f, qkv, b, a);
  for (int t = 0; t < 2; ++t) {
    for (int c = 0; c < kValues; ++c) {
      ExpectRel(o.at(t, c), want[static_cast<size_t>(t)][static_cast<size_t>(c)],
                "step " + std::to_string(t + 1) + " channel " + std::to_string(c));
    }
  }
}

// ---- the gated norm ----

TEST(GatedDeltaNet, TheGatedNormNormsEachHeadTimesItsWeightThenMultipliesBySiluOfZ) {
  const Fixture f;
  const GatedDeltaNetKernel k = f.Kernel();
  Tensor o = Filled(2, kValues, 11), z = Filled(2, kValues, 12, 3.0);
  o.at(1, 2) = 4.0f * o.at(1, 2);  // heads of unlike size
  const Tensor out = k.GatedNorm(o, z);
  for (int t = 0; t < 2; ++t) {
    for (int h = 0; h < kHeads; ++h) {
      double ms = 0;
      for (int j = 0; j < kValueDim; ++j) ms += std::pow(static_cast<double>(o.at(t, h * kValueDim + j)), 2);
      const double inv = 1.0 / std::sqrt(ms / kValueDim + 0.01);
      for (int j = 0; j < kValueDim; ++j) {
        const int c = h * kValueDim + j;
        ExpectRel(out.at(t, c), f.at("norm.weight").at(0, j) * o.at(t, c) * inv * SiluD(z.at(t, c)),
                  "row " + std::to_string(t) + " channel " + std::to_string(c));
      }
    }
  }
}

// ---- all of it ----

TEST(GatedDeltaNet, ScanProjectsConvolvesRecursAndNormsAsTransformersDoes) {
  const Fixture f;
  const GatedDeltaNetKernel k = f.Kernel();
  const Tensor x = Filled(3, kHidden, 13, 2.0);
  // The projections in double, un-interleaved by the layout above.
  const auto project = [&](const Tensor& w, int t, int row) {
    double acc = 0;
    for (int i = 0; i < kHidden; ++i) acc += static_cast<double>(w.at(row, i)) * x.at(t, i);
    return static_cast<float>(acc);
  };
  Tensor qkv(3, kConvDim), z(3, kValues), b(3, kHeads), a(3, kHeads);
  for (int t = 0; t < 3; ++t) {
    for (int kh = 0; kh < kKeyHeads; ++kh) {
      const Tensor& w = f.at("in_proj_qkvz.weight");
      for (int i = 0; i < kKeyDim; ++i) {
        qkv.at(t, kh * kKeyDim + i) = project(w, t, kh * kBlock + i);
        qkv.at(t, kKeys + kh * kKeyDim + i) = project(w, t, kh * kBlock + kKeyDim + i);
      }
      for (int i = 0; i < kPerKey * kValueDim; ++i) {
        qkv.at(t, 2 * kKeys + kh * kPerKey * kValueDim + i) = project(w, t, kh * kBlock + 2 * kKeyDim + i);
        z.at(t, kh * kPerKey * kValueDim + i) = project(w, t, kh * kBlock + 2 * kKeyDim + kPerKey * kValueDim + i);
      }
      for (int i = 0; i < kPerKey; ++i) {
        b.at(t, kh * kPerKey + i) = project(f.at("in_proj_ba.weight"), t, 2 * kh * kPerKey + i);
        a.at(t, kh * kPerKey + i) = project(f.at("in_proj_ba.weight"), t, (2 * kh + 1) * kPerKey + i);
      }
    }
  }
  // The conv without a bias, then SiLU.
  Tensor conv(3, kConvDim);
  for (int t = 0; t < 3; ++t) {
    for (int c = 0; c < kConvDim; ++c) {
      double acc = 0;
      for (int j = 0; j < kWidth; ++j) {
        const int src = t - (kWidth - 1) + j;
        if (src >= 0) acc += static_cast<double>(f.at("conv1d.weight").at(c, j)) * qkv.at(src, c);
      }
      conv.at(t, c) = static_cast<float>(SiluD(acc));
    }
  }
  const auto o = DeltaRuleByHand(f, conv, b, a);
  MixerKernel::State s = k.NewState();
  const Tensor out = k.Scan(x, s);
  for (int t = 0; t < 3; ++t) {
    for (int h = 0; h < kHeads; ++h) {
      double ms = 0;
      const std::vector<double>& row = o[static_cast<size_t>(t)];
      for (int j = 0; j < kValueDim; ++j) ms += std::pow(row[static_cast<size_t>(h * kValueDim + j)], 2);
      const double inv = 1.0 / std::sqrt(ms / kValueDim + 0.01);
      for (int j = 0; j < kValueDim; ++j) {
        const int c = h * kValueDim + j;
        const double want =
            f.at("norm.weight").at(0, j) * o[static_cast<size_t>(t)][static_cast<size_t>(c)] * inv * SiluD(z.at(t, c));
        EXPECT_NEAR(out.at(t, c), want, kScanAbs) << "row " << t << " channel " << c;
      }
    }
  }
}

// ---- shards ----

TEST(GatedDeltaNet, EachShardComputesItsValueHeadsColumnsOfTheWholeBitForBit) {
  const Fixture f;
  const Tensor x = Filled(3, kHidden, 13, 2.0);
  MixerKernel::State s = f.Kernel().NewState();
  const Tensor whole = f.Kernel().Scan(x, s);
  for (int i = 0; i < kKeyHeads; ++i) {
    const GatedDeltaNetKernel k = f.Kernel({i, kKeyHeads});
    MixerKernel::State own = k.NewState();
    EXPECT_TRUE(k.Scan(x, own) == whole.ColRange(i * kValues / kKeyHeads, (i + 1) * kValues / kKeyHeads))
        << "shard " << i;
  }
  // A shard never holds part of a key head's value heads.
  EXPECT_THROW(f.Kernel({0, 2 * kKeyHeads}), InternalError);
}

}  // namespace
}  // namespace seam::exec

// Mamba2 against Hugging Face's NemotronHMamba2Mixer (torch_forward),
// worked out here in double from its formulas: the conv, the time step, the
// recurrence, the D skip, the gated grouped norm, and all of them together.
// Tolerances: mixer_testing.h.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "mixer_testing.h"
#include "numerics/mamba2.h"

namespace seam::exec {
namespace {

using testing::ExpectRel;
using testing::Filled;
using testing::kScanAbs;
using testing::MixerModel;
using testing::SiluD;
using testing::SoftplusD;

// Four heads of width 2 in two groups (two heads share each B and C, and
// each group's four channels are normed together), a state of 2, a conv of
// width 3, hidden 4. The conv's input is [x (8) | B (2 x 2) | C (2 x 2)].
constexpr int kHeads = 4, kHeadDim = 2, kState = 2, kGroups = 2, kWidth = 3, kHidden = 4;
constexpr int kInner = kHeads * kHeadDim, kConvDim = kInner + 2 * kGroups * kState;
constexpr int kB = kInner, kC = kInner + kGroups * kState;

ModelDims Dims(double dt_min = 0.0, double dt_max = INFINITY) {
  return {.vocab = 8,
          .heads = 1,
          .kv_heads = 1,
          .head_dim = 4,
          .rms_eps = 0.01,
          .mixer_heads = kHeads,
          .mixer_head_dim = kHeadDim,
          .mixer_state = kState,
          .mixer = MixerKind::kMamba2,
          .mixer_groups = kGroups,
          .mixer_conv = kWidth,
          .mixer_dt_min = dt_min,
          .mixer_dt_max = dt_max};
}

struct Fixture : MixerModel {
  std::map<std::string, Tensor> t;

  explicit Fixture(const ModelDims& d = Dims()) : MixerModel(d, kHidden) {
    t[prefix + ".in_proj.weight"] = Filled(kInner + kConvDim + kHeads, kHidden, 1, 0.5);
    t[prefix + ".conv1d.weight"] = Filled(kConvDim, kWidth, 2);
    t[prefix + ".conv1d.bias"] = Filled(1, kConvDim, 3, 0.25);
    t[prefix + ".dt_bias"] = Filled(1, kHeads, 4, 0.5);
    t[prefix + ".A_log"] = Filled(1, kHeads, 5, 0.5);
    t[prefix + ".D"] = Filled(1, kHeads, 6);
    t[prefix + ".norm.weight"] = Filled(1, kInner, 7);
    t[prefix + ".out_proj.weight"] = Filled(kHidden, kInner, 8, 0.5);
  }
  Tensor& at(const std::string& name) { return t.at(prefix + "." + name); }
  // A kernel reads its weights in place: each is built on a snapshot of `t`
  // (tests change it between kernels) that lives as long as the fixture.
  Mamba2Kernel Kernel(Shard shard = {}) const {
    return Mamba2Kernel(stage, model, held.emplace_back(t), shard, RunNumerics{});
  }
  mutable std::deque<Weights> held;
};

// ---- the conv ----

// out[t][c] = silu(bias[c] + sum_j w[c][j] * in[t - 2 + j]), zeros before the request.
double ConvAt(const Fixture& f, const Tensor& in, int first, int t, int c) {
  const Tensor& w = f.t.at(f.prefix + ".conv1d.weight");
  double acc = f.t.at(f.prefix + ".conv1d.bias").at(0, c);
  for (int j = 0; j < kWidth; ++j) {
    const int src = t - (kWidth - 1) + j;
    if (src >= first) acc += static_cast<double>(w.at(c, j)) * in.at(src, c);
  }
  return SiluD(acc);
}

TEST(Mamba2, ConvIsCausalOverTheRequestWithItsBiasThenSilu) {
  const Fixture f;
  const Mamba2Kernel k = f.Kernel();
  const Tensor in = Filled(4, kConvDim, 9);
  MixerKernel::State s = k.NewState();
  const Tensor out = k.Conv(in, s);
  for (int t = 0; t < 4; ++t) {
    for (int c = 0; c < kConvDim; ++c) ExpectRel(out.at(t, c), ConvAt(f, in, 0, t, c), "row " + std::to_string(t));
  }
}

TEST(Mamba2, ConvCarriesItsWindowAcrossCallsAndAFreshStateStartsFromZeros) {
  const Fixture f;
  const Mamba2Kernel k = f.Kernel();
  const Tensor in = Filled(4, kConvDim, 9);
  MixerKernel::State whole = k.NewState(), split = k.NewState();
  const Tensor all = k.Conv(in, whole);
  (void)k.Conv(in.RowRange(0, 2), split);
  EXPECT_TRUE(k.Conv(in.RowRange(2, 4), split) == all.RowRange(2, 4));
  // A request starting at row 2 sees nothing before it.
  MixerKernel::State fresh = k.NewState();
  const Tensor late = k.Conv(in.RowRange(2, 4), fresh);
  for (int c = 0; c < kConvDim; ++c) ExpectRel(late.at(0, c), ConvAt(f, in, 2, 2, c), "channel " + std::to_string(c));
}

TEST(Mamba2, EachRequestOfARunStartsWithAFreshConvAndState) {
  const Fixture f;
  const Mamba2Kernel k = f.Kernel();
  const Tensor x = Filled(5, kHidden, 10, 2.0);
  MixerKernel::State first = k.NewState(), second = k.NewState(), alone = k.NewState();
  const MixerKernel::Part both[] = {{0, 3, &first}, {3, 5, &second}};
  const MixerKernel::Part one[] = {{0, 2, &alone}};
  EXPECT_TRUE(k.Run(x, both).RowRange(3, 5) == k.Run(x.RowRange(3, 5), one));
}

// ---- the time step ----

TEST(Mamba2, TimeStepIsSoftplusOfDtPlusItsBiasClampedToTheLimit) {
  Fixture f(Dims(0.1, 1.5));
  f.at("dt_bias") = testing::Row({0.5f, -1.0f, 2.0f, 0.0f});
  const Mamba2Kernel k = f.Kernel();
  ExpectRel(k.TimeStep(0.25f, 0), SoftplusD(0.75), "inside the limit");
  ExpectRel(k.TimeStep(-0.5f, 3), SoftplusD(-0.5), "inside, no bias");
  EXPECT_EQ(k.TimeStep(-5.0f, 1), 0.1f) << "softplus(-6) = 0.0025 is clamped up to the limit's min";
  EXPECT_EQ(k.TimeStep(1.0f, 2), 1.5f) << "softplus(3) = 3.05 is clamped down to the limit's max";
  const Fixture unlimited;  // HF's default (0, inf) clamps nothing
  ExpectRel(unlimited.Kernel().TimeStep(30.0f, 0), 30.0 + unlimited.t.at(unlimited.prefix + ".dt_bias").at(0, 0),
            "no limit");
}

// ---- the recurrence ----

// The double recurrence of two rows of conv output, for every head:
// state = state * exp(dt * A) + dt * B_g (x) x_h, y = state . C_g + D_h x_h.
std::vector<std::vector<double>> SsmByHand(const Fixture& f, const Tensor& xbc, const Tensor& dt) {
  std::vector<double> state(static_cast<size_t>(kHeads * kHeadDim * kState), 0.0);
  std::vector<std::vector<double>> y(static_cast<size_t>(xbc.rows()), std::vector<double>(kInner));
  for (int t = 0; t < xbc.rows(); ++t) {
    for (int h = 0; h < kHeads; ++h) {
      const int g = h / (kHeads / kGroups);
      const double a = -std::exp(static_cast<double>(f.t.at(f.prefix + ".A_log").at(0, h)));
      const double step = SoftplusD(static_cast<double>(dt.at(t, h)) + f.t.at(f.prefix + ".dt_bias").at(0, h));
      for (int p = 0; p < kHeadDim; ++p) {
        const double x = xbc.at(t, h * kHeadDim + p);
        double sum = 0;
        for (int n = 0; n < kState; ++n) {
          double& s = state[static_cast<size_t>((h * kHeadDim + p) * kState + n)];
          s = s * std::exp(step * a) + step * xbc.at(t, kB + g * kState + n) * x;
          sum += s * xbc.at(t, kC + g * kState + n);
        }
        y[static_cast<size_t>(t)][static_cast<size_t>(h * kHeadDim + p)] = sum + f.t.at(f.prefix + ".D").at(0, h) * x;
      }
    }
  }
  return y;
}

TEST(Mamba2, OneAndTwoStepsOfTheRecurrenceDecayTheStateAndReadItThroughTheGroupsC) {
  Fixture f;
  f.at("D") = Tensor(1, kHeads);  // the skip has its own test
  const Mamba2Kernel k = f.Kernel();
  const Tensor xbc = Filled(2, kConvDim, 11), dt = Filled(2, kHeads, 12);
  MixerKernel::State s = k.NewState();
  const Tensor y = k.Ssm(xbc, dt, s);
  const auto want = SsmByHand(f, xbc, dt);
  for (int t = 0; t < 2; ++t) {
    for (int c = 0; c < kInner; ++c) {
      ExpectRel(y.at(t, c), want[static_cast<size_t>(t)][static_cast<size_t>(c)],
                "step " + std::to_string(t + 1) + " channel " + std::to_string(c));
    }
  }
  // Step one from a zero state: y = dt * (B . C) * x, nothing decayed yet.
  const double step = SoftplusD(static_cast<double>(dt.at(0, 3)) + f.at("dt_bias").at(0, 3));
  const double bc = xbc.at(0, kB + 2) * xbc.at(0, kC + 2) + xbc.at(0, kB + 3) * xbc.at(0, kC + 3);  // group 1
  ExpectRel(y.at(0, 7), step * bc * xbc.at(0, 7), "head 3, group 1, step one");
}

TEST(Mamba2, TheDSkipAddsDTimesXPerHead) {
  Fixture f;
  f.at("D") = testing::Row({0.5f, -2.0f, 1.5f, 3.0f});
  const Mamba2Kernel k = f.Kernel();
  Tensor xbc = Filled(2, kConvDim, 11);
  for (int t = 0; t < 2; ++t) {
    for (int c = kC; c < kConvDim; ++c) xbc.at(t, c) = 0.0f;  // C = 0: the state is not read
  }
  MixerKernel::State s = k.NewState();
  const Tensor y = k.Ssm(xbc, Filled(2, kHeads, 12), s);
  for (int t = 0; t < 2; ++t) {
    for (int c = 0; c < kInner; ++c) {
      EXPECT_EQ(y.at(t, c), f.at("D").at(0, c / kHeadDim) * xbc.at(t, c)) << "row " << t << " channel " << c;
    }
  }
}

// ---- the gated grouped norm ----

// y * silu(z), then per group of intermediate / n_groups channels
// g / sqrt(mean(g^2) + eps), times the norm's weight.
std::vector<double> GatedNormByHand(const Fixture& f, const Tensor& y, const Tensor& z, int row) {
  const int width = kInner / kGroups;
  std::vector<double> g(kInner), out(kInner);
  for (int c = 0; c < kInner; ++c) g[static_cast<size_t>(c)] = y.at(row, c) * SiluD(z.at(row, c));
  for (int group = 0; group < kGroups; ++group) {
    double ms = 0;
    for (int c = group * width; c < (group + 1) * width; ++c) ms += std::pow(g[static_cast<size_t>(c)], 2);
    const double inv = 1.0 / std::sqrt(ms / width + f.model.dims->rms_eps);
    for (int c = group * width; c < (group + 1) * width; ++c) {
      out[static_cast<size_t>(c)] = f.t.at(f.prefix + ".norm.weight").at(0, c) * g[static_cast<size_t>(c)] * inv;
    }
  }
  return out;
}

TEST(Mamba2, TheGatedNormMultipliesBySiluOfZThenNormsEachGroupAlone) {
  const Fixture f;
  const Mamba2Kernel k = f.Kernel();
  Tensor y = Filled(2, kInner, 13), z = Filled(2, kInner, 14, 3.0);
  for (int c = 0; c < kInner / kGroups; ++c) y.at(1, c) = 4.0f * y.at(1, c);  // groups of unlike size
  const Tensor out = k.GatedNorm(y, z);
  for (int t = 0; t < 2; ++t) {
    const std::vector<double> want = GatedNormByHand(f, y, z, t);
    for (int c = 0; c < kInner; ++c) {
      ExpectRel(out.at(t, c), want[static_cast<size_t>(c)],
                "row " + std::to_string(t) + " channel " + std::to_string(c));
    }
  }
}

// ---- all of it ----

TEST(Mamba2, ScanProjectsConvolvesRecursAndNormsAsTransformersDoes) {
  const Fixture f;
  const Mamba2Kernel k = f.Kernel();
  const Tensor x = Filled(3, kHidden, 15, 2.0);
  // in_proj in double: [z | xBC | dt].
  const Tensor& w = f.t.at(f.prefix + ".in_proj.weight");
  Tensor z(3, kInner), xbc(3, kConvDim), dt(3, kHeads);
  for (int t = 0; t < 3; ++t) {
    for (int o = 0; o < w.rows(); ++o) {
      double acc = 0;
      for (int i = 0; i < kHidden; ++i) acc += static_cast<double>(w.at(o, i)) * x.at(t, i);
      Tensor& part = o < kInner ? z : o < kInner + kConvDim ? xbc : dt;
      const int col = o < kInner ? o : o < kInner + kConvDim ? o - kInner : o - kInner - kConvDim;
      part.at(t, col) = static_cast<float>(acc);
    }
  }
  Tensor conv(3, kConvDim);
  for (int t = 0; t < 3; ++t) {
    for (int c = 0; c < kConvDim; ++c) conv.at(t, c) = static_cast<float>(ConvAt(f, xbc, 0, t, c));
  }
  const auto y = SsmByHand(f, conv, dt);
  Tensor yt(3, kInner);
  for (int t = 0; t < 3; ++t) {
    for (int c = 0; c < kInner; ++c) {
      yt.at(t, c) = static_cast<float>(y[static_cast<size_t>(t)][static_cast<size_t>(c)]);
    }
  }
  MixerKernel::State s = k.NewState();
  const Tensor out = k.Scan(x, s);
  for (int t = 0; t < 3; ++t) {
    const std::vector<double> want = GatedNormByHand(f, yt, z, t);
    for (int c = 0; c < kInner; ++c) {
      EXPECT_NEAR(out.at(t, c), want[static_cast<size_t>(c)], kScanAbs) << "row " << t << " channel " << c;
    }
  }
}

// ---- shards ----

TEST(Mamba2, EachShardComputesItsGroupsColumnsOfTheWholeBitForBit) {
  const Fixture f;
  const Tensor x = Filled(3, kHidden, 15, 2.0);
  MixerKernel::State s = f.Kernel().NewState();
  const Tensor whole = f.Kernel().Scan(x, s);
  for (int i = 0; i < kGroups; ++i) {
    const Mamba2Kernel k = f.Kernel({i, kGroups});
    MixerKernel::State own = k.NewState();
    EXPECT_TRUE(k.Scan(x, own) == whole.ColRange(i * kInner / kGroups, (i + 1) * kInner / kGroups)) << "shard " << i;
  }
  // A shard never holds part of a group.
  EXPECT_THROW(f.Kernel({0, 2 * kGroups}), InternalError);
}

}  // namespace
}  // namespace seam::exec

// The kernels against values worked out by hand. The reference runs the
// same kernels as the sharded ranks, so bit-identity cannot see wrong math;
// these tests can. Every expected value is written out here in double from
// its formula, never taken from seam's own helpers.
//
// Tolerances: an fp32 kernel rounds each exp, log, sqrt, product and sum
// once (2^-24 relative each), so a handful of roundings stays below 1e-6
// relative (kRel); values that come out of a difference of rounded terms
// (a rotation) get an absolute bound instead. Each mutation these tests
// exist for moves a value by far more than that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "numerics/request_cache.h"
#include "numerics/stages.h"
#include "seam/model.h"
#include "seam/runtime/kernels.h"
#include "seam/runtime/tensor.h"
#include "seam/runtime/weights.h"

namespace seam::exec {
namespace {

constexpr double kRel = 1e-6;

// |got - want| within kRel of want (or of 1, for values below 1 in size).
void ExpectRel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, kRel * std::max(1.0, std::abs(want))) << what;
}

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Tensor Row(const std::vector<float>& v) { return Tensor(1, static_cast<int>(v.size()), v); }

// An [n, n] matrix with `diag` on its diagonal.
Tensor Diagonal(const std::vector<float>& diag) {
  const int n = static_cast<int>(diag.size());
  Tensor t(n, n);
  for (int i = 0; i < n; ++i) t.at(i, i) = diag[static_cast<size_t>(i)];
  return t;
}

Tensor Identity(int n) { return Diagonal(std::vector<float>(static_cast<size_t>(n), 1.0f)); }

// ---- activations ----

TEST(ClosedForm, SiluIsXOverOnePlusExpOfMinusX) {
  for (double x : {-20.0, -4.0, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 20.0}) {
    const double want = x / (1.0 + std::exp(-x));
    // Relative to the value itself: silu(-20) is about -4e-8.
    EXPECT_NEAR(Silu(static_cast<float>(x)), want, kRel * std::abs(want)) << "x = " << x;
  }
}

TEST(ClosedForm, SoftplusIsLogOfOnePlusExpAndStaysFiniteForLargeInputs) {
  // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): the same value, without an
  // overflow for large x. A naive fp32 log1p(exp(x)) is infinite from x = 89.
  for (double x :
       {-80.0, -30.0, -5.0, -1.0, 0.0, 0.5, 1.0, 5.0, 19.5, 20.0, 21.0, 30.0, 88.0, 89.0, 100.0, 1000.0, 1e30}) {
    const double want = std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
    const float got = Softplus(static_cast<float>(x));
    EXPECT_TRUE(std::isfinite(got)) << "x = " << x;
    // Relative to the value itself: softplus(-80) is about 1.8e-35.
    EXPECT_NEAR(got, want, kRel * want) << "x = " << x;
  }
  // Far below zero e^x underflows fp32 (e^-1000 is about 1e-434): zero, never negative.
  EXPECT_EQ(Softplus(-1000.0f), 0.0f);
}

TEST(ClosedForm, Relu2SquaresThePositivePartAndZeroesTheRest) {
  const Tensor up = Row({-3.0f, -0.5f, 0.0f, 0.25f, 1.5f, 4.0f});
  Tensor out;
  Relu2(up, Dtype::kF32, out);
  // Squares of these are exact in fp32.
  const std::vector<float> want = {0.0f, 0.0f, 0.0f, 0.0625f, 2.25f, 16.0f};
  ASSERT_EQ(out.cols(), 6);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(out.at(0, c), want[static_cast<size_t>(c)]) << "up = " << up.at(0, c);
}

TEST(ClosedForm, SwiGluIsSiluOfTheGateTimesUp) {
  const std::vector<double> gate = {-3.0, -1.0, 0.0, 0.5, 2.0, 6.0};
  const std::vector<double> up = {2.0, -1.5, 5.0, 4.0, -0.5, 1.0};
  Tensor g(1, 6), u(1, 6), out;
  for (int c = 0; c < 6; ++c) {
    g.at(0, c) = static_cast<float>(gate[static_cast<size_t>(c)]);
    u.at(0, c) = static_cast<float>(up[static_cast<size_t>(c)]);
  }
  SwiGlu(g, u, Dtype::kF32, out);
  for (size_t c = 0; c < 6; ++c) {
    const double want = gate[c] / (1.0 + std::exp(-gate[c])) * up[c];
    ExpectRel(out.at(0, static_cast<int>(c)), want, "gate " + std::to_string(gate[c]));
  }
}

TEST(ClosedForm, RmsNormDividesByTheRootOfMeanSquarePlusEpsThenScales) {
  // mean(x^2) = (9 + 16 + 0 + 25) / 4 = 12.5; with eps 0.5 the divisor is sqrt(13).
  const Tensor x = Row({3.0f, -4.0f, 0.0f, 5.0f});
  const std::vector<float> w = {1.0f, 0.5f, 2.0f, -1.0f};
  const Tensor y = RmsNorm(x, w, 0.5f, Dtype::kF32);
  const double inv = 1.0 / std::sqrt(13.0);
  const double want[] = {3 * inv, 0.5 * -4 * inv, 0.0, -1 * 5 * inv};
  for (int c = 0; c < 4; ++c) ExpectRel(y.at(0, c), want[c], "column " + std::to_string(c));
}

// ---- multi-head latent attention ----

// One MLA head: hidden 4 = kv_lora 2 + qk_rope 2, no query latent.
// q_proj = diag(1, 1, 2, 2): q = [x0, x1 | 2 x2, 2 x3];
// kv_a_proj = identity: latent [x0, x1], key rope part [x2, x3];
// kv_a_layernorm = (1, 0.5); kv_b_proj: k_nope = n, v = (2 n0, -n1).
// One rotary pair (qk_rope 2) has inverse frequency 1 and is the same pair
// in the rotate-half and the interleaved layouts: the angle is the position.
struct MlaFixture {
  Model model;
  Weights weights;
  StageRef stage;

  MlaFixture() {
    model.name = "mla";
    model.num_layers = 1;
    model.hidden = 4;
    model.dims = ModelDims{.vocab = 8,
                           .heads = 1,
                           .kv_heads = 1,
                           .head_dim = 2,
                           .mla = {.q_lora = 0, .kv_lora = 2, .qk_nope = 2, .qk_rope = 2, .v = 2},
                           .rms_eps = 0.0};
    stage = StageRef{.index = 0, .layer = 0, .slot = 0, .decl = AttentionStage()};
    const std::string p = "model.layers.0.self_attn";
    std::map<std::string, Tensor> t;
    t[p + ".q_proj.weight"] = Diagonal({1, 1, 2, 2});
    t[p + ".kv_a_proj_with_mqa.weight"] = Identity(4);
    t[p + ".kv_a_layernorm.weight"] = Row({1.0f, 0.5f});
    t[p + ".kv_b_proj.weight"] = Tensor(4, 2, {1, 0, 0, 1, 2, 0, 0, -1});
    t[p + ".o_proj.weight"] = Tensor(4, 2, {1, 0, 0, 1, 0, 0, 0, 0});
    weights = Weights(std::move(t));
  }
};

TEST(ClosedForm, MlaRotatesTheQueryAndTheSharedKeyRopePartByTheirPosition) {
  const MlaFixture f;
  const AttentionKernel k(f.stage, f.model, f.weights, Shard{}, RunNumerics{});
  const Tensor x(2, 4, {3, 4, 1, 2, 1, -2, 0.5f, -3});
  const std::vector<int> positions = {2, 7};
  const AttentionKernel::Projected p = k.Project(k.Prepare(x), positions);
  Tensor keys, values;
  k.KeyValues(p.entries.data(), 0, 2, keys, values);
  ASSERT_EQ(p.q.cols(), 4);
  ASSERT_EQ(keys.cols(), 4);
  ASSERT_EQ(values.cols(), 2);
  for (int r = 0; r < 2; ++r) {
    const double x0 = x.at(r, 0), x1 = x.at(r, 1), x2 = x.at(r, 2), x3 = x.at(r, 3);
    const double a = positions[static_cast<size_t>(r)];
    const double rms = std::sqrt((x0 * x0 + x1 * x1) / 2);
    const double n0 = x0 / rms, n1 = 0.5 * x1 / rms;
    const double q[] = {x0, x1, 2 * (x2 * std::cos(a) - x3 * std::sin(a)), 2 * (x3 * std::cos(a) + x2 * std::sin(a))};
    const double key[] = {n0, n1, x2 * std::cos(a) - x3 * std::sin(a), x3 * std::cos(a) + x2 * std::sin(a)};
    const double v[] = {2 * n0, -n1};
    // The rotation rounds cos, sin, two products and a sum in fp32 on values
    // up to 6: a few units of 2^-21.
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(p.q.at(r, c), q[c], 1e-5) << "query row " << r << " col " << c;
      EXPECT_NEAR(keys.at(r, c), key[c], 1e-5) << "key row " << r << " col " << c;
    }
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(values.at(r, c), v[c], 1e-5) << "value row " << r << " col " << c;
  }
}

// One MLA head with qk_rope 4 (hidden 6 = kv_lora 2 + qk_rope 4): two
// rotary pairs, at inverse frequencies 1 and 10000^(-1/2) = 0.01, so the
// pairing shows. q = [x0, x1 | x2, x3, x4, x5]; the key's rope part is
// [x2, x3, x4, x5] too (kv_a_proj_with_mqa = identity).
struct MlaRopeFixture {
  Model model;
  Weights weights;
  StageRef stage;

  explicit MlaRopeFixture(RopePairing pairing, YarnScaling yarn = {}) {
    model.name = "mla-rope";
    model.num_layers = 1;
    model.hidden = 6;
    model.dims = ModelDims{.vocab = 8,
                           .heads = 1,
                           .kv_heads = 1,
                           .head_dim = 2,
                           .mla = {.q_lora = 0, .kv_lora = 2, .qk_nope = 2, .qk_rope = 4, .v = 2},
                           .rms_eps = 0.0,
                           .yarn = yarn,
                           .rope_pairing = pairing};
    stage = StageRef{.index = 0, .layer = 0, .slot = 0, .decl = AttentionStage()};
    const std::string p = "model.layers.0.self_attn";
    std::map<std::string, Tensor> t;
    t[p + ".q_proj.weight"] = Identity(6);
    t[p + ".kv_a_proj_with_mqa.weight"] = Identity(6);
    t[p + ".kv_a_layernorm.weight"] = Row({1.0f, 1.0f});
    t[p + ".kv_b_proj.weight"] = Tensor(4, 2, {1, 0, 0, 1, 1, 0, 0, 1});
    t[p + ".o_proj.weight"] = Tensor(6, 2);
    weights = Weights(std::move(t));
  }
};

TEST(ClosedForm, MlaRotatesItsRopeDimsInAdjacentPairsAsDeepseekDoes) {
  // Hugging Face's DeepSeek (apply_rotary_pos_emb_interleave, or DeepSeek-V2's
  // complex form) turns rope dims (2i, 2i + 1) by position * inv_freq(i);
  // Llama's rotate-half would turn (i, i + 2) instead.
  const Tensor x(1, 6, {0.5f, -1.0f, 1.0f, 2.0f, 3.0f, -4.0f});
  const std::vector<int> positions = {2};
  const double a0 = 2 * 1.0, a1 = 2 * 0.01;  // the angles of pairs 0 and 1
  const double r[] = {1, 2, 3, -4};
  const double want[] = {r[0] * std::cos(a0) - r[1] * std::sin(a0), r[1] * std::cos(a0) + r[0] * std::sin(a0),
                         r[2] * std::cos(a1) - r[3] * std::sin(a1), r[3] * std::cos(a1) + r[2] * std::sin(a1)};
  const MlaRopeFixture f(RopePairing::kInterleaved);
  const AttentionKernel k(f.stage, f.model, f.weights, Shard{}, RunNumerics{});
  const AttentionKernel::Projected p = k.Project(k.Prepare(x), positions);
  Tensor keys, values;
  k.KeyValues(p.entries.data(), 0, 1, keys, values);
  // Values up to 4 through an fp32 rotation: a few units of 2^-21.
  for (int c = 0; c < 4; ++c) {
    EXPECT_NEAR(p.q.at(0, 2 + c), want[c], 1e-5) << "query rope dim " << c;
    EXPECT_NEAR(keys.at(0, 2 + c), want[c], 1e-5) << "key rope dim " << c;  // shared by every head
  }
  EXPECT_EQ(p.q.at(0, 0), 0.5f);  // the nope part is not rotated
  // The same rope dims paired by halves: dim 0 turns with dim 2, far from the above.
  const MlaRopeFixture half(RopePairing::kHalf);
  const AttentionKernel h(half.stage, half.model, half.weights, Shard{}, RunNumerics{});
  EXPECT_NEAR(h.Project(h.Prepare(x), positions).q.at(0, 2), r[0] * std::cos(a0) - r[2] * std::sin(a0), 1e-5);
}

TEST(ClosedForm, YarnMscaleIsOneTenthMTimesLnFactorPlusOneAboveFactorOne) {
  // yarn_get_mscale: DeepSeek-V2-Lite's m = 0.707 at factor 40.
  ExpectRel(YarnMscale(40.0, 0.707), 0.1 * 0.707 * std::log(40.0) + 1, "factor 40, m 0.707");
  ExpectRel(YarnMscale(32.0, 1.0), 0.1 * std::log(32.0) + 1, "factor 32, m 1");
  EXPECT_EQ(YarnMscale(1.0, 1.0), 1.0);
  EXPECT_EQ(YarnMscale(0.5, 1.0), 1.0);
}

TEST(ClosedForm, MlaUnderYarnScalesItsSoftmaxByMscaleAllDimSquared) {
  // DeepSeek's attention: softmax(q.k / sqrt(qk_dim) * mscale(factor, mscale_all_dim)^2).
  // One query at position 1 over two cached latents [1, 0] and [3, 0] (no
  // rope part): kv_b makes each the key's nope part and the value, so
  // q.k = 1 and 3 (qk_dim 6) and the values are 1 and 3.
  const YarnScaling yarn{.factor = 40, .original_positions = 4096, .mscale = 0.707, .mscale_all_dim = 0.707};
  const MlaRopeFixture f(RopePairing::kInterleaved, yarn);
  const AttentionKernel k(f.stage, f.model, f.weights, Shard{}, RunNumerics{});
  AttentionKernel::Projected p;
  p.q = Tensor(1, 6, {1, 0, 0, 0, 0, 0});
  const Tensor cache(2, 6, {1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0});
  const std::vector<int> positions = {1};
  const double m = 0.1 * 0.707 * std::log(40.0) + 1;
  const double scale = m * m / std::sqrt(6.0);
  const double w1 = 1 / (1 + std::exp(-(3 - 1) * scale));  // the second key's softmax weight
  Tensor out(1, k.out_width());
  k.AttendCached(p, 0, 1, positions, cache.data(), 2, out);
  ExpectRel(out.at(0, 0), 1 * (1 - w1) + 3 * w1, "with mscale^2");
}

// The inverse frequency of pair i of an 8-dim rotary part under YaRN, as
// transformers' _compute_yarn_parameters works it out: theta 10000,
// original context 4096, beta_fast 32, beta_slow 1, factor 40.
double YarnInvFreq(int i, bool truncate) {
  const double theta = 10000, dim = 8, factor = 40, original = 4096;
  const auto correction_dim = [&](double turns) {
    return dim * std::log(original / (turns * 2 * 3.14159265358979323846)) / (2 * std::log(theta));
  };
  double low = correction_dim(32), high = correction_dim(1);  // 1.309 and 2.814
  if (truncate) low = std::floor(low), high = std::ceil(high);
  const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
  const double extrapolation = std::pow(theta, -2.0 * i / dim);
  return extrapolation / factor * ramp + extrapolation * (1 - ramp);
}

TEST(ClosedForm, YarnBlendsEachPairsFrequencyByTheRampAndScalesCosAndSinByTheAttentionFactor) {
  // mscale 0.707 over mscale_all_dim 1: cos and sin scaled by
  // (0.0707 ln 40 + 1) / (0.1 ln 40 + 1), about 0.92.
  const double attention = (0.1 * 0.707 * std::log(40.0) + 1) / (0.1 * std::log(40.0) + 1);
  for (bool truncate : {true, false}) {
    SCOPED_TRACE(truncate ? "truncated ramp ends" : "fractional ramp ends");
    RopeParams p{.theta = 10000,
                 .yarn = {.factor = 40,
                          .original_positions = 4096,
                          .beta_fast = 32,
                          .beta_slow = 1,
                          .mscale = 0.707,
                          .mscale_all_dim = 1,
                          .truncate = truncate}};
    Tensor x(2, 8);
    for (int c = 0; c < 8; ++c) x.at(0, c) = x.at(1, c) = static_cast<float>(c % 3 + 1);
    const Tensor in = x;
    const std::vector<int> positions = {0, 50};
    ApplyRope(x, 1, 8, 8, positions, p, Dtype::kF32);
    for (int c = 0; c < 8; ++c) ExpectRel(x.at(0, c), attention * in.at(0, c), "position 0 dim " + std::to_string(c));
    for (int i = 0; i < 4; ++i) {  // pair i: dims i and i + 4
      const double angle = 50 * YarnInvFreq(i, truncate);
      const double a = in.at(1, i), b = in.at(1, i + 4);
      EXPECT_NEAR(x.at(1, i), attention * (a * std::cos(angle) - b * std::sin(angle)), 1e-5) << "pair " << i;
      EXPECT_NEAR(x.at(1, i + 4), attention * (b * std::cos(angle) + a * std::sin(angle)), 1e-5) << "pair " << i;
    }
  }
  // The truncated ramp runs from pair 1 to pair 3: pair 2 is half slowed.
  ExpectRel(YarnInvFreq(2, true), 0.01 * (0.5 / 40 + 0.5), "pair 2");
}

// ---- sliding window ----

// One head of width 8 (hidden 8), no RoPE. The query projection is zero, so
// every key a query sees scores 0 and gets the same weight: the output is the
// mean of the value rows it sees. v and o are identities, and row j of the
// input is (c + 1) * 2^j in column c, so a mean names the rows behind it.
struct WindowFixture {
  Model model;
  Weights weights;
  StageRef stage;

  explicit WindowFixture(int window) {
    model.name = "window";
    model.num_layers = 1;
    model.hidden = 8;
    model.dims = ModelDims{.vocab = 8, .heads = 1, .kv_heads = 1, .head_dim = 8, .rope = false, .rms_eps = 0.0};
    stage = StageRef{.index = 0, .layer = 0, .slot = 0, .decl = AttentionStage({.window = window})};
    const std::string p = "model.layers.0.self_attn";
    std::map<std::string, Tensor> t;
    t[p + ".q_proj.weight"] = Tensor(8, 8);
    t[p + ".k_proj.weight"] = Tensor(8, 8);
    t[p + ".v_proj.weight"] = Identity(8);
    t[p + ".o_proj.weight"] = Identity(8);
    weights = Weights(std::move(t));
  }
};

Tensor PowersOfTwoRows(int rows) {
  Tensor x(rows, 8);
  for (int j = 0; j < rows; ++j) {
    for (int c = 0; c < 8; ++c) x.at(j, c) = static_cast<float>((c + 1) * std::ldexp(1.0, j));
  }
  return x;
}

// Runs two requests (rows 0-4 and 5-7) and checks each row's output against
// the mean of the rows it must see.
void ExpectSees(int window, const std::vector<std::vector<int>>& sees) {
  const WindowFixture f(window);
  const AttentionKernel k(f.stage, f.model, f.weights, Shard{}, RunNumerics{});
  const Tensor x = PowersOfTwoRows(8);
  const std::vector<int> positions = {0, 1, 2, 3, 4, 0, 1, 2};
  const AttentionKernel::Projected p = k.Project(k.Prepare(x), positions);
  Tensor out(8, k.out_width());
  for (const auto& [first, last] : {std::pair{0, 5}, std::pair{5, 8}}) {
    CacheRows cache(k.cache_width());
    AttendRequest(k, p, first, last, positions, cache, out);
  }
  out = k.Output(out, p.gate);
  for (int r = 0; r < 8; ++r) {
    const std::vector<int>& rows = sees[static_cast<size_t>(r)];
    for (int c = 0; c < 8; ++c) {
      double sum = 0;
      for (int j : rows) sum += (c + 1) * std::ldexp(1.0, j);
      ExpectRel(out.at(r, c), sum / static_cast<double>(rows.size()),
                "window " + std::to_string(window) + " row " + std::to_string(r) + " col " + std::to_string(c));
    }
  }
}

TEST(ClosedForm, ASlidingWindowOfWSeesTheRowAndTheWMinusOneBeforeItWithinItsRequest) {
  // Window 3: the row itself and the two before it, never before the request's first row (5).
  ExpectSees(3, {{0}, {0, 1}, {0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {5}, {5, 6}, {5, 6, 7}});
  // Window 1: the row alone.
  ExpectSees(1, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  // No window: every row of the request so far.
  ExpectSees(0, {{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}, {0, 1, 2, 3, 4}, {5}, {5, 6}, {5, 6, 7}});
}

TEST(ClosedForm, FirstKeyOfAWindowOfWIsWMinusOnePositionsBackClippedAtTheRequestStart) {
  const WindowFixture f(3);
  const AttentionKernel k(f.stage, f.model, f.weights, Shard{}, RunNumerics{});
  EXPECT_EQ(k.FirstKey(4), 2);
  EXPECT_EQ(k.FirstKey(2), 0);
  EXPECT_EQ(k.FirstKey(1), 0);
  EXPECT_EQ(k.FirstKey(0), 0);
  const WindowFixture full(0);
  const AttentionKernel all(full.stage, full.model, full.weights, Shard{}, RunNumerics{});
  EXPECT_EQ(all.FirstKey(9), 0);
}

// ---- routing ----

// A router over four experts with an identity gate, so a row's logits are
// the row itself. The experts' own weights are zero: only Route() is run.
struct RouterFixture {
  Model model;
  Weights weights;
  StageRef stage;

  RouterFixture(RouterScoring scoring, bool renormalize, double routed_scaling, std::vector<float> bias = {},
                ExpertGroups groups = {}, double renormalize_eps = 0) {
    model.name = "router";
    model.num_layers = 1;
    model.hidden = 4;
    model.dims = ModelDims{.vocab = 8,
                           .heads = 1,
                           .kv_heads = 1,
                           .head_dim = 4,
                           .rms_eps = 0.0,
                           .experts = 4,
                           .moe_intermediate = 8,
                           .renormalize = renormalize,
                           .scoring = scoring,
                           .correction_bias = !bias.empty(),
                           .routed_scaling = routed_scaling,
                           .expert_groups = groups,
                           .renormalize_eps = renormalize_eps};
    stage = StageRef{.index = 0, .layer = 0, .slot = 0, .decl = SparseFfnStage({.top_k = 2})};
    const std::string p = "model.layers.0.mlp";
    std::map<std::string, Tensor> t;
    t[p + ".gate.weight"] = Identity(4);
    if (!bias.empty()) t[p + ".gate.e_score_correction_bias"] = Row(bias);
    for (int e = 0; e < 4; ++e) {
      const std::string x = p + ".experts." + std::to_string(e);
      t[x + ".gate_proj.weight"] = Tensor(8, 4);
      t[x + ".up_proj.weight"] = Tensor(8, 4);
      t[x + ".down_proj.weight"] = Tensor(4, 8);
    }
    weights = Weights(std::move(t));
  }

  std::vector<Routing> Route(const std::vector<float>& logits) const {
    const MoeKernel k(stage, model, weights, Shard{}, MoeMode::kTp, RunNumerics{});
    return k.Route(Tensor(static_cast<int>(logits.size()) / 4, 4, logits));
  }
};

void ExpectRouting(const Routing& r, const std::vector<int>& experts, const std::vector<double>& weights) {
  ASSERT_EQ(r.experts, experts);
  ASSERT_EQ(r.weights.size(), weights.size());
  for (size_t i = 0; i < weights.size(); ++i) ExpectRel(r.weights[i], weights[i], "slot " + std::to_string(i));
}

TEST(ClosedForm, SoftmaxRoutingWeighsTheTopExpertsByTheirSoftmaxOverAllExperts) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f};
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.5) + std::exp(-1.0);
  const RouterFixture raw(RouterScoring::kSoftmax, false, 1.0);
  ExpectRouting(raw.Route(logits)[0], {1, 0}, {std::exp(2.0) / z, std::exp(1.0) / z});
  // Renormalised over the chosen two: e^2 / (e^2 + e) = sigmoid(1).
  const RouterFixture renormalised(RouterScoring::kSoftmax, true, 1.0);
  ExpectRouting(renormalised.Route(logits)[0], {1, 0},
                {std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)), std::exp(1.0) / (std::exp(2.0) + std::exp(1.0))});
}

TEST(ClosedForm, RoutedScalingMultipliesTheFinalWeights) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f};
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.5) + std::exp(-1.0);
  const RouterFixture softmax(RouterScoring::kSoftmax, false, 16.0);
  ExpectRouting(softmax.Route(logits)[0], {1, 0}, {16.0 * std::exp(2.0) / z, 16.0 * std::exp(1.0) / z});
  const RouterFixture softmax_renormalised(RouterScoring::kSoftmax, true, 2.5);
  ExpectRouting(
      softmax_renormalised.Route(logits)[0], {1, 0},
      {2.5 * std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)), 2.5 * std::exp(1.0) / (std::exp(2.0) + std::exp(1.0))});
  const RouterFixture sigmoid(RouterScoring::kSigmoid, false, 2.5);
  ExpectRouting(sigmoid.Route(logits)[0], {1, 0}, {2.5 * Sig(2.0), 2.5 * Sig(1.0)});
}

TEST(ClosedForm, SigmoidRoutingSelectsWithTheCorrectionBiasButWeighsWithoutIt) {
  // DeepSeek-V3: scores sigmoid(logit); the bias only steers the choice.
  // Scores 0.73, 0.62, 0.38, 0.88; with the bias 0.73, 0.62, 1.38, -0.12:
  // experts 2 then 0 (without it, 3 then 0).
  const std::vector<float> logits = {1.0f, 0.5f, -0.5f, 2.0f};
  const std::vector<float> bias = {0.0f, 0.0f, 1.0f, -1.0f};
  const double s2 = Sig(-0.5), s0 = Sig(1.0);
  // Renormalised over the chosen experts' unbiased scores, then scaled.
  const RouterFixture v3(RouterScoring::kSigmoid, true, 2.5, bias);
  ExpectRouting(v3.Route(logits)[0], {2, 0}, {2.5 * s2 / (s2 + s0), 2.5 * s0 / (s2 + s0)});
  const RouterFixture raw(RouterScoring::kSigmoid, false, 1.0, bias);
  ExpectRouting(raw.Route(logits)[0], {2, 0}, {s2, s0});
  const RouterFixture unbiased(RouterScoring::kSigmoid, false, 1.0);
  ExpectRouting(unbiased.Route(logits)[0], {3, 0}, {Sig(2.0), s0});
}

TEST(ClosedForm, SqrtSoftplusRoutingWeighsBySqrtOfSoftplus) {
  // DeepSeek-V4: scores sqrt(log(1 + e^logit)); the bias steers the choice only.
  const std::vector<float> logits = {1.0f, 0.5f, -0.5f, 2.0f};
  const auto score = [](double l) { return std::sqrt(std::log1p(std::exp(l))); };
  const RouterFixture v4(RouterScoring::kSqrtSoftplus, true, 1.5, {0.0f, 0.0f, 1.0f, -1.0f});
  const double s2 = score(-0.5), s0 = score(1.0);
  ExpectRouting(v4.Route(logits)[0], {2, 0}, {1.5 * s2 / (s2 + s0), 1.5 * s0 / (s2 + s0)});
}

TEST(ClosedForm, GroupLimitedRoutingChoosesWithinTheGroupsWithTheBestTopTwoSum) {
  // DeepSeek-V3 (noaux_tc): two groups of two experts, one kept. Scores
  // sigmoid(2, -2, 0.5, 0.3) = 0.881, 0.119, 0.622, 0.574; with the bias the
  // choice scores are 0.881, 0.119, 0.822, 0.874. Group sums of the best two:
  // 1.0 and 1.696, so group 1: experts 3 then 2. Ungrouped the top two are 0, 3.
  const std::vector<float> logits = {2.0f, -2.0f, 0.5f, 0.3f};
  const std::vector<float> bias = {0.0f, 0.0f, 0.2f, 0.3f};
  const ExpertGroups one_of_two{.count = 2, .keep = 1, .score = GroupScore::kTopTwoSum};
  const double s3 = Sig(0.3), s2 = Sig(0.5);
  const RouterFixture v3(RouterScoring::kSigmoid, true, 2.5, bias, one_of_two, 1e-20);
  ExpectRouting(v3.Route(logits)[0], {3, 2}, {2.5 * s3 / (s3 + s2 + 1e-20), 2.5 * s2 / (s3 + s2 + 1e-20)});
  const RouterFixture ungrouped(RouterScoring::kSigmoid, true, 2.5, bias);
  ExpectRouting(ungrouped.Route(logits)[0], {0, 3}, {2.5 * Sig(2.0) / (Sig(2.0) + s3), 2.5 * s3 / (Sig(2.0) + s3)});
}

TEST(ClosedForm, GroupLimitedGreedyKeepsTheGroupsWithTheBestSingleExpert) {
  // DeepSeek-V2 (group_limited_greedy): softmax scores, a group scored by its
  // best expert. Logits 2, -3, 1.5, 1.4: group 0's best (e^2) beats group 1's
  // (e^1.5), though group 1's two sum higher; within group 0: experts 0, 1.
  const std::vector<float> logits = {2.0f, -3.0f, 1.5f, 1.4f};
  const double z = std::exp(2.0) + std::exp(-3.0) + std::exp(1.5) + std::exp(1.4);
  const RouterFixture v2(RouterScoring::kSoftmax, false, 16.0, {}, {.count = 2, .keep = 1, .score = GroupScore::kMax});
  ExpectRouting(v2.Route(logits)[0], {0, 1}, {16 * std::exp(2.0) / z, 16 * std::exp(-3.0) / z});
  const RouterFixture by_sum(RouterScoring::kSoftmax, false, 16.0, {},
                             {.count = 2, .keep = 1, .score = GroupScore::kTopTwoSum});
  ExpectRouting(by_sum.Route(logits)[0], {2, 3}, {16 * std::exp(1.5) / z, 16 * std::exp(1.4) / z});
}

TEST(ClosedForm, ExpertsOfDroppedGroupsCountAsZeroAsHuggingFaceMasksThem) {
  // DeepseekV3TopkRouter masks the dropped groups' choice scores to 0, not
  // -inf: with a bias of -1 every kept choice score is negative, so the
  // dropped group's zeros rank first (ties to the lower index) and weigh by
  // their unbiased scores. Choice scores: -0.5, -0.62, -0.38, -0.27 (group 1 kept).
  const std::vector<float> logits = {0.0f, -0.5f, 0.5f, 1.0f};
  const std::vector<float> bias = {-1.0f, -1.0f, -1.0f, -1.0f};
  const RouterFixture v3(RouterScoring::kSigmoid, false, 1.0, bias, {.count = 2, .keep = 1});
  ExpectRouting(v3.Route(logits)[0], {0, 1}, {Sig(0.0), Sig(-0.5)});
}

TEST(ClosedForm, RenormalisingAddsDeepseeksEpsilonToTheSum) {
  // sigmoid(-46) is about 1.05e-20: the 1e-20 Hugging Face adds to the
  // denominator takes a third of it, so each of two weights is s / (2 s + 1e-20).
  const std::vector<float> logits = {-46.0f, -46.0f, -50.0f, -50.0f};
  const double s = Sig(-46.0);
  const RouterFixture deepseek(RouterScoring::kSigmoid, true, 1.0, {}, {}, 1e-20);
  ExpectRouting(deepseek.Route(logits)[0], {0, 1}, {s / (2 * s + 1e-20), s / (2 * s + 1e-20)});
  const RouterFixture plain(RouterScoring::kSigmoid, true, 1.0);
  ExpectRouting(plain.Route(logits)[0], {0, 1}, {0.5, 0.5});
}

}  // namespace
}  // namespace seam::exec

namespace seam::exec {
namespace {

// Qwen3-Next's shared expert: silu(gate.x) * (up.x), projected down, then
// times sigmoid(x . shared_expert_gate), on both the TP-MoE path and a2a's.
// One intermediate unit is live: gate and up read x[0] and x[1], down
// spreads the unit to every column; the routed experts are zero.
TEST(ClosedForm, TheSharedExpertIsScaledBySigmoidOfItsGate) {
  Model model;
  model.name = "shared-gate";
  model.num_layers = 1;
  model.hidden = 4;
  model.dims = ModelDims{.vocab = 8,
                         .heads = 1,
                         .kv_heads = 1,
                         .head_dim = 4,
                         .rms_eps = 0.0,
                         .experts = 4,
                         .moe_intermediate = 8,
                         .shared_intermediate = 8,
                         .shared_expert_gate = true};
  const StageRef stage{.index = 0, .layer = 0, .slot = 0, .decl = SparseFfnStage({.top_k = 2})};
  const std::string p = "model.layers.0.mlp";
  std::map<std::string, Tensor> t;
  t[p + ".gate.weight"] = Identity(4);
  for (int e = 0; e < 4; ++e) {
    const std::string x = p + ".experts." + std::to_string(e);
    t[x + ".gate_proj.weight"] = Tensor(8, 4);
    t[x + ".up_proj.weight"] = Tensor(8, 4);
    t[x + ".down_proj.weight"] = Tensor(4, 8);
  }
  Tensor gate(8, 4), up(8, 4), down(4, 8);
  gate.at(0, 0) = 1.0f;
  up.at(0, 1) = 1.0f;
  for (int c = 0; c < 4; ++c) down.at(c, 0) = 1.0f;
  t[p + ".shared_expert.gate_proj.weight"] = gate;
  t[p + ".shared_expert.up_proj.weight"] = up;
  t[p + ".shared_expert.down_proj.weight"] = down;
  t[p + ".shared_expert_gate.weight"] = Row({0.5f, -1.0f, 0.25f, 2.0f});
  const Weights weights(std::move(t));
  const std::vector<float> x = {0.75f, -1.5f, 0.5f, 0.25f};
  const double silu = x[0] * Sig(x[0]);
  const double g = Sig(0.5 * x[0] - 1.0 * x[1] + 0.25 * x[2] + 2.0 * x[3]);
  const double want = silu * x[1] * g;
  for (MoeMode mode : {MoeMode::kTp, MoeMode::kA2a}) {
    const MoeKernel k(stage, model, weights, Shard{}, mode, RunNumerics{});
    const Tensor out = mode == MoeMode::kTp ? k.TpPartial(Row(x)) : k.Shared(Row(x));
    for (int c = 0; c < 4; ++c) ExpectRel(out.at(0, c), want, std::string(Name(mode)) + " column " + std::to_string(c));
  }
}

}  // namespace
}  // namespace seam::exec

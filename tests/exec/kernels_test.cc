// The row-wise kernels: fixed summation orders, storage rounding, routing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "seam/runtime/kernels.h"
#include "seam/runtime/tensor.h"

namespace seam {
namespace {

Tensor Rows(int rows, int cols, float scale) {
  Tensor t(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) t.at(r, c) = scale * static_cast<float>((r * 31 + c * 17) % 23 - 11);
  }
  return t;
}

TEST(Bf16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(RoundBf16(1.0f), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(RoundBf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
  EXPECT_EQ(RoundBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(RoundBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_TRUE(std::isnan(RoundBf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(RoundBf16(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(FromBf16Bits(Bf16Bits(-2.5f)), -2.5f);
}

TEST(Dot, SumsInEightLanesThenAFixedTree) {
  // Element k lands in lane k % 8; lanes sum as ((0+1)+(2+3))+((4+5)+(6+7)).
  float a[9], b[9];
  for (int k = 0; k < 9; ++k) {
    a[k] = 1.0f;
    b[k] = k == 0 ? 1e8f : (k == 8 ? -1e8f : 1.0f);
  }
  // Lane 0 holds 1e8 + (-1e8) = 0; the others 1 each: 7.
  EXPECT_EQ(Dot(a, b, 9), 7.0f);
}

TEST(RmsNorm, ARowsResultDoesNotDependOnTheOtherRows) {
  const Tensor x = Rows(6, 64, 0.01f);
  std::vector<float> w(64, 1.03f);
  const Tensor all = RmsNorm(x, w, 1e-5f, Dtype::kF32);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(RmsNorm(x.RowRange(r, r + 1), w, 1e-5f, Dtype::kF32), all.RowRange(r, r + 1));
}

TEST(RmsNorm, NormalisesEachRowToUnitRootMeanSquare) {
  const Tensor x = Rows(2, 64, 0.3f);
  const Tensor y = RmsNorm(x, std::vector<float>(64, 1.0f), 0.0f, Dtype::kF32);
  for (int r = 0; r < 2; ++r) {
    double ms = 0;
    for (int c = 0; c < 64; ++c) ms += y.at(r, c) * y.at(r, c);
    EXPECT_NEAR(ms / 64, 1.0, 1e-5);
  }
}

TEST(RmsNorm, Bf16StorageRoundsEveryOutput) {
  const Tensor y = RmsNorm(Rows(3, 16, 0.1f), std::vector<float>(16, 0.9f), 1e-6f, Dtype::kBf16);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(RoundBf16(y.data()[i]), y.data()[i]);
}

TEST(Add, RoundsTheSumOnce) {
  Tensor a(1, 1), b(1, 1);
  a.at(0, 0) = 1.0f;
  b.at(0, 0) = std::ldexp(1.0f, -9);
  EXPECT_EQ(Add(a, b, Dtype::kF32).at(0, 0), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(Add(a, b, Dtype::kBf16).at(0, 0), 1.0f);
}

TEST(ApplyRope, PositionZeroLeavesTheRowAndOthersRotateByTheirAngle) {
  Tensor x(2, 4);
  for (int c = 0; c < 4; ++c) x.at(0, c) = x.at(1, c) = static_cast<float>(c + 1);
  const int positions[] = {0, 1};
  ApplyRope(x, 1, 4, 4, positions, RopeParams{}, Dtype::kF32);
  EXPECT_EQ(x.at(0, 0), 1.0f);
  EXPECT_EQ(x.at(0, 2), 3.0f);
  // Pair (x0, x2) at position 1 with inverse frequency 1: rotated by 1 radian.
  EXPECT_NEAR(x.at(1, 0), 1 * std::cos(1.0) - 3 * std::sin(1.0), 1e-6);
  EXPECT_NEAR(x.at(1, 2), 3 * std::cos(1.0) + 1 * std::sin(1.0), 1e-6);
}

TEST(AttendRow, OneKeyReturnsItsValueAndEqualScoresAverage) {
  const float q[2] = {1, 0};
  const float k0[2] = {0, 1}, k1[2] = {0, 2};
  const float v0[2] = {4, 8}, v1[2] = {2, 6};
  const float* keys[] = {k0, k1};
  const float* values[] = {v0, v1};
  float out[2];
  AttendRow(q, keys, values, 1, 2, 2, 1.0f, nullptr, 0, out);
  EXPECT_EQ(out[0], 4.0f);
  AttendRow(q, keys, values, 2, 2, 2, 1.0f, nullptr, 0, out);  // q.k = 0 for both: weights 1/2 each
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 7.0f);
}

TEST(ApplyRope, PartialRotaryLeavesTheTailOfEachHeadAlone) {
  Tensor x(1, 12);  // two heads of 6, rotary on the first 4 of each
  for (int c = 0; c < 12; ++c) x.at(0, c) = static_cast<float>(c + 1);
  const int positions[] = {3};
  ApplyRope(x, 2, 6, 4, positions, RopeParams{}, Dtype::kF32);
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(x.at(0, h * 6 + 4), static_cast<float>(h * 6 + 5));
    EXPECT_EQ(x.at(0, h * 6 + 5), static_cast<float>(h * 6 + 6));
    // Pair (x0, x2) of the 4-dim rotary part has inverse frequency 1.
    const double a = h * 6 + 1, b = h * 6 + 3;
    EXPECT_NEAR(x.at(0, h * 6), a * std::cos(3.0) - b * std::sin(3.0), 1e-5);
  }
}

TEST(ApplyRope, Llama3ScalingSlowsOnlyTheLowFrequencies) {
  // head_dim 8, theta 10000: inverse frequencies 1, 0.1, 0.01, 0.001, i.e.
  // wavelengths 6.3, 63, 628, 6283. With 64 original positions, factors
  // 1 (low) and 4 (high): wavelengths over 64 are slowed by `factor`,
  // under 16 kept, between blended.
  RopeParams p;
  p.scaling = RopeScaling{8.0, 1.0, 4.0, 64};
  Tensor plain(1, 8), scaled(1, 8);
  for (int c = 0; c < 8; ++c) plain.at(0, c) = scaled.at(0, c) = static_cast<float>(c % 3 + 1);
  const int positions[] = {5};
  ApplyRope(plain, 1, 8, 8, positions, RopeParams{}, Dtype::kF32);
  ApplyRope(scaled, 1, 8, 8, positions, p, Dtype::kF32);
  EXPECT_EQ(scaled.at(0, 0), plain.at(0, 0));  // wavelength 6.3: kept
  // Pair 2 (wavelength 628 > 64): inverse frequency 0.01 / 8.
  const double x2 = 3, x6 = 1, angle = 5 * 0.01 / 8;
  EXPECT_NEAR(scaled.at(0, 2), x2 * std::cos(angle) - x6 * std::sin(angle), 1e-6);
  // Pair 1 (wavelength 62.8, between 16 and 64): blended, between the two.
  const double smooth = (64 / (2 * 3.14159265358979323846 / 0.1) - 1) / 3;
  const double blended = 5 * ((1 - smooth) * 0.1 / 8 + smooth * 0.1);
  const double x1 = 2, x5 = 3;
  EXPECT_NEAR(scaled.at(0, 1), x1 * std::cos(blended) - x5 * std::sin(blended), 1e-6);
}

TEST(AttendRow, ASinkTakesWeightAndAddsNoValue) {
  const float q[2] = {0, 0};
  const float k0[2] = {1, 1};
  const float v0[2] = {6, -6};
  const float* keys[] = {k0};
  const float* values[] = {v0};
  const float sink = 0.0f;  // the same logit as the one key: half the weight
  float out[2];
  AttendRow(q, keys, values, 1, 2, 2, 1.0f, &sink, 0, out);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], -3.0f);
}

// For every n dividing the class count, the classes r, r + n, ... sit
// together in an aligned block of the leaf order: a rank holding the keys
// at positions r mod n holds one subtree of the merge.
TEST(AttendRow, TheClassesOfEachResidueAreOneAlignedSubtreeOfTheMerge) {
  const std::span<const int> order = KeyClassOrder();
  ASSERT_EQ(order.size(), static_cast<size_t>(kKeyClasses));
  for (int n = 1; n <= kKeyClasses; n *= 2) {
    const size_t block = static_cast<size_t>(kKeyClasses / n);
    for (size_t at = 0; at < order.size(); at += block) {
      for (size_t i = at; i < at + block; ++i) {
        EXPECT_EQ(order[i] % n, order[at] % n) << "n " << n << " leaf " << i;
      }
    }
  }
}

// The output is each class's partial over its keys in position order,
// merged by the tree over KeyClassOrder() (stated here apart from the
// kernel), then divided by the sum: the same bits, and within rounding of
// a double-precision softmax.
TEST(AttendRow, KeysSumByClassOfPositionAndMergeByTheCanonicalTree) {
  constexpr int kCount = 21, kDim = 4, kFirst = 5;
  std::vector<std::vector<float>> k(kCount, std::vector<float>(kDim)), v(kCount, std::vector<float>(kDim));
  std::vector<const float*> keys, values;
  for (int j = 0; j < kCount; ++j) {
    for (int c = 0; c < kDim; ++c) {
      k[j][c] = std::sin(1.3f * static_cast<float>(j * kDim + c));
      v[j][c] = std::cos(0.7f * static_cast<float>(j * kDim + c));
    }
    keys.push_back(k[j].data());
    values.push_back(v[j].data());
  }
  const float q[kDim] = {0.9f, -1.7f, 2.3f, 0.4f};
  float out[kDim];
  AttendRow(q, keys.data(), values.data(), kCount, kDim, kDim, 0.8f, nullptr, kFirst, out);
  // The tree, by hand: one partial per class, then pairs of leaves.
  std::vector<AttentionPartial> leaf(kKeyClasses);
  for (int j = 0; j < kCount; ++j) {
    AttentionPartial& p = leaf[static_cast<size_t>((kFirst + j) % kKeyClasses)];
    p.max = std::max(p.max, Dot(q, k[j].data(), kDim) * 0.8f);  // the scores as the kernels take them
  }
  for (AttentionPartial& p : leaf) p.acc.assign(kDim, 0.0f);
  for (int j = 0; j < kCount; ++j) {
    AttentionPartial& p = leaf[static_cast<size_t>((kFirst + j) % kKeyClasses)];
    const float e = std::exp(Dot(q, k[j].data(), kDim) * 0.8f - p.max);
    p.sum += e;
    for (int c = 0; c < kDim; ++c) p.acc[c] += e * v[j][c];
  }
  const auto at = [&](int i) { return leaf[static_cast<size_t>(i)]; };
  const AttentionPartial root = MergePartials(MergePartials(MergePartials(at(0), at(4)), MergePartials(at(2), at(6))),
                                              MergePartials(MergePartials(at(1), at(5)), MergePartials(at(3), at(7))));
  double top = -1e300, total = 0, want[kDim] = {0, 0, 0, 0};
  std::vector<double> score(kCount);
  for (int j = 0; j < kCount; ++j) {
    for (int c = 0; c < kDim; ++c) score[j] += double{q[c]} * k[j][c];
    score[j] *= 0.8;
    top = std::max(top, score[j]);
  }
  for (int j = 0; j < kCount; ++j) {
    total += std::exp(score[j] - top);
    for (int c = 0; c < kDim; ++c) want[c] += std::exp(score[j] - top) * v[j][c];
  }
  for (int c = 0; c < kDim; ++c) {
    EXPECT_EQ(out[c], root.acc[static_cast<size_t>(c)] / root.sum) << c;
    EXPECT_NEAR(out[c], want[c] / total, 1e-6) << c;
  }
  // Another order of the same merges gives other bits somewhere: the order is a fact of the result.
  const AttentionPartial natural =
      MergePartials(MergePartials(MergePartials(at(0), at(1)), MergePartials(at(2), at(3))),
                    MergePartials(MergePartials(at(4), at(5)), MergePartials(at(6), at(7))));
  bool differs = false;
  for (int c = 0; c < kDim; ++c) differs = differs || out[c] != natural.acc[static_cast<size_t>(c)] / natural.sum;
  EXPECT_TRUE(differs) << "these keys cannot tell the merge orders apart; pick others";
}

// Decode context parallelism: n ranks each hold the keys at positions
// r mod n, make their partial, and the partials merge along the top of the
// tree: the same bits as one rank attending every key, sink or none, for
// every DCP size and wherever the window starts. Merging the ranks'
// partials in rank order instead gives other bits for some of these keys.
TEST(AttendPartial, RanksHoldingPositionsModNMergeToTheBitsOfOneRank) {
  constexpr int kDim = 3;
  bool rank_order_differs = false;
  for (int count : {1, 2, 7, 19, 40}) {
    for (int first : {0, 3, 6}) {
      std::vector<std::vector<float>> k(count, std::vector<float>(kDim)), v(count, std::vector<float>(kDim));
      std::vector<const float*> keys, values;
      for (int j = 0; j < count; ++j) {
        for (int c = 0; c < kDim; ++c) {
          k[j][c] = std::sin(0.37f * static_cast<float>((first + j) * kDim + c) + 0.1f * static_cast<float>(count));
          v[j][c] = std::cos(1.9f * static_cast<float>((first + j) * kDim + c));
        }
        keys.push_back(k[j].data());
        values.push_back(v[j].data());
      }
      const float q[kDim] = {2.1f, -1.3f, 3.7f};
      const float sink = 0.25f;
      for (const float* s : {static_cast<const float*>(nullptr), &sink}) {
        float whole[kDim];
        AttendRow(q, keys.data(), values.data(), count, kDim, kDim, 0.9f, s, first, whole);
        for (int n : {2, 4, 8}) {
          std::vector<AttentionPartial> by_rank;
          for (int r = 0; r < n; ++r) {
            std::vector<const float*> mine_k, mine_v;
            int mine_first = r;  // the rank's first position in the window, or any of its residue
            for (int j = 0; j < count; ++j) {
              if ((first + j) % n != r) continue;
              if (mine_k.empty()) mine_first = first + j;
              mine_k.push_back(keys[j]);
              mine_v.push_back(values[j]);
            }
            by_rank.push_back(AttendPartial(q, mine_k.data(), mine_v.data(), static_cast<int>(mine_k.size()), kDim,
                                            kDim, 0.9f, mine_first, n));
          }
          std::vector<AttentionPartial> in_rank_order = by_rank;
          float merged[kDim];
          MergeRanks(by_rank, kDim, s, merged);
          for (int c = 0; c < kDim; ++c) {
            EXPECT_EQ(merged[c], whole[c]) << "count " << count << " first " << first << " n " << n << " c " << c;
          }
          AttentionPartial naive = in_rank_order[0];
          for (int r = 1; r < n; ++r) naive = MergePartials(naive, in_rank_order[static_cast<size_t>(r)]);
          for (int c = 0; c < kDim && naive.sum > 0; ++c) {
            rank_order_differs = rank_order_differs || naive.acc[static_cast<size_t>(c)] / naive.sum != whole[c];
          }
        }
      }
    }
  }
  EXPECT_TRUE(rank_order_differs) << "these keys cannot tell a rank-order merge apart; pick others";
}

TEST(AttendRow, ValuesMayBeNarrowerThanKeys) {
  // MLA: keys carry a rotary part the values do not.
  const float q[3] = {1, 0, 0};
  const float k0[3] = {0, 0, 1};
  const float v0[1] = {5};
  const float* keys[] = {k0};
  const float* values[] = {v0};
  float out[1];
  AttendRow(q, keys, values, 1, 3, 1, 0.5f, nullptr, 0, out);
  EXPECT_EQ(out[0], 5.0f);
}

TEST(ClampedSwiGlu, ClampsGateAboveAndUpBothWaysThenGates) {
  Tensor gate(1, 3), up(1, 3), out;
  const float g[] = {0.5f, 9.0f, -9.0f}, u[] = {2.0f, -9.0f, 9.0f};
  for (int c = 0; c < 3; ++c) gate.at(0, c) = g[c], up.at(0, c) = u[c];
  ClampedSwiGlu(gate, up, 7.0f, Dtype::kF32, out);
  const auto glu = [](float x) { return x / (1.0f + std::exp(-1.702f * x)); };
  EXPECT_NEAR(out.at(0, 0), (2.0f + 1.0f) * glu(0.5f), 1e-6);
  EXPECT_NEAR(out.at(0, 1), (-7.0f + 1.0f) * glu(7.0f), 1e-5);  // both clamped
  EXPECT_NEAR(out.at(0, 2), (7.0f + 1.0f) * glu(-9.0f), 1e-6);  // the gate has no lower clamp
}

TEST(Sigmoid, IsOneOverOnePlusExpOfMinusX) {
  EXPECT_EQ(Sigmoid(0.0f), 0.5f);
  EXPECT_NEAR(Sigmoid(2.0f), 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
  EXPECT_NEAR(Sigmoid(-30.0f), 0.0, 1e-12);
}

TEST(TopK, PicksTheLargestWithTiesToTheLowerIndexAndRenormalises) {
  const float probs[] = {0.1f, 0.3f, 0.3f, 0.2f, 0.1f};
  const Routing r = TopK(probs, 5, 3, true);
  EXPECT_EQ(r.experts, (std::vector<int>{1, 2, 3}));
  EXPECT_FLOAT_EQ(r.weights[0] + r.weights[1] + r.weights[2], 1.0f);
  const Routing raw = TopK(probs, 5, 2, false);
  EXPECT_EQ(raw.weights, (std::vector<float>{0.3f, 0.3f}));
}

TEST(Softmax, SumsToOne) {
  const float logits[] = {1.0f, -2.0f, 0.5f, 3.0f};
  float p[4];
  Softmax(logits, 4, p);
  EXPECT_NEAR(p[0] + p[1] + p[2] + p[3], 1.0f, 1e-6);
  EXPECT_GT(p[3], p[0]);
}

}  // namespace
}  // namespace seam

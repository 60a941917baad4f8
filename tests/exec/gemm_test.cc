// Gemm's guarantee is bit-exactness: one fixed accumulation order per output
// element, so rows, columns, shards and K-blocks all reproduce the same bits.
#include "seam/runtime/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "seam/error.h"
#include "seam/runtime/tensor.h"

// The test's own statement of the contract must not be contracted either.
#pragma GCC optimize("fp-contract=off")

#include "tensor/gemm_internal.h"

namespace seam {
namespace {

using gemm_internal::GemmOn;
using gemm_internal::Path;

// Values in [-0.05, 0.05) on a grid of 2^24, from an integer hash of
// (seed, row, col): in practice every element of a tensor differs.
float Value(uint32_t seed, int r, int c) {
  uint32_t h = seed * 0x9e3779b9u ^ static_cast<uint32_t>(r) * 0x85ebca6bu ^ static_cast<uint32_t>(c) * 0xc2b2ae35u;
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return (static_cast<float>(h >> 8) / 16777216.0f - 0.5f) * 0.1f;
}

Tensor Make(int rows, int cols, uint32_t seed) {
  Tensor t(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) t.at(r, c) = Value(seed, r, c);
  }
  return t;
}

// The contract as the header states it, one element at a time.
float ContractDot(const float* x, const float* w, int k) {
  float lane[8] = {};
  for (int i = 0; i < k; ++i) lane[i % 8] = lane[i % 8] + x[i] * w[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

Tensor ContractGemm(const Tensor& x, const Tensor& w) {
  Tensor y(x.rows(), w.rows());
  for (int m = 0; m < x.rows(); ++m) {
    for (int n = 0; n < w.rows(); ++n) y.at(m, n) = ContractDot(x.row(m), w.row(n), x.cols());
  }
  return y;
}

std::vector<Path> Paths() {
  std::vector<Path> paths;
  for (Path p : {Path::kReference, Path::kPortable, Path::kAvx2, Path::kAvx512}) {
    if (gemm_internal::Supported(p)) paths.push_back(p);
  }
  return paths;
}

const char* Name(Path p) {
  switch (p) {
    case Path::kReference: return "reference";
    case Path::kPortable: return "portable";
    case Path::kAvx2: return "avx2";
    case Path::kAvx512: return "avx512";
  }
  return "?";
}

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Rows of `t` in the given order.
Tensor PickRows(const Tensor& t, const std::vector<int>& rows) {
  Tensor out(static_cast<int>(rows.size()), t.cols());
  for (size_t i = 0; i < rows.size(); ++i) std::copy_n(t.row(rows[i]), t.cols(), out.row(static_cast<int>(i)));
  return out;
}

// Shapes around the tile and block edges: K below, at and past multiples of
// 8 and of the K-block (512), M and N not multiples of any tile, and past
// the row blocks (64 or 96 rows of x, 48 to 100 of w).
struct Shape {
  int m, n, k;
};
const Shape kShapes[] = {{1, 1, 1},     {1, 5, 7},     {3, 2, 8},      {5, 7, 9},    {7, 13, 15},
                         {4, 3, 16},    {9, 10, 17},   {2, 50, 63},    {13, 1, 100}, {17, 23, 513},
                         {6, 97, 1031}, {100, 70, 40}, {101, 205, 530}};

TEST(Gemm, EveryElementFollowsTheContractOrderBitForBit) {
  for (const Shape& s : kShapes) {
    const Tensor x = Make(s.m, s.k, 1), w = Make(s.n, s.k, 2);
    const Tensor want = ContractGemm(x, w);
    EXPECT_TRUE(Gemm(x, w) == want) << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(Gemm, EveryCodePathGivesTheSameBits) {
  ASSERT_GE(Paths().size(), 2u);
  std::string checked;
  for (Path p : Paths()) checked += std::string(checked.empty() ? "" : ",") + Name(p);
  RecordProperty("paths", checked);  // in --gtest_output=xml
  for (const Shape& s : kShapes) {
    const Tensor x = Make(s.m, s.k, 3), w = Make(s.n, s.k, 4);
    const Tensor want = ContractGemm(x, w);
    for (Path p : Paths()) EXPECT_TRUE(GemmOn(p, x, w) == want) << Name(p) << " " << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(Gemm, ARowsBitsDoNotDependOnTheOtherRowsInTheCall) {
  const Tensor x = Make(37, 203, 7), w = Make(29, 203, 8);
  const Tensor whole = Gemm(x, w);
  // Reversed, and every row at a different position among different rows.
  std::vector<int> reversed;
  for (int r = x.rows() - 1; r >= 0; --r) reversed.push_back(r);
  const Tensor y = Gemm(PickRows(x, reversed), w);
  for (int i = 0; i < x.rows(); ++i) {
    for (int n = 0; n < w.rows(); ++n) ASSERT_EQ(Bits(y.at(i, n)), Bits(whole.at(reversed[size_t(i)], n)));
  }
  // Row ranges of every size starting everywhere.
  for (int begin = 0; begin < x.rows(); begin += 5) {
    for (int end = begin + 1; end <= x.rows(); end += 7) {
      EXPECT_TRUE(Gemm(x.RowRange(begin, end), w) == whole.RowRange(begin, end)) << begin << ".." << end;
    }
  }
}

TEST(Gemm, SingleRowEqualsTheSameRowInABatch) {
  const Tensor x = Make(64, 300, 9), w = Make(40, 300, 10);
  const Tensor batch = Gemm(x, w);
  for (int m = 0; m < x.rows(); ++m) EXPECT_TRUE(Gemm(x.RowRange(m, m + 1), w) == batch.RowRange(m, m + 1)) << m;
}

TEST(Gemm, AColumnsBitsDoNotDependOnItsPositionInW) {
  const Tensor x = Make(11, 130, 11), w = Make(31, 130, 12);
  const Tensor whole = Gemm(x, w);
  std::vector<int> order;  // a stride-7 permutation of 31 rows
  for (int i = 0; i < w.rows(); ++i) order.push_back(i * 7 % w.rows());
  const Tensor picked = PickRows(w, order);
  const Tensor y = Gemm(x, picked);
  for (int m = 0; m < x.rows(); ++m) {
    for (size_t j = 0; j < order.size(); ++j) ASSERT_EQ(Bits(y.at(m, int(j))), Bits(whole.at(m, order[j])));
  }
}

TEST(Gemm, ColumnShardsEqualTheWholeProduct) {
  const Tensor x = Make(21, 257, 13), w = Make(100, 257, 14);
  const Tensor whole = Gemm(x, w);
  // Even shards and uneven ones (1, 2, 3, ... columns).
  for (int shards : {2, 4, 5}) {
    const int width = w.rows() / shards;
    for (int s = 0; s < shards; ++s) {
      EXPECT_TRUE(Gemm(x, MatrixView(w).Rows(s * width, (s + 1) * width)) ==
                  whole.ColRange(s * width, (s + 1) * width));
    }
  }
  for (int begin = 0, width = 1; begin < w.rows(); begin += width, ++width) {
    const int end = std::min(begin + width, w.rows());
    EXPECT_TRUE(Gemm(x, MatrixView(w).Rows(begin, end)) == whole.ColRange(begin, end)) << begin << ".." << end;
  }
}

TEST(Gemm, MatchesAPlainDoubleProductWithinRounding) {
  const Tensor x = Make(33, 1000, 15), w = Make(45, 1000, 16);
  const Tensor y = Gemm(x, w);
  // Each lane adds K/8 rounded products, then three levels of sums: the error
  // is within (K/8 + 1 + 3) units of 2^-24 times the sum of |x*w|.
  const double units = x.cols() / 8 + 4;
  for (int m = 0; m < x.rows(); ++m) {
    for (int n = 0; n < w.rows(); ++n) {
      double exact = 0, magnitude = 0;
      for (int k = 0; k < x.cols(); ++k) {
        exact += double(x.at(m, k)) * double(w.at(n, k));
        magnitude += std::fabs(double(x.at(m, k)) * double(w.at(n, k)));
      }
      ASSERT_NEAR(y.at(m, n), exact, units * std::ldexp(magnitude, -24)) << m << "," << n;
    }
  }
}

TEST(Gemm, NoFusedMultiplyAdd) {
  // K = 9: lane 0 holds x0*w0 = -(1 + 2^-11), then adds x8*w8 = (1 + 2^-12)^2
  // = 1 + 2^-11 + 2^-24, which rounds to 1 + 2^-11 (a tie, to even): the sum
  // is 0. A fused multiply-add would keep the 2^-24.
  Tensor x(1, 9), w(1, 9);
  x.at(0, 0) = -(1.0f + std::ldexp(1.0f, -11));
  w.at(0, 0) = 1.0f;
  x.at(0, 8) = w.at(0, 8) = 1.0f + std::ldexp(1.0f, -12);
  for (Path p : Paths()) EXPECT_EQ(Bits(GemmOn(p, x, w).at(0, 0)), 0u) << Name(p);
  EXPECT_EQ(Bits(Gemm(x, w).at(0, 0)), 0u);
}

TEST(Gemm, LanesSumInTheFixedTreeNotInSequence) {
  // Lane j holds the product at k = j. The tree ((l0+l1)+(l2+l3))+(...) gives
  // (1 + 2^-23) + 0 here, while a running sum 1 + 2^-24 + 2^-24 stays 1.
  Tensor x(1, 8), w(1, 8);
  for (int k = 0; k < 8; ++k) w.at(0, k) = 1.0f;
  x.at(0, 0) = 1.0f;
  x.at(0, 2) = std::ldexp(1.0f, -24);
  x.at(0, 3) = std::ldexp(1.0f, -24);
  for (Path p : Paths()) EXPECT_EQ(GemmOn(p, x, w).at(0, 0), 1.0f + std::ldexp(1.0f, -23)) << Name(p);
}

TEST(Gemm, TailElementsGoToTheFirstLanesOfOneMoreStep) {
  // K = 9: k = 8 joins lane 0, where 1 + 2^-24 rounds back to 1 (a tie, to
  // even), and lane 4 holds 2^-24: the sum is 1. Had the tail gone to lane 7
  // instead, the right half would be 2^-24 + 2^-24 and the sum 1 + 2^-23.
  Tensor x(1, 9), w(1, 9);
  for (int k = 0; k < 9; ++k) w.at(0, k) = 1.0f;
  const float tiny = std::ldexp(1.0f, -24);
  x.at(0, 0) = 1.0f;
  x.at(0, 4) = tiny;
  x.at(0, 8) = tiny;
  ASSERT_EQ(ContractDot(x.row(0), w.row(0), 9), 1.0f);
  ASSERT_EQ(1.0f + (tiny + tiny), 1.0f + 2 * tiny);  // the lane-7 reading differs
  for (Path p : Paths()) EXPECT_EQ(Bits(GemmOn(p, x, w).at(0, 0)), Bits(1.0f)) << Name(p);
}

TEST(Gemm, AccumulationStartsFromPositiveZero) {
  // Every product is -0 (x = -0, w > 0) and +0 + -0 = +0, so every element
  // is +0; lanes that started from the first product would stay -0.
  Tensor x(3, 11), w = Make(5, 11, 17);
  for (float& v : x.span()) v = -0.0f;
  for (float& v : w.span()) v = 0.5f + std::fabs(v);
  for (Path p : Paths()) {
    const Tensor y = GemmOn(p, x, w);
    for (float v : y.span()) EXPECT_EQ(Bits(v), 0u) << Name(p);
  }
}

TEST(Gemm, OddShapes) {
  const Tensor w = Make(6, 19, 18), no_rows(0, 19), no_k(5, 0);
  for (Path p : Paths()) {
    const Tensor none = GemmOn(p, Tensor(0, 19), w);  // M = 0
    EXPECT_EQ(none.rows(), 0);
    EXPECT_EQ(none.cols(), 6);
    const Tensor no_cols = GemmOn(p, Make(4, 19, 19), no_rows);  // N = 0
    EXPECT_EQ(no_cols.rows(), 4);
    EXPECT_EQ(no_cols.cols(), 0);
    const Tensor zero_k = GemmOn(p, Tensor(3, 0), no_k);  // K = 0: +0, though the output starts unset
    EXPECT_TRUE(zero_k == Tensor(3, 5)) << Name(p);
    const Tensor x = Make(7, 19, 20);
    const Tensor one_col = GemmOn(p, x, MatrixView(w).Rows(2, 3));  // N = 1
    EXPECT_TRUE(one_col == ContractGemm(x, w.RowRange(2, 3))) << Name(p);
  }
}

TEST(Gemm, DifferentKFailsTheCheck) {
  const Tensor w(3, 9);
  EXPECT_THROW(Gemm(Tensor(2, 8), w), InternalError);
  EXPECT_THROW(Gemm(Tensor(2, 8), MatrixView(w).Cols(0, 7)), InternalError);
}

// A kernel reads its shard of a weight in place: a window of rows, of
// columns (rows a whole weight's width apart) or both must give the bits of
// the same product on a copy of the window, on every code path, for shapes
// with K tails and edge tiles.
TEST(Gemm, AWindowOnAWeightGivesTheBitsOfItsCopy) {
  const Tensor w = Make(37, 203, 30);
  const MatrixView whole(w);
  const std::vector<MatrixView> windows = {whole.Rows(5, 29), whole.Cols(0, 101), whole.Cols(37, 203),
                                           whole.Rows(3, 36).Cols(11, 150), whole.Cols(64, 128).Rows(0, 1)};
  for (const MatrixView& v : windows) {
    const Tensor copy = v.Copy();
    const Tensor x = Make(9, v.cols(), 31);
    for (Path p : Paths()) {
      EXPECT_TRUE(GemmOn(p, x, v) == ContractGemm(x, copy)) << Name(p) << " " << v.rows() << "x" << v.cols();
    }
    EXPECT_TRUE(Gemm(x.RowRange(0, 1), v) == ContractGemm(x.RowRange(0, 1), copy));
  }
}

TEST(GemmStacked, GivesTheBitsOfTheProductWithThePartsStacked) {
  const Tensor x = Make(13, 70, 32), w = Make(40, 70, 33);
  const MatrixView whole(w);
  const std::vector<MatrixView> parts = {whole.Rows(30, 34), whole.Rows(0, 7), whole.Rows(7, 7), whole.Rows(12, 40)};
  std::vector<Tensor> copies;
  for (const MatrixView& v : parts) copies.push_back(v.Copy());
  const Tensor stacked = ConcatRows(copies);
  EXPECT_TRUE(GemmStacked(x, parts) == ContractGemm(x, stacked));
  EXPECT_TRUE(GemmStacked(x.RowRange(0, 1), parts) == ContractGemm(x.RowRange(0, 1), stacked));
  EXPECT_EQ(GemmStacked(x, {}).cols(), 0);
}

// A weight of bf16 values kept as their 16-bit halves, with the tensor of
// the same values as floats.
struct HalvesOf {
  Tensor floats;
  std::vector<uint16_t> bits;
  MatrixView view() const { return MatrixView::Bf16(bits.data(), floats.rows(), floats.cols(), floats.cols()); }
};
HalvesOf Halves(int rows, int cols, uint32_t seed) {
  HalvesOf h{Make(rows, cols, seed), {}};
  RoundToStorage(h.floats, Dtype::kBf16);
  for (float v : h.floats.span()) h.bits.push_back(Bf16Bits(v));
  return h;
}

// Widening a bf16 value is exact, so a weight held in 16 bits gives the bits
// of the same values held as floats: on every code path, through several
// K-blocks (K past 512 with a tail) and row blocks of x and w, and for
// windows of it read in place.
TEST(Gemm, AWeightOfBf16HalvesGivesTheBitsOfItsValuesAsFloats) {
  const HalvesOf w = Halves(107, 1100, 40);
  const MatrixView half = w.view(), whole(w.floats);
  const std::vector<std::pair<MatrixView, MatrixView>> windows = {
      {half, whole},
      {half.Rows(5, 29), whole.Rows(5, 29)},
      {half.Cols(37, 1100), whole.Cols(37, 1100)},
      {half.Rows(3, 106).Cols(11, 650), whole.Rows(3, 106).Cols(11, 650)}};
  for (const auto& [h, f] : windows) {
    ASSERT_EQ(h.storage(), Dtype::kBf16);
    const Tensor copy = h.Copy();
    ASSERT_TRUE(copy == f.Copy());
    for (int m : {1, 2, 9, 100}) {
      const Tensor x = Make(m, h.cols(), 41);
      for (Path p : Paths()) {
        EXPECT_TRUE(GemmOn(p, x, h) == ContractGemm(x, copy))
            << Name(p) << " " << m << " x " << h.rows() << "x" << h.cols();
      }
      EXPECT_TRUE(Gemm(x, h) == Gemm(x, f)) << m;
    }
  }
  const Tensor x = Make(10, 1100, 42);
  const std::vector<MatrixView> parts = {half.Rows(30, 34), half.Rows(0, 7), half.Rows(60, 107)};
  const std::vector<MatrixView> float_parts = {whole.Rows(30, 34), whole.Rows(0, 7), whole.Rows(60, 107)};
  EXPECT_TRUE(GemmStacked(x, parts) == GemmStacked(x, float_parts));
  const std::vector<Tensor> blocks = GemmBlocks(x, half, 4), float_blocks = GemmBlocks(x, whole, 4);
  ASSERT_EQ(blocks.size(), float_blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) EXPECT_TRUE(blocks[b] == float_blocks[b]) << b;
}

// One row of x takes a path of its own (whole rows of w at a time over the
// whole K, no packing): every number of rows of w around its tiles (whole
// tiles and every edge), K with and without a tail, w as floats and as
// bf16 halves, whole or a window of a wider weight, on every code path.
TEST(Gemm, OneRowGivesTheContractsBitsForEveryEdgeOfItsTilesAndEveryKTail) {
  for (int k : {1, 7, 8, 9, 16, 515, 1031}) {
    const HalvesOf wide = Halves(40, k + 5, 50 + static_cast<uint32_t>(k));
    const Tensor x = Make(1, k, 51 + static_cast<uint32_t>(k));
    for (int n = 1; n <= 25; ++n) {
      for (const MatrixView w :
           {MatrixView(wide.floats).Rows(3, 3 + n).Cols(2, 2 + k), wide.view().Rows(3, 3 + n).Cols(2, 2 + k),
            MatrixView(wide.floats).Rows(0, n).Cols(0, k)}) {
        const Tensor want = ContractGemm(x, w.Copy());
        for (Path p : Paths()) {
          EXPECT_TRUE(GemmOn(p, x, w) == want)
              << Name(p) << " n " << n << " k " << k << (w.storage() == Dtype::kBf16 ? " bf16" : " f32");
        }
        EXPECT_TRUE(Gemm(x, w) == want) << n << " " << k;
      }
    }
  }
}

TEST(MatrixView, AViewOfBf16HalvesShowsTheirValuesAndGivesNoFloatPointer) {
  HalvesOf w = Halves(4, 6, 43);
  // Values whose widening has to keep every bit: -0, an infinity, a NaN's
  // payload, a subnormal.
  w.bits[1] = 0x8000u;
  w.bits[7] = 0xff80u;
  w.bits[8] = 0x7fc1u;
  w.bits[13] = 0x0001u;
  for (size_t i : {1, 7, 8, 13}) w.floats.data()[i] = FromBf16Bits(w.bits[i]);
  const MatrixView v = w.view().Rows(1, 3).Cols(1, 5);
  ASSERT_EQ(v.rows(), 2);
  ASSERT_EQ(v.cols(), 4);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) ASSERT_EQ(Bits(v.at(r, c)), Bits(w.floats.at(r + 1, c + 1))) << r << " " << c;
  }
  EXPECT_TRUE(v.Copy() == w.floats.RowRange(1, 3).ColRange(1, 5));
  const Tensor window = w.floats.RowRange(1, 3).ColRange(1, 5);
  const std::vector<float> floats = v.Floats();
  ASSERT_EQ(floats.size(), window.size());
  for (size_t i = 0; i < floats.size(); ++i) EXPECT_EQ(Bits(floats[i]), Bits(window.data()[i])) << i;
  EXPECT_TRUE(w.view() == MatrixView(w.floats));
  EXPECT_EQ(Bits(w.view().at(0, 1)), 0x80000000u);
  EXPECT_EQ(Bits(w.view().at(1, 1)), 0xff800000u);
  EXPECT_EQ(Bits(w.view().at(1, 2)), 0x7fc10000u);
  EXPECT_EQ(Bits(w.view().at(2, 1)), 0x00010000u);
  EXPECT_THROW(v.data(), InternalError);
  EXPECT_THROW(v.row(0), InternalError);
  EXPECT_THROW(v.span(), InternalError);
  EXPECT_THROW(MatrixView(w.floats).bf16_data(), InternalError);
  EXPECT_THROW(v.Rows(0, 3), InternalError);
}

TEST(MatrixView, WindowsShowTheirRowsAndColumnsAndRefuseToReachOutside) {
  const Tensor t = Make(6, 10, 34);
  const MatrixView v = MatrixView(t).Rows(1, 5).Cols(2, 9);
  ASSERT_EQ(v.rows(), 4);
  ASSERT_EQ(v.cols(), 7);
  EXPECT_EQ(v.stride(), 10u);
  EXPECT_FALSE(v.contiguous());
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 7; ++c) ASSERT_EQ(Bits(v.at(r, c)), Bits(t.at(r + 1, c + 2)));
  }
  EXPECT_TRUE(v.Copy() == t.RowRange(1, 5).ColRange(2, 9));
  EXPECT_THROW(v.span(), InternalError);
  EXPECT_EQ(MatrixView(t).Rows(2, 4).span().size(), 20u);
  EXPECT_EQ(MatrixView(t).Rows(3, 4).Cols(1, 4).span()[0], t.at(3, 1));  // one row: no gaps
  EXPECT_THROW(v.Rows(0, 5), InternalError);
  EXPECT_THROW(v.Cols(3, 2), InternalError);
  EXPECT_THROW(v.Cols(-1, 2), InternalError);
  EXPECT_TRUE(v.Rows(2, 2).empty());
}

TEST(GemmBlocks, EachBlockIsTheGemmOfItsColumns) {
  const Tensor x = Make(10, 96, 21), w = Make(14, 96, 22);
  for (int blocks : {1, 2, 3, 4, 8, 12}) {
    const std::vector<Tensor> parts = GemmBlocks(x, w, blocks);
    ASSERT_EQ(parts.size(), size_t(blocks));
    const int kb = x.cols() / blocks;
    for (int b = 0; b < blocks; ++b) {
      const Tensor want = ContractGemm(x.ColRange(b * kb, (b + 1) * kb), w.ColRange(b * kb, (b + 1) * kb));
      EXPECT_TRUE(parts[size_t(b)] == want) << blocks << " blocks, block " << b;
    }
  }
  EXPECT_TRUE(GemmBlocks(x, w, 1).front() == Gemm(x, w));
}

// One row of x reads each row of w once for every block (decode): each
// block still gives the contract's bits of its columns, for every edge of
// the tiles, block widths with and without a K tail, floats and bf16 halves,
// a whole weight or a window of a wider one.
TEST(GemmBlocks, OneRowGivesEachBlocksContractBitsInOnePassOverW) {
  for (int kb : {1, 7, 8, 9, 64, 129}) {
    for (int blocks : {1, 2, 3, 8}) {
      const int k = kb * blocks;
      const HalvesOf wide = Halves(30, k + 3, 60 + static_cast<uint32_t>(k));
      const Tensor x = Make(1, k, 61 + static_cast<uint32_t>(k));
      for (int n : {1, 5, 6, 7, 13, 25}) {
        for (const MatrixView w : {MatrixView(wide.floats).Rows(2, 2 + n).Cols(1, 1 + k),
                                   wide.view().Rows(2, 2 + n).Cols(1, 1 + k), wide.view().Rows(0, n).Cols(0, k)}) {
          const std::vector<Tensor> parts = GemmBlocks(x, w, blocks);
          ASSERT_EQ(parts.size(), size_t(blocks));
          for (int b = 0; b < blocks; ++b) {
            const Tensor want = ContractGemm(x.ColRange(b * kb, (b + 1) * kb), w.Cols(b * kb, (b + 1) * kb).Copy());
            EXPECT_TRUE(parts[size_t(b)] == want) << "kb " << kb << " blocks " << blocks << " n " << n << " block " << b
                                                  << (w.storage() == Dtype::kBf16 ? " bf16" : " f32");
          }
        }
      }
    }
  }
}

TEST(GemmBlocks, TreeSummedEqualsTheSubtreesOfEqualHalves) {
  // Two ranks holding K/2 each: each tree-sums its four blocks, and the sum
  // of the two subtrees is the tree sum of all eight blocks, bit for bit.
  const Tensor x = Make(9, 8 * 21, 23), w = Make(12, 8 * 21, 24);
  const Tensor whole = TreeSum(GemmBlocks(x, w, 8));
  const int half = x.cols() / 2;
  // Each rank's columns of w read in place, as the kernels hold them.
  const Tensor left = TreeSum(GemmBlocks(x.ColRange(0, half), MatrixView(w).Cols(0, half), 4));
  const Tensor right = TreeSum(GemmBlocks(x.ColRange(half, 2 * half), MatrixView(w).Cols(half, 2 * half), 4));
  EXPECT_TRUE(TreeSum(std::vector<Tensor>{left, right}) == whole);
  // And four ranks holding K/4 each.
  std::vector<Tensor> quarters;
  const int quarter = x.cols() / 4;
  for (int r = 0; r < 4; ++r) {
    quarters.push_back(TreeSum(
        GemmBlocks(x.ColRange(r * quarter, (r + 1) * quarter), MatrixView(w).Cols(r * quarter, (r + 1) * quarter), 2)));
  }
  EXPECT_TRUE(TreeSum(quarters) == whole);
  // The blocked sum is a different rounding of the same product.
  EXPECT_LT(MaxAbsDiff(whole, Gemm(x, w)), 1e-5);
}

TEST(GemmBlocks, BlocksThatDoNotDivideKFailTheCheck) {
  const Tensor x = Make(2, 12, 25), w = Make(3, 12, 26);
  EXPECT_THROW(GemmBlocks(x, w, 5), InternalError);
  EXPECT_THROW(GemmBlocks(x, w, 0), InternalError);
  EXPECT_THROW(GemmBlocks(x, w, -3), InternalError);
  const Tensor other_k = Make(3, 13, 27);
  EXPECT_THROW(GemmBlocks(x, other_k, 1), InternalError);
}

TEST(TreeSum, AddsPairsThenPairsOfPairs) {
  // (a+b)+(c+d) = 1 + 2^-23, while ((a+b)+c)+d = 1: each 2^-24 alone is a
  // tie that rounds back to 1.
  const float tiny = std::ldexp(1.0f, -24);
  std::vector<Tensor> parts = {Tensor(1, 1, {1.0f}), Tensor(1, 1, {tiny}), Tensor(1, 1, {tiny}), Tensor(1, 1, {tiny})};
  ASSERT_NE(((1.0f + tiny) + tiny) + tiny, (1.0f + tiny) + (tiny + tiny));
  EXPECT_EQ(TreeSum(parts).at(0, 0), (1.0f + tiny) + (tiny + tiny));
  EXPECT_EQ(TreeSum(parts).at(0, 0), 1.0f + 2 * tiny);
}

TEST(TreeSum, EightPartsFollowTheBinaryTreeElementwise) {
  std::vector<Tensor> p;
  for (int i = 0; i < 8; ++i) p.push_back(Make(3, 5, 30 + uint32_t(i)));
  for (Tensor& t : p) {
    for (float& v : t.span()) v = v * std::ldexp(1.0f, static_cast<int>(Bits(v) % 20));  // spread the exponents
  }
  const Tensor sum = TreeSum(p);
  for (size_t e = 0; e < sum.size(); ++e) {
    auto v = [&](int i) { return p[size_t(i)].data()[e]; };
    const float want = ((v(0) + v(1)) + (v(2) + v(3))) + ((v(4) + v(5)) + (v(6) + v(7)));
    ASSERT_EQ(Bits(sum.data()[e]), Bits(want)) << e;
  }
}

TEST(TreeSum, OnePartIsACopy) {
  const Tensor t = Make(4, 6, 40);
  const Tensor parts[] = {t};
  EXPECT_TRUE(TreeSum(parts) == t);
}

TEST(TreeSum, CountNotAPowerOfTwoOrUnequalShapesFailTheCheck) {
  std::vector<Tensor> three = {Tensor(2, 2), Tensor(2, 2), Tensor(2, 2)};
  EXPECT_THROW(TreeSum(three), InternalError);
  EXPECT_THROW(TreeSum(std::vector<Tensor>{}), InternalError);
  std::vector<Tensor> unequal = {Tensor(2, 2), Tensor(2, 3)};
  EXPECT_THROW(TreeSum(unequal), InternalError);
}

}  // namespace
}  // namespace seam

// Tensors: storage rounding over whole tensors, the finiteness scan, and the
// recycling of large blocks.
#include "seam/runtime/tensor.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exec/exec_testing.h"
#include "seam/runtime/exec.h"
#include "seam/runtime/weights.h"

namespace seam {
namespace {

// RoundToStorage runs on vectors without a branch; Bf16Bits states the
// rounding one value at a time. Every upper half with lower halves at the
// tie, either side of it, zero, one and all ones: ties to even both ways,
// carries into the exponent, infinities, every NaN payload, subnormals,
// both signs.
TEST(Bf16, RoundingATensorGivesEveryElementTheBitsOfRoundingItAlone) {
  const uint32_t lows[] = {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, 0x1234u};
  std::vector<float> values;
  for (uint32_t high = 0; high <= 0xffffu; ++high) {
    for (uint32_t low : lows) values.push_back(std::bit_cast<float>(high << 16 | low));
  }
  std::vector<float> rounded = values;
  RoundToStorage(rounded, Dtype::kBf16);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(rounded[i]), uint32_t{Bf16Bits(values[i])} << 16)
        << std::hex << std::bit_cast<uint32_t>(values[i]);
  }
  std::vector<float> kept = values;
  RoundToStorage(kept, Dtype::kF32);
  EXPECT_EQ(std::memcmp(kept.data(), values.data(), values.size() * sizeof(float)), 0);
}

// The scan skips chunks that hold nothing: a NaN or an infinity anywhere,
// at a chunk's edges included, is found and placed, and the first wins.
TEST(Tensor, FirstNonFiniteFindsTheFirstNaNOrInfinityWhereverItIs) {
  constexpr int kCols = 1000;
  const Tensor finite(9, kCols);
  EXPECT_EQ(FirstNonFinite(finite), "");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int at : {0, 1, 4095, 4096, 4097, 8191, 8999}) {
    Tensor t = finite;
    t.data()[at] = at % 2 == 0 ? nan : -inf;
    EXPECT_EQ(FirstNonFinite(t),
              fmt::format("{} at [{}, {}]", at % 2 == 0 ? "a NaN" : "an infinity", at / kCols, at % kCols));
  }
  Tensor two = finite;
  two.data()[7000] = nan;
  two.data()[5000] = inf;
  EXPECT_EQ(FirstNonFinite(two), "an infinity at [5, 0]");
  Tensor largest = finite;
  largest.data()[4500] = std::numeric_limits<float>::max();
  EXPECT_EQ(FirstNonFinite(largest), "");
}

// Weights are scanned once, as they are made; a run's check reads what
// the scan found, so a NaN put into a weight before it is wrapped is still
// refused, by name and place.
TEST(Weights, ANonFiniteWeightIsFoundWhenTheWeightsAreMadeAndRefusedByTheCheck) {
  const Model m = testing::RunnableStack("AF");
  const Weights good = testing::MustWeights(m, Dtype::kBf16);
  EXPECT_TRUE(CheckWeights(m, good).ok());
  std::map<std::string, Tensor> tensors = good.Copies();
  const std::string name = "model.layers.1.mlp.up_proj.weight";
  ASSERT_TRUE(tensors.count(name));
  tensors.at(name).at(3, 17) = std::numeric_limits<float>::quiet_NaN();
  const Weights bad(std::move(tensors));
  EXPECT_EQ(bad.NonFiniteIn(name), "a NaN at [3, 17]");
  EXPECT_EQ(bad.NonFiniteIn("model.layers.0.mlp.up_proj.weight"), "");
  const Status s = CheckWeights(m, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "weight '" + name + "' holds a NaN at [3, 17]; seam computes with finite weights only");
}

// A matrix of bf16 values is kept in 16 bits and shows the same bits; a
// matrix with any other value, and any vector, is kept as floats.
TEST(StoredWeight, AMatrixOfBf16ValuesIsKeptInHalfTheBytesAndShowsTheSameBits) {
  Tensor t(5, 9);
  for (size_t i = 0; i < t.size(); ++i) t.data()[i] = RoundBf16(0.37f * static_cast<float>(i) - 7.0f);
  t.at(1, 2) = -0.0f;
  t.at(2, 3) = std::numeric_limits<float>::infinity();
  t.at(4, 8) = std::bit_cast<float>(0x7fc30000u);  // a NaN with a payload in its upper half
  const StoredWeight kept(t);
  EXPECT_EQ(kept.storage(), Dtype::kBf16);
  EXPECT_EQ(kept.bytes(), t.size() * 2);
  EXPECT_EQ(kept.view().storage(), Dtype::kBf16);
  EXPECT_TRUE(kept.view().Copy() == t);
  EXPECT_EQ(kept.non_finite(), "an infinity at [2, 3]");
  EXPECT_EQ(StoredBytes(5, 9, Dtype::kBf16), static_cast<int64_t>(kept.bytes()));

  Tensor one_low_bit = t;
  one_low_bit.at(3, 5) = std::bit_cast<float>(std::bit_cast<uint32_t>(t.at(3, 5)) | 1u);
  const StoredWeight floats(one_low_bit);
  EXPECT_EQ(floats.storage(), Dtype::kF32);
  EXPECT_EQ(floats.bytes(), t.size() * 4);
  EXPECT_TRUE(floats.view().Copy() == one_low_bit);

  const StoredWeight vector(t.RowRange(0, 1));
  EXPECT_EQ(vector.storage(), Dtype::kF32);
  EXPECT_EQ(StoredBytes(1, 9, Dtype::kBf16), 36);
  EXPECT_EQ(StoredBytes(5, 9, Dtype::kF32), 180);
}

// Made a block of rows at a time, a weight is what it would be made whole:
// in 16 bits while every value is bf16, and as floats (the rows before
// widened) from the first block that holds another value; a non-finite
// value is found at its row of the weight, not of its block.
TEST(StoredWeight, MadeByBlocksOfRowsIsWhatItWouldBeMadeWhole) {
  const int rows = 700, cols = 1000;  // blocks of 262 rows: three of them
  Tensor whole = Tensor::Uninitialized(rows, cols);
  for (size_t i = 0; i < whole.size(); ++i) whole.data()[i] = RoundBf16(static_cast<float>(i % 9973) * 1e-3f - 4.0f);
  const auto from = [](const Tensor& t) {
    return [&t](int first_row, Tensor& block) {
      ASSERT_EQ(block.cols(), t.cols());
      std::memcpy(block.data(), t.row(first_row), block.size() * sizeof(float));
    };
  };
  const StoredWeight halves(rows, cols, from(whole));
  EXPECT_EQ(halves.storage(), Dtype::kBf16);
  EXPECT_TRUE(halves.view().Copy() == whole);
  EXPECT_EQ(halves.non_finite(), "");

  Tensor late = whole;
  late.at(600, 7) = 0.1f;  // not a bf16 value, in the third block
  late.at(590, 3) = std::numeric_limits<float>::quiet_NaN();
  const StoredWeight floats(rows, cols, from(late));
  EXPECT_EQ(floats.storage(), Dtype::kF32);
  EXPECT_TRUE(floats.view().Copy() == late);
  EXPECT_EQ(floats.non_finite(), "a NaN at [590, 3]");
  EXPECT_EQ(floats.non_finite(), StoredWeight(late).non_finite());
}

// A bf16 run's generated weights: its matrices kept in 16 bits, its vectors
// as floats, every value the fp32 run's value rounded to bf16.
TEST(Weights, ABf16RunsMatricesAreKeptInHalvesAndHoldTheF32ValuesRounded) {
  const Model m = testing::RunnableStack("AF");
  const Weights f32 = testing::MustWeights(m, Dtype::kF32), bf16 = testing::MustWeights(m, Dtype::kBf16);
  int64_t bytes = 0, halves = 0;
  for (const auto& [name, w] : bf16.all()) {
    Tensor rounded = f32.at(name).Copy();
    RoundToStorage(rounded, Dtype::kBf16);
    EXPECT_TRUE(w.view().Copy() == rounded) << name;
    EXPECT_EQ(w.storage(), w.rows() > 1 ? Dtype::kBf16 : Dtype::kF32) << name;
    EXPECT_EQ(f32.all().at(name).storage(), Dtype::kF32) << name;
    bytes += static_cast<int64_t>(w.bytes());
    halves += w.rows() > 1;
  }
  EXPECT_GT(halves, 4);
  EXPECT_EQ(bytes, EstimateRunMemory(m, {.tp = 2}, 8, Dtype::kBf16)->weights);
}

// A weight made a block of rows at a time differs in every row (the blocks
// do not restart the values), as one made whole does.
TEST(Weights, AGeneratedWeightOfManyBlocksDiffersInEveryRow) {
  const WeightSpec spec{.name = "model.layers.0.mlp.up_proj.weight", .rows = 600, .cols = 1000};
  for (Dtype d : {Dtype::kF32, Dtype::kBf16}) {
    const Tensor t = GenerateWeight(spec, 3, d).view().Copy();
    std::set<std::string> rows;
    for (int r = 0; r < t.rows(); ++r) rows.emplace(reinterpret_cast<const char*>(t.row(r)), t.cols() * sizeof(float));
    EXPECT_EQ(rows.size(), 600u) << Name(d);
  }
}

constexpr int kRows = 256, kWide = 1024;  // 1 MiB: a block worth keeping

TEST(TensorStorage, ALargeBlockFreedIsTheNextTensorOfItsSizeOnTheSameThread) {
  const RecycledBlocks before = ThreadRecycledBlocks();
  const float* first = nullptr;
  {
    const Tensor t(kRows, kWide);
    first = t.data();
  }
  EXPECT_EQ(ThreadRecycledBlocks().blocks, before.blocks + 1);
  EXPECT_EQ(ThreadRecycledBlocks().bytes, before.bytes + sizeof(float) * kRows * kWide);
  const Tensor other_size(kRows, kWide / 2);
  EXPECT_NE(other_size.data(), first);
  const Tensor same_size = Tensor::Uninitialized(kWide, kRows);
  EXPECT_EQ(same_size.data(), first);
  EXPECT_EQ(ThreadRecycledBlocks().blocks, before.blocks);
}

TEST(TensorStorage, ARecycledBlockIsZeroedWhereATensorPromisesZeros) {
  {
    Tensor dirty(kRows, kWide);
    std::fill(dirty.data(), dirty.data() + dirty.size(), 7.0f);
  }
  const Tensor zeros(kRows, kWide);
  for (size_t i = 0; i < zeros.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(zeros.data()[i]), 0u) << i;
}

TEST(TensorStorage, AThreadKeepsAtMost64BlocksAnd256MiB) {
  std::thread([] {
    {
      std::vector<Tensor> huge;
      for (int i = 0; i < 3; ++i) huge.push_back(Tensor::Uninitialized(kRows * 96, kWide));  // 96 MiB each
    }
    EXPECT_EQ(ThreadRecycledBlocks().blocks, 2u);  // a third would pass 256 MiB
    EXPECT_EQ(ThreadRecycledBlocks().bytes, size_t{192} << 20);
    {
      std::vector<Tensor> many;
      for (int i = 0; i < 80; ++i) many.push_back(Tensor::Uninitialized(kRows, kWide));
    }
    EXPECT_EQ(ThreadRecycledBlocks().blocks, 64u);
  }).join();
  // Another thread's blocks are its own.
  std::thread([] { EXPECT_EQ(ThreadRecycledBlocks().blocks, 0u); }).join();
}

TEST(TensorStorage, SmallTensorsAreLeftToMalloc) {
  const RecycledBlocks before = ThreadRecycledBlocks();
  { const Tensor small(4, 1024); }  // 16 KiB
  EXPECT_EQ(ThreadRecycledBlocks().blocks, before.blocks);
}

}  // namespace
}  // namespace seam

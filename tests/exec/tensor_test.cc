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
#include <string>
#include <thread>
#include <vector>

#include "exec/exec_testing.h"
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
    EXPECT_EQ(FirstNonFinite(t), fmt::format("{} at [{}, {}]", at % 2 == 0 ? "a NaN" : "an infinity", at / kCols,
                                             at % kCols));
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
  std::map<std::string, Tensor> tensors = good.all();
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

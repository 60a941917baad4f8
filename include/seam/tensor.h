// seam/tensor.h — a row-major matrix of floats, and the storage dtypes.
//
// Compute is always fp32. A bf16 run stores values rounded to bf16 (round to
// nearest, ties to even) at the points the kernels define, kept in floats, so
// every kernel serves both dtypes and a rounding point is one call.
//
//   Tensor x(4, 64);            // zeros
//   x.at(2, 7) = 1.5f;
//   RoundToStorage(x, Dtype::kBf16);
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class Dtype { kF32, kBf16 };
std::string_view Name(Dtype d);
Expected<Dtype> ParseDtype(std::string_view text);

class Tensor {
 public:
  Tensor() = default;
  Tensor(int rows, int cols);  // zero-filled
  Tensor(int rows, int cols, std::vector<float> values);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float* row(int r) { return data_.data() + static_cast<size_t>(r) * static_cast<size_t>(cols_); }
  const float* row(int r) const { return data_.data() + static_cast<size_t>(r) * static_cast<size_t>(cols_); }
  std::span<float> span() { return data_; }
  std::span<const float> span() const { return data_; }
  float& at(int r, int c) { return row(r)[c]; }
  float at(int r, int c) const { return row(r)[c]; }

  // Copies of a range of rows or columns (end exclusive).
  Tensor RowRange(int begin, int end) const;
  Tensor ColRange(int begin, int end) const;

  // Bit-for-bit equality (so -0 != +0 and NaNs compare by payload).
  bool operator==(const Tensor& o) const;

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::vector<float> data_;
};

// Stacks tensors of equal width by rows, in order.
Tensor ConcatRows(std::span<const Tensor> parts);

// Round to the nearest bf16, ties to even; NaN stays NaN, infinities stay.
float RoundBf16(float x);
uint16_t Bf16Bits(float x);  // the upper 16 bits of the rounded value
float FromBf16Bits(uint16_t bits);
// Rounds every element to the storage dtype (a no-op for fp32).
void RoundToStorage(Tensor& t, Dtype d);
void RoundToStorage(std::span<float> values, Dtype d);

// The largest |a - b| over all elements (shapes must match).
double MaxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace seam

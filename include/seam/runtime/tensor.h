// seam/runtime/tensor.h — a row-major matrix of floats, and the storage dtypes.
//
// Compute is always fp32. A bf16 run stores values rounded to bf16 (round to
// nearest, ties to even) at the points the kernels define, kept in floats, so
// every kernel serves both dtypes and a rounding point is one call. Only its
// weight matrices are kept in 16 bits (seam/runtime/weights.h), read through
// MatrixView.
//
//   Tensor x(4, 64);            // zeros
//   x.at(2, 7) = 1.5f;
//   RoundToStorage(x, Dtype::kBf16);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "seam/error.h"

namespace seam {

enum class Dtype { kF32, kBf16 };
std::string_view Name(Dtype d);
Expected<Dtype> ParseDtype(std::string_view text);

// The storage of tensors. New floats are left unset, so a buffer a call
// fills whole (a product, a receive) is not zeroed first. Large blocks are
// recycled: a block freed on a thread is kept (up to a bound) for the next
// tensor of the same size that thread makes, so the layers of a run reuse
// their buffers instead of faulting in fresh pages for every step.
struct TensorAllocator {
  using value_type = float;
  template <class U>
  struct rebind {
    static_assert(std::is_same_v<U, float>, "tensors hold floats");
    using other = TensorAllocator;
  };
  float* allocate(size_t n);
  void deallocate(float* p, size_t n) noexcept;
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  bool operator==(const TensorAllocator&) const = default;
};

// What the calling thread keeps for reuse: blocks and bytes. A thread keeps
// blocks of at least kMinBytes, at most kMaxBlocks of them and kMaxBytes in all.
struct RecycledBlocks {
  static constexpr size_t kMinBytes = size_t{64} << 10;
  static constexpr size_t kMaxBlocks = 64;
  static constexpr size_t kMaxBytes = size_t{256} << 20;
  size_t blocks = 0;
  size_t bytes = 0;
};
RecycledBlocks ThreadRecycledBlocks();

class Tensor {
 public:
  Tensor() = default;
  Tensor(int rows, int cols);  // zero-filled
  Tensor(int rows, int cols, const std::vector<float>& values);
  // Values left unset: for a buffer the caller fills whole.
  static Tensor Uninitialized(int rows, int cols);
  // Copies go through memcpy (a vector with a custom allocator would copy
  // element by element).
  Tensor(const Tensor& o);
  Tensor& operator=(const Tensor& o);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

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
  std::vector<float, TensorAllocator> data_;
};

// A read-only window on a block of a tensor's rows and columns: what a
// kernel keeps of the weights it reads, so a rank's shard of a weight is
// never copied. It owns nothing; what it shows must outlive it. Rows are
// stride() elements apart (the tensor's width when it has fewer columns).
// A view shows floats, or bf16 values kept as their upper 16 bits (a weight
// a bf16 run keeps in half the memory, seam/runtime/weights.h): at() and
// Copy() read either, the float pointers only floats, and the GEMM reads
// both in place with the same bits (widening a bf16 value is exact).
//
//   MatrixView w = weights.at("model.layers.0.mlp.down_proj.weight");
//   MatrixView mine = w.Cols(512, 1024);  // a row-parallel shard
class MatrixView {
 public:
  MatrixView() = default;
  MatrixView(const Tensor& t)  // NOLINT(google-explicit-constructor): every tensor is a view of itself
      : data_(t.data()), rows_(t.rows()), cols_(t.cols()), stride_(static_cast<size_t>(t.cols())) {}
  // A view of a temporary would outlive it.
  MatrixView(Tensor&&) = delete;
  // bf16 values, rows `stride` elements apart.
  static MatrixView Bf16(const uint16_t* bits, int rows, int cols, size_t stride);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  size_t stride() const { return stride_; }
  bool empty() const { return rows_ == 0 || cols_ == 0; }
  // How the values are held: kF32 (floats) or kBf16 (16-bit halves).
  Dtype storage() const { return bits_ == nullptr ? Dtype::kF32 : Dtype::kBf16; }
  // The floats; only for a view of floats (SEAM_CHECK).
  const float* data() const;
  const float* row(int r) const { return data() + static_cast<size_t>(r) * stride_; }
  // The 16-bit halves; only for a view of bf16 values (SEAM_CHECK).
  const uint16_t* bf16_data() const;
  float at(int r, int c) const;
  // Row r as floats, into out[0, cols()).
  void CopyRow(int r, float* out) const;
  // Every row as floats, one after another, into out[0, rows() * cols()),
  // or into a vector of its own.
  void CopyTo(float* out) const;
  std::vector<float> Floats() const;
  // Whether the rows follow each other with no gap (a span covers them).
  bool contiguous() const { return rows_ <= 1 || stride_ == static_cast<size_t>(cols_); }
  // Every element in order; only for a contiguous view of floats.
  std::span<const float> span() const;

  // Sub-windows (end exclusive), and a copy of what the view shows, as floats.
  MatrixView Rows(int begin, int end) const;
  MatrixView Cols(int begin, int end) const;
  Tensor Copy() const;

  // Bit-for-bit equality of the values shown, whatever holds them.
  bool operator==(const MatrixView& o) const;

 private:
  // One of the two is set (neither for an empty default view).
  const float* data_ = nullptr;
  const uint16_t* bits_ = nullptr;
  int rows_ = 0;
  int cols_ = 0;
  size_t stride_ = 0;
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

// Where the first NaN or infinity of `t` is, as "a NaN at [row, col]" (or
// "an infinity at ..."); empty when every element is finite. Two runs that
// hold the same NaN bits are equal bit for bit but computed nothing.
// Rows are numbered from first_row (t a block of a larger tensor's rows).
std::string FirstNonFinite(const Tensor& t, int first_row = 0);

}  // namespace seam

#include "seam/runtime/tensor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/enum_text.h"

namespace seam {

constexpr auto kDtypes = EnumNames<Dtype>("dtype", {{Dtype::kF32, "fp32"}, {Dtype::kBf16, "bf16"}});

std::string_view Name(Dtype d) { return kDtypes.Name(d); }
Expected<Dtype> ParseDtype(std::string_view text) { return kDtypes.Parse(text); }

Tensor::Tensor(int rows, int cols) : rows_(rows), cols_(cols) {
  SEAM_CHECK(rows >= 0 && cols >= 0, "negative tensor shape");
  data_.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  std::fill(data_.begin(), data_.end(), 0.0f);
}

Tensor::Tensor(const Tensor& o) : rows_(o.rows_), cols_(o.cols_) {
  data_.resize(o.data_.size());
  std::copy(o.data_.begin(), o.data_.end(), data_.begin());
}

Tensor& Tensor::operator=(const Tensor& o) {
  if (this == &o) return *this;
  rows_ = o.rows_;
  cols_ = o.cols_;
  data_.resize(o.data_.size());
  std::copy(o.data_.begin(), o.data_.end(), data_.begin());
  return *this;
}

Tensor Tensor::Uninitialized(int rows, int cols) {
  SEAM_CHECK(rows >= 0 && cols >= 0, "negative tensor shape");
  Tensor t;
  t.rows_ = rows;
  t.cols_ = cols;
  t.data_.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  return t;
}

Tensor::Tensor(int rows, int cols, const std::vector<float>& values) : rows_(rows), cols_(cols) {
  data_.resize(values.size());
  std::copy(values.begin(), values.end(), data_.begin());
  SEAM_CHECK(rows >= 0 && cols >= 0 && data_.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols),
             "tensor values do not match its shape");
}

Tensor Tensor::RowRange(int begin, int end) const {
  SEAM_CHECK(0 <= begin && begin <= end && end <= rows_, "row range outside the tensor");
  Tensor out = Uninitialized(end - begin, cols_);
  if (out.size() > 0) std::memcpy(out.data(), row(begin), out.size() * sizeof(float));
  return out;
}

Tensor Tensor::ColRange(int begin, int end) const {
  SEAM_CHECK(0 <= begin && begin <= end && end <= cols_, "column range outside the tensor");
  return MatrixView(*this).Cols(begin, end).Copy();
}

bool Tensor::operator==(const Tensor& o) const {
  return rows_ == o.rows_ && cols_ == o.cols_ &&
         (data_.empty() || std::memcmp(data_.data(), o.data_.data(), data_.size() * sizeof(float)) == 0);
}

MatrixView MatrixView::Bf16(const uint16_t* bits, int rows, int cols, size_t stride) {
  SEAM_CHECK(rows >= 0 && cols >= 0 && (rows <= 1 || stride >= static_cast<size_t>(cols)), "a bf16 view's shape");
  MatrixView v;
  v.bits_ = bits;
  v.rows_ = rows;
  v.cols_ = cols;
  v.stride_ = stride;
  return v;
}

const float* MatrixView::data() const {
  SEAM_CHECK(bits_ == nullptr, "the floats of a view of bf16 values");
  return data_;
}

const uint16_t* MatrixView::bf16_data() const {
  SEAM_CHECK(bits_ != nullptr || rows_ == 0 || cols_ == 0, "the bf16 halves of a view of floats");
  return bits_;
}

float MatrixView::at(int r, int c) const {
  const size_t i = static_cast<size_t>(r) * stride_ + static_cast<size_t>(c);
  return bits_ != nullptr ? FromBf16Bits(bits_[i]) : data_[i];
}

std::span<const float> MatrixView::span() const {
  SEAM_CHECK(contiguous(), "a span of a view whose rows have gaps");
  return {data(), static_cast<size_t>(rows_) * static_cast<size_t>(cols_)};
}

MatrixView MatrixView::Rows(int begin, int end) const {
  SEAM_CHECK(0 <= begin && begin <= end && end <= rows_, "row range outside the view");
  MatrixView v = *this;
  const size_t skip = begin == end ? 0 : static_cast<size_t>(begin) * stride_;
  if (bits_ != nullptr) {
    v.bits_ = bits_ + skip;
  } else if (data_ != nullptr) {
    v.data_ = data_ + skip;
  }
  v.rows_ = end - begin;
  return v;
}

MatrixView MatrixView::Cols(int begin, int end) const {
  SEAM_CHECK(0 <= begin && begin <= end && end <= cols_, "column range outside the view");
  MatrixView v = *this;
  if (rows_ > 0 && bits_ != nullptr) v.bits_ = bits_ + begin;
  if (rows_ > 0 && data_ != nullptr) v.data_ = data_ + begin;
  v.cols_ = end - begin;
  return v;
}

void MatrixView::CopyRow(int r, float* out) const {
  SEAM_CHECK(0 <= r && r < rows_, "row outside the view");
  if (bits_ == nullptr) {
    std::memcpy(out, row(r), static_cast<size_t>(cols_) * sizeof(float));
    return;
  }
  const uint16_t* from = bits_ + static_cast<size_t>(r) * stride_;
  for (int c = 0; c < cols_; ++c) out[c] = FromBf16Bits(from[c]);
}

void MatrixView::CopyTo(float* out) const {
  for (int r = 0; r < rows_ && cols_ > 0; ++r) CopyRow(r, out + static_cast<size_t>(r) * static_cast<size_t>(cols_));
}

std::vector<float> MatrixView::Floats() const {
  std::vector<float> out(static_cast<size_t>(rows_) * static_cast<size_t>(cols_));
  CopyTo(out.data());
  return out;
}

Tensor MatrixView::Copy() const {
  Tensor out = Tensor::Uninitialized(rows_, cols_);
  CopyTo(out.data());
  return out;
}

bool MatrixView::operator==(const MatrixView& o) const {
  if (rows_ != o.rows_ || cols_ != o.cols_) return false;
  for (int r = 0; r < rows_; ++r) {
    for (int c = 0; c < cols_; ++c) {
      if (std::bit_cast<uint32_t>(at(r, c)) != std::bit_cast<uint32_t>(o.at(r, c))) return false;
    }
  }
  return true;
}

Tensor ConcatRows(std::span<const Tensor> parts) {
  int rows = 0;
  int cols = parts.empty() ? 0 : parts.front().cols();
  for (const Tensor& p : parts) {
    SEAM_CHECK(p.cols() == cols || p.rows() == 0, "concatenating tensors of different widths");
    rows += p.rows();
  }
  Tensor out = Tensor::Uninitialized(rows, cols);
  size_t at = 0;
  for (const Tensor& p : parts) {
    if (p.size() > 0) std::memcpy(out.data() + at, p.data(), p.size() * sizeof(float));
    at += p.size();
  }
  return out;
}

uint16_t Bf16Bits(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) {
    return static_cast<uint16_t>((u >> 16) | 0x0040u);  // a quiet NaN stays a NaN
  }
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);  // ties to even
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float FromBf16Bits(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float RoundBf16(float x) { return FromBf16Bits(Bf16Bits(x)); }

// Bf16Bits, widened back, with no branch so the loop runs on vectors: a NaN
// keeps its upper half with the quiet bit set; anything else rounds to
// nearest, ties to even, in the upper half.
void RoundToStorage(std::span<float> values, Dtype d) {
  if (d == Dtype::kF32) return;
  float* v = values.data();
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t u = std::bit_cast<uint32_t>(v[i]);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = nan ? (u | 0x00400000u) : u + 0x7fffu + ((u >> 16) & 1u);
    v[i] = std::bit_cast<float>(rounded & 0xffff0000u);
  }
}

void RoundToStorage(Tensor& t, Dtype d) { RoundToStorage(t.span(), d); }

namespace {

// Whether any of n floats is a NaN or an infinity (all exponent bits set),
// with no early exit so the loop runs on vectors.
bool AnyNonFinite(const float* v, size_t n) {
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= (std::bit_cast<uint32_t>(v[i]) & 0x7f800000u) == 0x7f800000u;
  return any != 0;
}

}  // namespace

std::string FirstNonFinite(const Tensor& t, int first_row) {
  // Every weight of a model is scanned when the weights are made: look
  // closer only at a chunk that holds something.
  constexpr size_t kChunk = 4096;
  size_t start = 0;
  while (start < t.size() && !AnyNonFinite(t.data() + start, std::min(kChunk, t.size() - start))) start += kChunk;
  for (size_t i = start; i < t.size(); ++i) {
    const float v = t.data()[i];
    if (std::isfinite(v)) continue;
    const size_t cols = static_cast<size_t>(std::max(t.cols(), 1));
    return fmt::format("{} at [{}, {}]", std::isnan(v) ? "a NaN" : "an infinity",
                       i / cols + static_cast<size_t>(first_row), i % cols);
  }
  return "";
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  SEAM_CHECK(a.rows() == b.rows() && a.cols() == b.cols(), "comparing tensors of different shapes");
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i]));
    if (std::isnan(d)) return d;
    m = std::max(m, d);
  }
  return m;
}

}  // namespace seam

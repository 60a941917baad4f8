#include "seam/runtime/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>
#include <string_view>

namespace seam {
namespace {

// A counter-based generator: the value at `index` of the tensor `name`.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t NameHash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// Uniform in [-1, 1), from 24 bits so every value is exact in fp32.
float Uniform(uint64_t stream, uint64_t index) {
  const uint64_t bits = Mix(stream ^ Mix(index)) >> 40;
  return static_cast<float>(static_cast<double>(bits) / 8388608.0 - 1.0);
}

float ValueOf(WeightKind kind, float u) {
  switch (kind) {
    case WeightKind::kLinear: return 0.05f * u;
    case WeightKind::kNorm: return 1.0f + 0.05f * u;
    case WeightKind::kEmbedding: return 0.5f * u;
    case WeightKind::kDecay: return 0.5f * (u + 1.0f);
    case WeightKind::kConv: return 0.5f * u;
  }
  return 0;
}

// Whether every value is a bf16 value: its lower 16 bits are zero (a NaN
// rounded to bf16 included). No branch, so the loop runs on vectors.
bool AllBf16(std::span<const float> values) {
  uint32_t low = 0;
  for (float v : values) low |= std::bit_cast<uint32_t>(v) & 0xffffu;
  return low == 0;
}

// The upper 16 bits of each value, which hold all of a bf16 value.
void UpperHalves(std::span<const float> values, uint16_t* out) {
  for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(values[i]) >> 16);
}

// Vectors stay floats: they are small, and the kernels read them as floats.
bool MayKeepHalves(int rows) { return rows > 1; }

}  // namespace

StoredWeight::StoredWeight(Tensor t) : rows_(t.rows()), cols_(t.cols()), non_finite_(FirstNonFinite(t)) {
  if (!MayKeepHalves(rows_) || !AllBf16(t.span())) {
    floats_ = std::move(t);
    return;
  }
  storage_ = Dtype::kBf16;
  bits_.resize(t.size());
  UpperHalves(t.span(), bits_.data());
}

StoredWeight::StoredWeight(int rows, int cols, const RowFill& fill) : rows_(rows), cols_(cols) {
  SEAM_CHECK(rows >= 0 && cols >= 0, "a weight's shape");
  if (MayKeepHalves(rows_)) {
    storage_ = Dtype::kBf16;  // until a value is not a bf16 value
    bits_.resize(static_cast<size_t>(rows_) * static_cast<size_t>(cols_));
  } else {
    floats_ = Tensor::Uninitialized(rows_, cols_);
  }
  constexpr size_t kBlockFloats = size_t{1} << 18;  // 1 MiB of floats at a time
  const int per_block = static_cast<int>(std::max<size_t>(1, kBlockFloats / std::max<size_t>(1, cols)));
  Tensor block;
  for (int first = 0; first < rows_; first += per_block) {
    const int n = std::min(per_block, rows_ - first);
    if (block.rows() != n) block = Tensor::Uninitialized(n, cols);
    fill(first, block);
    Append(block, first);
  }
}

void StoredWeight::Append(const Tensor& block, int first_row) {
  if (non_finite_.empty()) non_finite_ = FirstNonFinite(block, first_row);
  if (storage_ == Dtype::kBf16 && !AllBf16(block.span())) {
    // Floats from here on: the rows kept as halves so far, widened.
    const MatrixView kept = MatrixView::Bf16(bits_.data(), first_row, cols_, static_cast<size_t>(cols_));
    floats_ = Tensor::Uninitialized(rows_, cols_);
    for (int r = 0; r < first_row; ++r) kept.CopyRow(r, floats_.row(r));
    std::vector<uint16_t>().swap(bits_);
    storage_ = Dtype::kF32;
  }
  if (storage_ == Dtype::kF32) {
    if (!block.empty()) std::memcpy(floats_.row(first_row), block.data(), block.size() * sizeof(float));
    return;
  }
  UpperHalves(block.span(), bits_.data() + static_cast<size_t>(first_row) * static_cast<size_t>(cols_));
}

MatrixView StoredWeight::view() const {
  if (storage_ == Dtype::kBf16) return MatrixView::Bf16(bits_.data(), rows_, cols_, static_cast<size_t>(cols_));
  return MatrixView(floats_);
}

int64_t StoredBytes(int rows, int cols, Dtype d) {
  const int64_t per = MayKeepHalves(rows) && d == Dtype::kBf16 ? sizeof(uint16_t) : sizeof(float);
  return static_cast<int64_t>(rows) * cols * per;
}

Weights::Weights(std::map<std::string, Tensor> tensors) {
  // One weight at a time: its floats are freed as its kept form is made.
  while (!tensors.empty()) {
    auto node = tensors.extract(tensors.begin());
    stored_.emplace(std::move(node.key()), StoredWeight(std::move(node.mapped())));
  }
}

Weights::Weights(std::map<std::string, StoredWeight> stored) : stored_(std::move(stored)) {}

std::string Weights::NonFiniteIn(const std::string& name) const {
  auto it = stored_.find(name);
  return it == stored_.end() ? "" : it->second.non_finite();
}

MatrixView Weights::at(const std::string& name) const {
  auto it = stored_.find(name);
  SEAM_CHECK(it != stored_.end(), "no weight named " + name);
  return it->second.view();
}

std::map<std::string, Tensor> Weights::Copies() const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, w] : stored_) out.emplace(name, w.view().Copy());
  return out;
}

Expected<Weights> GenerateWeights(const Model& m, uint64_t seed, Dtype d) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  std::map<std::string, StoredWeight> stored;
  for (const WeightSpec& s : *specs) stored.emplace(s.name, GenerateWeight(s, seed, d));
  return Weights(std::move(stored));
}

StoredWeight GenerateWeight(const WeightSpec& s, uint64_t seed, Dtype d) {
  const uint64_t stream = Mix(seed) ^ NameHash(s.name);
  return StoredWeight(s.rows, s.cols, [&](int first_row, Tensor& block) {
    const size_t first = static_cast<size_t>(first_row) * static_cast<size_t>(s.cols);
    for (size_t i = 0; i < block.size(); ++i) block.data()[i] = ValueOf(s.kind, Uniform(stream, first + i));
    RoundToStorage(block, d);
  });
}

Status CheckWeights(const Model& m, const Weights& w) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  for (const WeightSpec& s : *specs) {
    if (!w.contains(s.name)) return Malformed(fmt::format("the weights have no tensor '{}'", s.name));
    const MatrixView t = w.at(s.name);
    if (t.rows() != s.rows || t.cols() != s.cols) {
      return Malformed(fmt::format("weight '{}' is [{}, {}] but the model needs [{}, {}]", s.name, t.rows(), t.cols(),
                                   s.rows, s.cols));
    }
    if (const std::string where = w.NonFiniteIn(s.name); !where.empty()) {
      return Malformed(fmt::format("weight '{}' holds {}; seam computes with finite weights only", s.name, where));
    }
  }
  return Status::Ok();
}

}  // namespace seam

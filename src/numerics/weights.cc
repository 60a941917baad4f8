#include "seam/runtime/weights.h"

#include <fmt/format.h>

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

}  // namespace

Weights::Weights(std::map<std::string, Tensor> tensors) : tensors_(std::move(tensors)) {
  for (const auto& [name, t] : tensors_) {
    if (std::string where = FirstNonFinite(t); !where.empty()) non_finite_.emplace(name, std::move(where));
  }
}

std::string Weights::NonFiniteIn(const std::string& name) const {
  auto it = non_finite_.find(name);
  return it == non_finite_.end() ? "" : it->second;
}

const Tensor& Weights::at(const std::string& name) const {
  auto it = tensors_.find(name);
  SEAM_CHECK(it != tensors_.end(), "no weight named " + name);
  return it->second;
}

Expected<Weights> GenerateWeights(const Model& m, uint64_t seed, Dtype d) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  std::map<std::string, Tensor> tensors;
  for (const WeightSpec& s : *specs) tensors.emplace(s.name, GenerateWeight(s, seed, d));
  return Weights(std::move(tensors));
}

Tensor GenerateWeight(const WeightSpec& s, uint64_t seed, Dtype d) {
  const uint64_t stream = Mix(seed) ^ NameHash(s.name);
  Tensor t(s.rows, s.cols);
  for (size_t i = 0; i < t.size(); ++i) t.data()[i] = ValueOf(s.kind, Uniform(stream, i));
  RoundToStorage(t, d);
  return t;
}

Status CheckWeights(const Model& m, const Weights& w) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  for (const WeightSpec& s : *specs) {
    if (!w.contains(s.name)) return Malformed(fmt::format("the weights have no tensor '{}'", s.name));
    const Tensor& t = w.at(s.name);
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

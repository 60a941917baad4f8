#include "seam/weights.h"

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
  }
  return 0;
}

void AddLinear(std::vector<WeightSpec>& out, const std::string& name, int rows, int cols) {
  out.push_back({name, rows, cols, WeightKind::kLinear});
}

void AddFfn(std::vector<WeightSpec>& out, const std::string& prefix, int width, int hidden, Activation act) {
  if (act == Activation::kSwiGlu) AddLinear(out, prefix + ".gate_proj.weight", width, hidden);
  AddLinear(out, prefix + ".up_proj.weight", width, hidden);
  AddLinear(out, prefix + ".down_proj.weight", hidden, width);
}

Status StageSpecs(const StageRef& s, int hidden, const ModelDims& d, std::vector<WeightSpec>& out) {
  const std::string p = StagePrefix(s);
  auto need = [&](bool ok, std::string_view what) -> Status {
    if (ok) return Status::Ok();
    return InvalidArgument(fmt::format("stage {} ({}, layer {}) cannot run: the model's dims give it no {}", s.index,
                                       Name(s.decl.kind), s.layer, what));
  };
  switch (s.decl.kind) {
    case StageKind::kAttention:
      if (Status st = need(d.heads > 0 && d.kv_heads > 0 && d.head_dim > 0, "attention heads"); !st.ok()) return st;
      AddLinear(out, p + ".q_proj.weight", d.heads * d.head_dim, hidden);
      AddLinear(out, p + ".k_proj.weight", d.kv_heads * d.head_dim, hidden);
      AddLinear(out, p + ".v_proj.weight", d.kv_heads * d.head_dim, hidden);
      AddLinear(out, p + ".o_proj.weight", hidden, d.heads * d.head_dim);
      break;
    case StageKind::kMixer: {
      if (Status st = need(d.mixer_heads > 0 && d.mixer_head_dim > 0 && d.mixer_state > 0, "mixer heads");
          !st.ok()) {
        return st;
      }
      const int width = d.mixer_heads * d.mixer_head_dim;
      const int state = d.mixer_heads * d.mixer_state;
      AddLinear(out, p + ".x_proj.weight", width, hidden);
      AddLinear(out, p + ".z_proj.weight", width, hidden);
      AddLinear(out, p + ".dt_proj.weight", d.mixer_heads, hidden);
      AddLinear(out, p + ".B_proj.weight", state, hidden);
      AddLinear(out, p + ".C_proj.weight", state, hidden);
      out.push_back({p + ".A_log", 1, d.mixer_heads, WeightKind::kDecay});
      AddLinear(out, p + ".out_proj.weight", hidden, width);
      break;
    }
    case StageKind::kDenseFfn:
      if (Status st = need(d.intermediate > 0, "FFN width"); !st.ok()) return st;
      AddFfn(out, p, d.intermediate, hidden, d.activation);
      break;
    case StageKind::kSparseFfn:
      if (Status st = need(d.experts >= s.decl.top_k && d.moe_intermediate > 0, "experts"); !st.ok()) return st;
      AddLinear(out, p + ".gate.weight", d.experts, hidden);
      for (int e = 0; e < d.experts; ++e) {
        AddFfn(out, fmt::format("{}.experts.{}", p, e), d.moe_intermediate, hidden, d.activation);
      }
      if (d.shared_intermediate > 0) AddFfn(out, p + ".shared_expert", d.shared_intermediate, hidden, d.activation);
      break;
    case StageKind::kNoOp: return Status::Ok();
  }
  out.push_back({StageNormName(s), 1, hidden, WeightKind::kNorm});
  return Status::Ok();
}

}  // namespace

std::string StagePrefix(const StageRef& s) {
  std::string_view part = "mlp";
  if (s.decl.kind == StageKind::kAttention) part = "self_attn";
  if (s.decl.kind == StageKind::kMixer) part = "mixer";
  return fmt::format("model.layers.{}.{}", s.layer, part);
}

std::string StageNormName(const StageRef& s) {
  if (s.slot == 0) return fmt::format("model.layers.{}.input_layernorm.weight", s.layer);
  if (s.slot == 1) return fmt::format("model.layers.{}.post_attention_layernorm.weight", s.layer);
  return fmt::format("model.layers.{}.norm{}.weight", s.layer, s.slot);
}

Expected<std::vector<WeightSpec>> WeightSpecs(const Model& m) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to run with", m.name));
  const ModelDims& d = *m.dims;
  if (d.vocab < 1) return InvalidArgument(fmt::format("model '{}' has vocab {}", m.name, d.vocab));
  std::vector<WeightSpec> out = {{kEmbeddingName, d.vocab, m.hidden, WeightKind::kEmbedding}};
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    if (Status st = StageSpecs(s, m.hidden, d, out); !st.ok()) return st.error();
  }
  out.push_back({kFinalNormName, 1, m.hidden, WeightKind::kNorm});
  return out;
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
  }
  return Status::Ok();
}

}  // namespace seam

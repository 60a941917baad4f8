// Which Hugging Face tensor holds which of seam's weights, per family. seam
// names its weights as transformers' Llama does; each family's checkpoint
// differs in names (a rename) and in a few layouts (HfLayout).
#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/hf_checkpoint_internal.h"

namespace seam {
namespace {

bool EndsWith(const std::string& s, std::string_view tail) { return s.ends_with(tail); }

void ReplaceFirst(std::string& s, std::string_view from, std::string_view to) {
  if (const size_t at = s.find(from); at != std::string::npos) s.replace(at, from.size(), to);
}

// "model.layers.N." -> its end, or npos.
size_t LayerPrefixEnd(const std::string& s) {
  if (!s.starts_with("model.layers.")) return std::string::npos;
  const size_t dot = s.find('.', 13);
  return dot == std::string::npos ? dot : dot + 1;
}

// Nemotron-H keeps everything under backbone.*, one norm and one mixer per layer.
std::string NemotronHName(std::string s) {
  if (s == kEmbeddingName) return "backbone.embeddings.weight";
  if (s == kFinalNormName) return "backbone.norm_f.weight";
  const size_t end = LayerPrefixEnd(s);
  if (end == std::string::npos) return s;
  std::string rest = s.substr(end);
  if (rest == "input_layernorm.weight") rest = "norm.weight";
  for (const char* part : {"self_attn.", "mixer.", "mlp."}) {
    if (rest.starts_with(part)) rest = "mixer." + rest.substr(std::string_view(part).size());
  }
  return "backbone." + s.substr(6, end - 6) + rest;
}

std::string HfName(const std::string& type, std::string s) {
  if (type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2" || type == "nemotron_h") {
    ReplaceFirst(s, ".shared_expert.", ".shared_experts.");
  }
  if (type == "nemotron_h") return NemotronHName(std::move(s));
  if (type == "qwen3_next") ReplaceFirst(s, ".mixer.", ".linear_attn.");
  if (type == "nemotron-nas") {
    if (EndsWith(s, ".self_attn.linear.weight")) ReplaceFirst(s, ".self_attn.linear.", ".self_attn.linear_attn.");
    if (EndsWith(s, ".mlp.linear.weight")) ReplaceFirst(s, ".mlp.linear.", ".mlp.linear_mlp.");
  }
  if (type == "gpt_oss") {
    if (EndsWith(s, ".mlp.gate.weight") || EndsWith(s, ".mlp.gate.bias")) ReplaceFirst(s, ".mlp.gate.", ".mlp.router.");
  }
  return s;
}

std::vector<int64_t> ShapeOf(const WeightSpec& w) {
  if (w.vector) return {w.cols};
  if (EndsWith(w.name, ".conv1d.weight")) return {w.rows, 1, w.cols};  // torch's depthwise Conv1d
  return {w.rows, w.cols};
}

// Qwen3-Next's RMSNorm computes norm(x) * (1 + w): its norms are stored as w - 1.
bool ZeroCentred(const std::string& type, const std::string& name) {
  if (type != "qwen3_next") return false;
  return name == kFinalNormName || EndsWith(name, "layernorm.weight") || EndsWith(name, ".q_norm.weight") ||
         EndsWith(name, ".k_norm.weight");
}

// GPT-OSS's experts of one MoE, stacked into four tensors.
void AddGptOssExperts(std::vector<HfTensor>& out, const std::string& prefix, const ModelDims& d, int hidden) {
  const int64_t e = d.experts, i = d.moe_intermediate, h = hidden;
  HfTensor gate_up{
      .name = prefix + ".experts.gate_up_proj", .shape = {e, h, 2 * i}, .layout = HfLayout::kExpertsGateUp};
  HfTensor gate_up_bias{
      .name = prefix + ".experts.gate_up_proj_bias", .shape = {e, 2 * i}, .layout = HfLayout::kExpertsGateUpBias};
  HfTensor down{.name = prefix + ".experts.down_proj", .shape = {e, i, h}, .layout = HfLayout::kExpertsDown};
  HfTensor down_bias{.name = prefix + ".experts.down_proj_bias", .shape = {e, h}, .layout = HfLayout::kExpertsDownBias};
  for (int x = 0; x < d.experts; ++x) {
    const std::string p = fmt::format("{}.experts.{}.", prefix, x);
    gate_up.parts.insert(gate_up.parts.end(), {p + "gate_proj.weight", p + "up_proj.weight"});
    gate_up_bias.parts.insert(gate_up_bias.parts.end(), {p + "gate_proj.bias", p + "up_proj.bias"});
    down.parts.push_back(p + "down_proj.weight");
    down_bias.parts.push_back(p + "down_proj.bias");
  }
  out.insert(out.end(), {gate_up, gate_up_bias, down, down_bias});
}

}  // namespace

Expected<std::vector<HfTensor>> HfTensorsOf(const Model& m) {
  if (!HasHfForm(m)) {
    return InvalidArgument(
        fmt::format("model '{}' has no Hugging Face checkpoint form (model_type '{}')", m.name, m.hf_type));
  }
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return specs.error();
  const ModelDims& d = *m.dims;
  const std::string& type = m.hf_type;
  std::map<std::string, const WeightSpec*> by_name;
  for (const WeightSpec& w : *specs) by_name.emplace(w.name, &w);
  std::vector<HfTensor> out;
  std::set<std::string> held;  // seam weights already placed
  for (const WeightSpec& w : *specs) {
    if (held.contains(w.name)) continue;
    if (type == "gpt_oss" && w.name.find(".experts.") != std::string::npos) {
      const std::string prefix = w.name.substr(0, w.name.find(".experts."));
      AddGptOssExperts(out, prefix, d, m.hidden);
      for (size_t k = out.size() - 4; k < out.size(); ++k) held.insert(out[k].parts.begin(), out[k].parts.end());
      continue;
    }
    if (d.attention_gate && EndsWith(w.name, ".self_attn.q_proj.weight")) {
      // Qwen3-Next's q_proj gives, per head, its query then its output gate.
      const std::string gate =
          w.name.substr(0, w.name.size() - std::string_view("q_proj.weight").size()) + "gate_proj.weight";
      out.push_back({.name = HfName(type, w.name),
                     .shape = {2 * int64_t{w.rows}, w.cols},
                     .layout = HfLayout::kHeadPairs,
                     .parts = {w.name, gate},
                     .block = d.head_dim});
      held.insert({w.name, gate});
      continue;
    }
    out.push_back({.name = HfName(type, w.name),
                   .shape = ShapeOf(w),
                   .layout = ZeroCentred(type, w.name) ? HfLayout::kZeroCentred : HfLayout::kSame,
                   .parts = {w.name}});
    held.insert(w.name);
  }
  // Every weight placed once, each HF tensor exactly as large as its parts.
  for (const HfTensor& t : out) {
    int64_t size = 1, parts = 0;
    for (int64_t n : t.shape) size *= n;
    for (const std::string& p : t.parts) {
      auto it = by_name.find(p);
      SEAM_CHECK(it != by_name.end(), fmt::format("{}: no weight {}", t.name, p));
      parts += int64_t{it->second->rows} * it->second->cols;
    }
    SEAM_CHECK(size == parts, fmt::format("{} holds {} values; its parts {}", t.name, size, parts));
  }
  SEAM_CHECK(held.size() == specs->size(), "a weight of the model has no place in its checkpoint");
  return out;
}

// Where element `i` of an HF tensor lives: its part and the offset in it.
std::pair<size_t, int64_t> Locate(const HfTensor& t, int64_t i) {
  switch (t.layout) {
    case HfLayout::kSame:
    case HfLayout::kZeroCentred: return {0, i};
    case HfLayout::kHeadPairs: {
      const int64_t cols = t.shape[1], row = i / cols, col = i % cols;
      const int64_t head = row / (2 * t.block), within = row % (2 * t.block);
      return {within < t.block ? 0 : 1, (head * t.block + within % t.block) * cols + col};
    }
    case HfLayout::kExpertsGateUp: {
      const int64_t h = t.shape[1], c2 = t.shape[2];
      const int64_t e = i / (h * c2), row = (i / c2) % h, c = i % c2;
      return {static_cast<size_t>(2 * e + c % 2), (c / 2) * h + row};
    }
    case HfLayout::kExpertsDown: {
      const int64_t width = t.shape[1], h = t.shape[2];
      const int64_t e = i / (width * h), j = (i / h) % width, col = i % h;
      return {static_cast<size_t>(e), col * width + j};
    }
    case HfLayout::kExpertsGateUpBias: {
      const int64_t c2 = t.shape[1], e = i / c2, c = i % c2;
      return {static_cast<size_t>(2 * e + c % 2), c / 2};
    }
    case HfLayout::kExpertsDownBias: return {static_cast<size_t>(i / t.shape[1]), i % t.shape[1]};
  }
  return {0, i};
}

}  // namespace seam

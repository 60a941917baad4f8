// Nemotron-H: Mamba2 mixers, attention and FFN layers from its pattern.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {

Model NemotronH(const Reader& r) {
  Common c = ReadCommon(r, "layer_norm_epsilon", 1e-5);
  ModelDims& d = c.dims;
  const std::string pattern = r.String("hybrid_override_pattern");
  if (pattern.size() != static_cast<size_t>(c.layers)) {
    r.Fail(fmt::format("hybrid_override_pattern has {} characters but num_hidden_layers is {}", pattern.size(),
                       c.layers));
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      r.Fail(fmt::format("hybrid_override_pattern has {} at position {}; use M (mamba mixer), * (attention), "
                         "- (dense MLP) or E (MoE)",
                         Found(json(std::string(1, pattern[i]))), i));
    }
  }
  auto has = [&pattern](char k) { return pattern.find(k) != std::string::npos; };
  d.rope = false;
  d.activation = Activation::kRelu2;
  if (has('*')) {
    ReadAttention(r, c.hidden, d, "num_attention_heads", "num_key_value_heads", {"attention_head_dim", "head_dim"});
  }
  if (has('M')) {
    d.mixer_heads = r.Int("mamba_num_heads", 1, kMaxSize);
    d.mixer_head_dim = r.Int("mamba_head_dim", 1, kMaxSize);
    d.mixer_state = r.Int("ssm_state_size", 1, kMaxSize);
    CheckProduct(r, "mamba_num_heads * mamba_head_dim", d.mixer_heads, d.mixer_head_dim);
    CheckProduct(r, "mamba_num_heads * ssm_state_size", d.mixer_heads, d.mixer_state);
  }
  // intermediate_size: one width, or one per '-' in pattern order.
  std::vector<int> widths;
  if (const json* w = has('-') ? &r.Need("intermediate_size") : r.Given("intermediate_size"); w != nullptr) {
    if (w->is_array()) {
      const auto mlps = static_cast<size_t>(std::count(pattern.begin(), pattern.end(), '-'));
      if (w->size() != mlps) {
        r.Fail(fmt::format("intermediate_size lists {} widths but hybrid_override_pattern has {} MLP layers ('-')",
                           w->size(), mlps));
      }
      for (size_t i = 0; i < w->size(); ++i) {
        widths.push_back(r.ToInt(fmt::format("intermediate_size[{}]", i), (*w)[i], 1, kMaxSize));
      }
      d.intermediate = widths.empty() ? 0 : widths.front();
    } else {
      d.intermediate = r.ToInt("intermediate_size", *w, 1, kMaxSize);
    }
  }
  int top_k = 1;
  if (has('E')) {
    top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
    int shared = r.IntOr("moe_shared_expert_intermediate_size", 0, 0, kMaxSize);
    if (const int n = r.IntOr("n_shared_experts", 1, 0, kMaxSize); n > 1) shared = SharedWidth(r, n, shared);
    d.shared_intermediate = shared;
    d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
    d.renormalize = r.BoolOr("norm_topk_prob", true);
    d.scoring = RouterScoring::kSigmoid;
    d.correction_bias = true;
  }
  Expected<Model> m = HybridModel(has('E') ? "nemotron-3" : "nemotron-h", pattern, c.hidden, d, top_k, widths);
  if (!m) r.Fail(m.error().message);
  return *std::move(m);
}

}  // namespace seam::hf

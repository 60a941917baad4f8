// Qwen3-Next: Gated DeltaNet and full attention layers with a MoE.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {
namespace {

// The Gated DeltaNet mixer, as Qwen3NextGatedDeltaNet reads its config: value
// heads over key heads, each a whole number of value heads per key head.
void ReadGatedDeltaNet(const Reader& r, int hidden, ModelDims& d) {
  d.mixer = MixerKind::kGatedDeltaNet;
  d.mixer_heads = r.Int("linear_num_value_heads", 1, kMaxSize);
  d.mixer_head_dim = r.Int("linear_value_head_dim", 1, kMaxSize);
  d.mixer_state = r.Int("linear_key_head_dim", 1, kMaxSize);
  d.mixer_groups = r.Int("linear_num_key_heads", 1, kMaxSize);
  d.mixer_conv = r.IntOr("linear_conv_kernel_dim", 4, 1, kMaxSize);
  CheckProduct(r, "linear_num_value_heads * linear_value_head_dim", d.mixer_heads, d.mixer_head_dim);
  CheckProduct(r, "linear_num_value_heads * linear_key_head_dim", d.mixer_heads, d.mixer_state);
  CheckProduct(r, "linear_num_key_heads * linear_key_head_dim", d.mixer_groups, d.mixer_state);
  const int64_t conv = 2 * int64_t{d.mixer_groups} * d.mixer_state + int64_t{d.mixer_heads} * d.mixer_head_dim;
  CheckProduct(r, "the Gated DeltaNet conv's channels * linear_conv_kernel_dim", conv, d.mixer_conv);
  CheckProduct(r, "the Gated DeltaNet in_proj_qkvz's outputs * hidden_size",
               conv + int64_t{d.mixer_heads} * d.mixer_head_dim, hidden);
  if (d.mixer_heads % d.mixer_groups != 0) {
    r.Fail(
        fmt::format("linear_num_value_heads {} is not a multiple of linear_num_key_heads {}; each key head "
                    "serves a whole number of value heads",
                    d.mixer_heads, d.mixer_groups));
  }
  // hidden_act is also the conv's activation (and the experts', which seam runs as SwiGLU).
  if (const std::string act = r.StringOr("hidden_act", "silu"); act != "silu") {
    r.Fail(fmt::format("hidden_act is {}; seam's Qwen3-Next runs silu in its Gated DeltaNet conv and its experts",
                       Found(json(act))));
  }
}

}  // namespace

Model Qwen3Next(const Reader& r) {
  // Qwen3NextConfig's defaults: 2 key/value heads of 256, a quarter of each
  // turning, a shared expert of 512.
  Common c = ReadGqaDecoder(r, 1e-6, 10000.0, {.kv_given = true, .head_dim_given = true});
  r.Need("partial_rotary_factor");
  ModelDims& d = c.dims;
  d.rope_fraction = r.NumberOr("partial_rotary_factor", 1.0, 0, 1);
  d.attention_gate = true;
  d.qk_norm = true;
  OnlyDefault(r, "attention_bias", false, "seam's Qwen3-Next attention has no bias");
  ReadGatedDeltaNet(r, c.hidden, d);
  const int top_k = ReadExperts(r, d, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
  r.Need("shared_expert_intermediate_size");
  d.shared_intermediate = r.IntOr("shared_expert_intermediate_size", 0, 0, kMaxSize);
  d.shared_expert_gate = d.shared_intermediate > 0;  // Qwen3NextSparseMoeBlock gates its shared expert
  d.renormalize = r.BoolOr("norm_topk_prob", true);
  d.intermediate = r.IntOr("intermediate_size", 0, 1, kMaxSize);
  // Every layer of seam's qwen3-next has a MoE.
  if (const int step = r.IntOr("decoder_sparse_step", 1, 1, kMaxLayers); step != 1 && c.layers > 1) {
    r.Fail(fmt::format("decoder_sparse_step {} makes some layers dense; seam's qwen3-next has a MoE in every layer",
                       step));
  }
  if (const json* only = r.Given("mlp_only_layers"); only != nullptr && !r.ToList("mlp_only_layers", *only).empty()) {
    r.Fail("mlp_only_layers is not empty; seam's qwen3-next has a MoE in every layer");
  }
  const int every = r.IntOr("full_attention_interval", 4, 1, kMaxLayers);
  const std::vector<std::string> types = LayerTypes(r, c.layers);
  for (size_t l = 0; l < types.size(); ++l) {
    const char* want = (l + 1) % static_cast<size_t>(every) == 0 ? "full_attention" : "linear_attention";
    if (types[l] != want) {
      r.Fail(fmt::format("layer_types[{}] is {} but full_attention_interval {} makes layer {} \"{}\"", l,
                         Found(json(types[l])), every, l, want));
    }
  }
  return MixerMoeModel("qwen3-next", c.layers, c.hidden, d, top_k, every);
}

}  // namespace seam::hf

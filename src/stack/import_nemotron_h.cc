// Nemotron-H: Mamba2 mixers, attention and FFN layers from its pattern.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {
namespace {

// A key under the name NemotronHConfig takes it by, or by its older alias,
// which wins when given (as HF's __post_init__ has it).
const char* KeyOf(const Reader& r, const char* key, const char* alias) {
  return r.Given(alias) != nullptr ? alias : key;
}

// time_step_limit: [min, max] that dt is clamped to; max may be Infinity
// (Python's json writes it bare; the reader turns it into the string).
void ReadTimeStepLimit(const Reader& r, ModelDims& d) {
  const char* key = KeyOf(r, "time_step_limit", "mamba_dt_limit");
  const json* v = r.Given(key);
  if (v == nullptr) return;  // HF's default: (0, inf)
  const json& limit = r.ToList(r.Path(key), *v);
  if (limit.size() != 2) r.Fail(fmt::format("{} has {} entries; it is [min, max]", r.Path(key), limit.size()));
  d.mixer_dt_min = r.ToNumber(r.Path(key) + "[0]", limit[0], 0, 1e30, true);
  if (limit[1] != "Infinity") d.mixer_dt_max = r.ToNumber(r.Path(key) + "[1]", limit[1], d.mixer_dt_min, 1e30, false);
}

// The Mamba2 mixer, as NemotronHMamba2Mixer reads its config; what seam does
// not compute is refused. chunk_size only blocks the same recurrence, which
// seam runs row by row.
void ReadMamba2(const Reader& r, int hidden, ModelDims& d) {
  d.mixer = MixerKind::kMamba2;
  d.mixer_heads = r.Int("mamba_num_heads", 1, kMaxSize);
  d.mixer_head_dim = r.Int("mamba_head_dim", 1, kMaxSize);
  d.mixer_state = r.Int("ssm_state_size", 1, kMaxSize);
  d.mixer_groups = r.IntOr(KeyOf(r, "n_groups", "mamba_n_groups"), 8, 1, kMaxSize);
  d.mixer_conv = r.IntOr(KeyOf(r, "conv_kernel", "mamba_d_conv"), 4, 1, kMaxSize);
  CheckProduct(r, "mamba_num_heads * mamba_head_dim", d.mixer_heads, d.mixer_head_dim);
  CheckProduct(r, "mamba_num_heads * ssm_state_size", d.mixer_heads, d.mixer_state);
  CheckProduct(r, "n_groups * ssm_state_size", d.mixer_groups, d.mixer_state);
  const int64_t width = int64_t{d.mixer_heads} * d.mixer_head_dim;
  const int64_t conv = width + 2 * int64_t{d.mixer_groups} * d.mixer_state;
  CheckProduct(r, "the Mamba2 conv's channels * conv_kernel", conv, d.mixer_conv);
  CheckProduct(r, "the Mamba2 in_proj's outputs * hidden_size", width + conv + d.mixer_heads, hidden);
  if (d.mixer_heads % d.mixer_groups != 0) {
    r.Fail(fmt::format("mamba_num_heads {} is not a multiple of n_groups {}; each group's B and C serve whole heads",
                       d.mixer_heads, d.mixer_groups));
  }
  ReadTimeStepLimit(r, d);
  if (const std::string act = r.StringOr("mamba_hidden_act", "silu"); act != "silu") {
    r.Fail(fmt::format("mamba_hidden_act is {}; seam's Mamba2 conv is followed by silu", Found(json(act))));
  }
  if (!r.BoolOr(KeyOf(r, "use_conv_bias", "mamba_conv_bias"), true)) {
    r.Fail("use_conv_bias is false; seam's Mamba2 conv has a bias");
  }
  if (r.BoolOr("use_bias", false)) r.Fail("use_bias is true; seam's Mamba2 in_proj and out_proj have no bias");
  OnlyDefault(r, "mamba_proj_bias", false, "seam's Mamba2 in_proj and out_proj have no bias");
  if (const std::string dtype = r.StringOr("mamba_ssm_cache_dtype", "float32"); dtype != "float32") {
    r.Fail(fmt::format("mamba_ssm_cache_dtype is {}; seam keeps the Mamba2 state in float32", Found(json(dtype))));
  }
}

}  // namespace

Model NemotronH(const Reader& r) {
  Common c = ReadCommon(r, "layer_norm_epsilon", 1e-5);
  ModelDims& d = c.dims;
  const std::string pattern = r.String("hybrid_override_pattern");
  if (pattern.size() != static_cast<size_t>(c.layers)) {
    r.Fail(
        fmt::format("hybrid_override_pattern has {} characters but num_hidden_layers is {}", pattern.size(), c.layers));
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      r.Fail(
          fmt::format("hybrid_override_pattern has {} at position {}; use M (mamba mixer), * (attention), "
                      "- (dense MLP) or E (MoE)",
                      Found(json(std::string(1, pattern[i]))), i));
    }
  }
  // transformers 5 takes the layer list as layers_block_type (alias
  // layer_types) before the pattern; seam reads the pattern alone.
  for (const char* key : {"layers_block_type", "layer_types"}) {
    OnlyDefault(r, key, nullptr, "seam reads the layers from hybrid_override_pattern");
  }
  auto has = [&pattern](char k) { return pattern.find(k) != std::string::npos; };
  d.rope = false;  // NemotronH's attention has no positional embedding
  d.activation = Activation::kRelu2;
  OnlyDefault(r, "mlp_hidden_act", "relu2", "seam's Nemotron-H MLPs and experts run ReLU squared");
  OnlyDefault(r, "mlp_bias", false, "seam's Nemotron-H MLPs and experts have no bias");
  OnlyDefault(r, "attention_bias", false, "seam's Nemotron-H attention has no bias");
  OnlyDefault(r, "sliding_window", nullptr, "seam's Nemotron-H attention is over the whole sequence");
  OnlyDefault(r, "residual_in_fp32", false, "seam keeps the residual in the run's dtype");
  // A part's keys are read when its layers are in the pattern or its keys are
  // given: a config cut to fewer layers describes the same model.
  if (has('*') || r.Given("num_attention_heads") != nullptr) {
    // NemotronHConfig's defaults: 8 key/value heads of 128.
    ReadAttention(r, c.hidden, d, "num_attention_heads", "num_key_value_heads", {"attention_head_dim", "head_dim"},
                  {.kv_given = true, .head_dim_given = true});
  }
  if (has('M') || r.Given("mamba_num_heads") != nullptr) ReadMamba2(r, c.hidden, d);
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
  if (has('E') || r.Given("n_routed_experts") != nullptr) {
    top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
    // One shared expert of moe_shared_expert_intermediate_size, whatever
    // n_shared_experts says (NemotronHMoE replaces DeepSeek-V3's shared
    // experts, the ones n_shared_experts sizes).
    r.Need("moe_shared_expert_intermediate_size");  // NemotronHConfig's default: 7688
    d.shared_intermediate = r.IntOr("moe_shared_expert_intermediate_size", 0, 0, kMaxSize);
    OnlyDefault(r, "moe_latent_size", nullptr,
                "seam's Nemotron-H experts work at hidden_size, with no latent projection");
    d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
    d.renormalize = r.BoolOr("norm_topk_prob", true);
    d.scoring = RouterScoring::kSigmoid;
    d.correction_bias = true;
    // NemotronHTopkRouter is DeepSeek-V3's router: groups scored by their
    // best two experts (n_group and topk_group default to 1, one group).
    d.expert_groups = ReadExpertGroups(r, d, top_k, 1, 1, GroupScore::kTopTwoSum);
  }
  Expected<Model> m = HybridModel(has('E') ? "nemotron-3" : "nemotron-h", pattern, c.hidden, d, top_k, widths);
  if (!m) r.Fail(m.error().message);
  return *std::move(m);
}

}  // namespace seam::hf

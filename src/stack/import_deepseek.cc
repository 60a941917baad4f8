// DeepSeek-V2/V3, Kimi-K2 and DeepSeek-V4: MLA attention and routed experts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {
namespace {

// A string key that must hold one of `supported` (the first is its default).
std::string OneOf(const Reader& r, const char* key, const std::string& family,
                  std::initializer_list<const char*> supported) {
  const std::string v = r.StringOr(key, *supported.begin());
  for (const char* s : supported) {
    if (v == s) return v;
  }
  r.Fail(fmt::format("{} {} is not supported for {}; supported: {}", key, Found(json(v)), family,
                     fmt::join(supported, ", ")));
}

// DeepSeek-V3 and Kimi-K2 route as Hugging Face's DeepseekV3TopkRouter:
// sigmoid scores, chosen with the correction bias within the best groups
// (each scored by its best two), weighed unbiased, renormalised with 1e-20
// added to the sum, then scaled. Defaults are DeepseekV3Config's.
void ReadV3Routing(const Reader& r, const std::string& family, int top_k, ModelDims& d) {
  OneOf(r, "scoring_func", family, {"sigmoid"});
  OneOf(r, "topk_method", family, {"noaux_tc"});
  d.scoring = RouterScoring::kSigmoid;
  d.correction_bias = true;
  d.expert_groups = ReadExpertGroups(r, d, top_k, 8, 4, GroupScore::kTopTwoSum);
  d.renormalize = r.BoolOr("norm_topk_prob", true);
  d.renormalize_eps = 1e-20;
  d.routed_scaling = r.NumberOr("routed_scaling_factor", 2.5, 0, 1e6);
}

// DeepSeek-V2 routes as transformers' DeepseekV2Moe: softmax scores, the top
// k of all experts (greedy) or of the best topk_group groups, each scored by
// its best expert (group_limited_greedy), weighed by their scores times
// routed_scaling_factor. transformers never renormalises them
// (norm_topk_prob is not read), unlike DeepSeek's remote MoEGate.
void ReadV2Routing(const Reader& r, const std::string& family, int top_k, ModelDims& d) {
  OneOf(r, "scoring_func", family, {"softmax"});
  const std::string method = OneOf(r, "topk_method", family, {"greedy", "group_limited_greedy"});
  d.scoring = RouterScoring::kSoftmax;
  d.correction_bias = false;
  if (method == "group_limited_greedy") {
    // Transformers' DeepseekV2Config has no default group count.
    for (const char* key : {"n_group", "topk_group"}) {
      if (r.Given(key) == nullptr) {
        r.Fail(fmt::format("missing key '{}' (topk_method group_limited_greedy needs n_group and topk_group)",
                           r.Path(key)));
      }
    }
    d.expert_groups = ReadExpertGroups(r, d, top_k, 1, 1, GroupScore::kMax);
  }
  (void)top_k;
  d.renormalize = false;
  d.renormalize_eps = 1e-20;
  d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
}

}  // namespace

// DeepSeek-V2/V3 and Kimi-K2: MLA and a MoE on every moe_layer_freq-th
// layer from first_k_dense_replace on.
Model Deepseek(const Reader& r, const std::string& name, bool v3) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  const std::string family = r.String("model_type");
  RefuseActivationAndBiases(r, /*mlp_bias=*/true);
  d.heads = r.Int("num_attention_heads", 1, kMaxSize);
  d.kv_heads = d.heads;  // MLA: num_key_value_heads is unused
  // q_lora_rank null projects queries directly; absent, the config classes
  // default to 1536: it must be given.
  r.Need("q_lora_rank");
  d.mla.q_lora = r.IntOr("q_lora_rank", 0, 0, kMaxSize);
  d.mla.kv_lora = r.Int("kv_lora_rank", 1, kMaxSize);
  d.mla.qk_nope = r.Int("qk_nope_head_dim", 1, kMaxSize);
  d.mla.qk_rope = r.Int("qk_rope_head_dim", 1, kMaxSize);
  d.mla.v = r.Int("v_head_dim", 1, kMaxSize);
  d.head_dim = d.mla.v;  // the attention output is heads x v_head_dim wide
  CheckProduct(r, "num_attention_heads * (qk_nope_head_dim + qk_rope_head_dim)", d.heads,
               int64_t{d.mla.qk_nope} + d.mla.qk_rope);
  CheckProduct(r, "num_attention_heads * (qk_nope_head_dim + v_head_dim)", d.heads, int64_t{d.mla.qk_nope} + d.mla.v);
  if (d.mla.qk_rope % 2 != 0) {
    r.Fail(fmt::format("qk_rope_head_dim {} is odd; rotary dims turn in pairs", d.mla.qk_rope));
  }
  ReadRope(r, d);
  // DeepSeek's own code pairs rope dims (2i, 2i + 1), as does transformers'
  // DeepSeek-V2; its DeepSeek-V3 does unless rope_interleave is false.
  // Kimi-K2 runs DeepSeek's own code, which has no such key.
  if (family == "kimi_k2") {
    OnlyDefault(r, "rope_interleave", true, "Kimi-K2's code (DeepSeek's own) always pairs rope dims (2i, 2i+1)");
  }
  d.rope_pairing = !v3 || r.BoolOr("rope_interleave", true) ? RopePairing::kInterleaved : RopePairing::kHalf;
  // The config classes' defaults (64 or 256 experts, DeepSeek-V3's 3 dense
  // layers) are not seam's: these are given.
  r.Need("n_routed_experts");
  const int routed = r.IntOr("n_routed_experts", 0, 0, kMaxSize);  // null: a dense model
  if (v3) r.Need("first_k_dense_replace");
  const int first_dense = r.IntOr("first_k_dense_replace", 0, 0, kMaxLayers);
  // transformers' DeepSeek-V3 has a MoE on every layer from
  // first_k_dense_replace on; DeepSeek's own code (Kimi-K2's) reads the key.
  if (family == "deepseek_v3") {
    OnlyDefault(r, "moe_layer_freq", 1,
                "transformers' DeepSeek-V3 has a MoE on every layer from first_k_dense_replace on");
  }
  const int freq = r.IntOr("moe_layer_freq", 1, 1, kMaxLayers);
  auto sparse = [routed, first_dense, freq](int l) { return routed > 0 && l >= first_dense && l % freq == 0; };
  bool any_dense = false;
  for (int l = 0; l < c.layers && !any_dense; ++l) any_dense = !sparse(l);
  d.intermediate = any_dense ? r.Int("intermediate_size", 1, kMaxSize) : r.IntOr("intermediate_size", 0, 1, kMaxSize);
  int top_k = 1;
  if (routed > 0) {
    top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
    r.Need("n_shared_experts");  // the classes' defaults: 2 (V2), 1 (V3)
    d.shared_intermediate = SharedWidth(r, r.IntOr("n_shared_experts", 0, 0, kMaxSize), d.moe_intermediate);
    if (v3) {
      ReadV3Routing(r, family, top_k, d);
    } else {
      ReadV2Routing(r, family, top_k, d);
    }
  }
  return MoeDecoderModel(name, c.layers, c.hidden, d, top_k, {.sparse = sparse});
}

Model DeepseekV4(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d);
  const int streams = r.Int("hc_mult", 1, 64);
  CheckProduct(r, "hc_mult * hidden_size", streams, c.hidden);
  d.hc_sinkhorn_iters = r.IntOr("hc_sinkhorn_iters", 20, 1, 10000);
  const int top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
  d.shared_intermediate = SharedWidth(r, r.IntOr("n_shared_experts", 0, 0, kMaxSize), d.moe_intermediate);
  d.renormalize = r.BoolOr("norm_topk_prob", true);
  d.scoring = ReadScoring(r, "sqrtsoftplus", true);
  d.correction_bias = r.StringOr("topk_method", "noaux_tc") == "noaux_tc";
  d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
  return HyperConnectionModel("deepseek-v4", c.layers, c.hidden, d, top_k, streams, /*dense_layers=*/0);
}

}  // namespace seam::hf

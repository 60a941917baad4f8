// gpt-oss: sliding and full attention layers with sinks, a MoE on every layer.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {

Model GptOss(const Reader& r) {
  // GptOssConfig's defaults: 8 key/value heads of 64.
  Common c = ReadGqaDecoder(r, 1e-5, 150000.0, {.kv_given = true, .head_dim_given = true});
  ModelDims& d = c.dims;
  d.attention_sinks = true;
  // transformers 4's GptOssConfig sets attention_bias true whatever
  // config.json says, transformers 5's reads it: only true runs the same.
  OnlyDefault(r, "attention_bias", true, "transformers releases before 5 always build the attention with biases");
  d.qkv_bias = true;
  // Experts with biases and the clamped SwiGLU (the router has a bias too).
  d.moe_bias = true;
  d.activation = Activation::kClampedSwiGlu;
  d.swiglu_limit = r.NumberOr("swiglu_limit", 7.0, 0.0, 1e6);
  OnlyDefault(r, "swiglu_alpha", 1.702, "seam's clamped SwiGLU has GPT-OSS's sigmoid gain");
  // transformers reads either spelling of top-k.
  const char* top_k_key = r.Given("num_experts_per_tok") != nullptr ? "num_experts_per_tok" : "experts_per_token";
  if (r.Given("num_experts_per_tok") == nullptr && r.Given("experts_per_token") == nullptr) {
    r.Fail("missing key 'num_experts_per_tok' (or 'experts_per_token')");
  }
  const int top_k = ReadExperts(r, d, "num_local_experts", top_k_key, "intermediate_size");
  if (r.Given("num_experts_per_tok") != nullptr && r.Given("experts_per_token") != nullptr) {
    const int other = r.Int("experts_per_token", 1, kMaxSize);
    if (other != top_k) r.Fail(fmt::format("num_experts_per_tok {} and experts_per_token {} disagree", top_k, other));
  }
  // transformers' default: sliding on even layers, full on odd.
  std::vector<bool> sliding(static_cast<size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) sliding[static_cast<size_t>(l)] = l % 2 == 0;
  const std::vector<std::string> types = LayerTypes(r, c.layers);
  for (size_t l = 0; l < types.size(); ++l) {
    const std::string& t = types[l];
    if (t != "sliding_attention" && t != "full_attention") {
      r.Fail(fmt::format("layer_types[{}] is {}; expected \"sliding_attention\" or \"full_attention\"", l,
                         Found(json(t))));
    }
    sliding[l] = t == "sliding_attention";
  }
  const bool any_sliding = std::find(sliding.begin(), sliding.end(), true) != sliding.end();
  const int window = any_sliding ? r.Int("sliding_window", 1, kMaxSize) : 0;
  return MoeDecoderModel(
      "gpt-oss", c.layers, c.hidden, d, top_k,
      {.window = [sliding, window](int l) { return sliding[static_cast<size_t>(l)] ? window : 0; }, .a2a = false});
}

}  // namespace seam::hf

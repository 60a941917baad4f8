// ZAYA1: CCA attention layers (its query heads from cca_num_q_heads) and MoE layers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {

Model Zaya(const Reader& r) {
  Common c = ReadCommon(r, "norm_epsilon", 1e-5);
  ModelDims& d = c.dims;
  // The public copies disagree on num_attention_heads (16 or 8); the CCA
  // query heads are what the weights have, so they win when given.
  const char* heads_key = r.Given("cca_num_q_heads") != nullptr ? "cca_num_q_heads" : "num_attention_heads";
  ReadAttention(r, c.hidden, d, heads_key, "num_query_groups", {"kv_channels"});
  ReadRope(r, d);
  d.rope_fraction = r.NumberOr("partial_rotary_factor", 1.0, 0, 1);
  const int top_k = ReadExperts(r, d, "num_experts", "moe_router_topk", "ffn_hidden_size");
  if (d.moe_intermediate % 2 != 0) {
    r.Fail(
        fmt::format("ffn_hidden_size {} is a merged gate and up projection, so it must be even", d.moe_intermediate));
  }
  d.moe_intermediate /= 2;
  d.renormalize = false;  // the top-1 (or skip) expert keeps its softmax probability
  d.skip_expert = r.BoolOr("zaya_use_mod", false);
  return AlternatingModel("zaya1", c.layers, c.hidden, d, top_k);
}

}  // namespace seam::hf

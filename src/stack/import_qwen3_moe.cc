// Qwen3-MoE: a routed MoE on every layer (or on the decoder_sparse_step-th).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seam/families.h"
#include "stack/hf_reader.h"

namespace seam::hf {

Model Qwen3Moe(const Reader& r) {
  Common c = ReadGqaDecoder(r, 1e-6, 10000.0, {.kv_given = true});  // Qwen3MoeConfig's default: 4
  ModelDims& d = c.dims;
  d.qk_norm = true;
  RefuseActivationAndBiases(r, /*mlp_bias=*/false);
  OnlyDefault(r, "use_sliding_window", false, "seam's Qwen3-MoE attends over the whole sequence");
  const int top_k = ReadExperts(r, d, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
  d.renormalize = r.BoolOr("norm_topk_prob", false);
  const int step = r.IntOr("decoder_sparse_step", 1, 1, kMaxLayers);
  std::vector<bool> sparse(static_cast<size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) sparse[static_cast<size_t>(l)] = (l + 1) % step == 0;
  if (const json* only = r.Given("mlp_only_layers"); only != nullptr) {
    r.ToList("mlp_only_layers", *only);
    for (size_t i = 0; i < only->size(); ++i) {
      sparse[static_cast<size_t>(r.ToInt(fmt::format("mlp_only_layers[{}]", i), (*only)[i], 0, c.layers - 1))] = false;
    }
  }
  const bool any_dense = std::find(sparse.begin(), sparse.end(), false) != sparse.end();
  d.intermediate = any_dense ? r.Int("intermediate_size", 1, kMaxSize) : r.IntOr("intermediate_size", 0, 1, kMaxSize);
  return MoeDecoderModel("qwen3-moe", c.layers, c.hidden, d, top_k,
                         {.sparse = [sparse](int l) { return sparse[static_cast<size_t>(l)]; }});
}

}  // namespace seam::hf

// The built-in catalogue: tiny shapes of each family that keep its stage
// pattern and the facts the binder reads (see reference/models.md §13).
#include <fmt/format.h>

#include "seam/model.h"

namespace seam {

// Tiny shapes keep the distinguishing sizes apart (query width 128 != hidden
// 64, fewer key/value heads than query heads) and split over up to 8 ranks.
Model LlamaModel(int layers) {
  return {.name = "llama",
          .num_layers = layers,
          .hidden = 64,
          .dims = ModelDims{.vocab = 256, .heads = 8, .kv_heads = 2, .head_dim = 16, .rope_theta = 500000.0,
                            .rms_eps = 1e-5, .intermediate = 128},
          .layer = [](int) { return std::vector{AttentionStage(), DenseFfnStage()}; }};
}

Model DeepseekModel(int layers, int hidden, int top_k) {
  return {.name = "deepseek-v2-lite",
          .num_layers = layers,
          .hidden = hidden,
          .dims = ModelDims{.vocab = 256, .heads = 8, .kv_heads = 8, .head_dim = 16, .rms_eps = 1e-6,
                            .intermediate = 2 * hidden, .experts = 8, .moe_intermediate = 32,
                            .shared_intermediate = 64, .renormalize = false},
          .layer = [top_k](int index) {
            // first_k_dense_replace = 1: layer 0 is dense, every later layer sparse.
            StageDecl ffn = index == 0 ? DenseFfnStage() : SparseFfnStage({.top_k = top_k});
            return std::vector{AttentionStage(), ffn};
          }};
}

Expected<Model> NemotronHModel(const std::string& pattern, int hidden) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      return InvalidArgument(fmt::format(
          "nemotron-h pattern '{}' has '{}' at position {}; use M (mamba mixer), * (attention), "
          "- (dense MLP) or E (MoE)",
          pattern, pattern[i], i));
    }
  }
  return Model{.name = "nemotron-h",
               .num_layers = static_cast<int>(pattern.size()),
               .hidden = hidden,
               .dims = ModelDims{.vocab = 256, .heads = 8, .kv_heads = 2, .head_dim = 16, .rope = false,
                                 .rms_eps = 1e-5, .intermediate = 2 * hidden, .activation = Activation::kRelu2,
                                 .experts = 8, .moe_intermediate = 32, .shared_intermediate = 64,
                                 .mixer_heads = 16, .mixer_head_dim = 16, .mixer_state = 16},
               .layer = [pattern](int index) {
                 switch (pattern[static_cast<size_t>(index)]) {
                   case 'M': return std::vector{MixerStage()};
                   case '*': return std::vector{AttentionStage()};
                   case '-': return std::vector{DenseFfnStage()};
                   default: return std::vector{SparseFfnStage({.top_k = 2})};
                 }
               }};
}

Model Zaya1Model(int layers) {
  return {.name = "zaya1",
          .num_layers = layers,
          .hidden = 64,
          .dims = ModelDims{.vocab = 256, .heads = 8, .kv_heads = 2, .head_dim = 16, .rope_theta = 5000000.0,
                            .rms_eps = 1e-5, .experts = 4, .moe_intermediate = 64, .renormalize = false},
          .layer = [](int index) {
            // Even layers are attention, odd layers a top-1 MoE: single-stage appends.
            return std::vector{index % 2 == 0 ? AttentionStage() : SparseFfnStage({.top_k = 1})};
          }};
}

const std::vector<CatalogueEntry>& Catalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"llama", "dense decoder [A F] x 4 (hidden 64, 8 heads, 2 KV heads, SwiGLU)", [] { return LlamaModel(4); }},
      {"deepseek-v2-lite", "MLA + MoE, first layer dense: [A F][A E][A E][A E] (hidden 64, top-3)",
       [] { return DeepseekModel(4, 64, 3); }},
      {"nemotron-h", "hybrid single-stage layers 'M-M*M-' (hidden 128)",
       [] { return NemotronHModel("M-M*M-", 128).value(); }},
      {"zaya1", "single-stage layers alternating attention and top-1 MoE: A E A E (hidden 64)",
       [] { return Zaya1Model(4); }},
  };
  return entries;
}

Expected<Model> CatalogueModel(const std::string& name) {
  std::vector<std::string> names;
  for (const CatalogueEntry& e : Catalogue()) {
    if (e.name == name) return e.make();
    names.push_back(e.name);
  }
  return InvalidArgument(fmt::format("unknown model '{}'; the catalogue has: {} (see `seam models`)", name,
                                     fmt::join(names, ", ")));
}

}  // namespace seam

// The built-in catalogue: tiny shapes of each family that keep its stage
// pattern and the facts the binder reads (see reference/models.md §13).
#include <fmt/format.h>

#include "seam/model.h"

namespace seam {

Model LlamaModel(int layers) {
  return {.name = "llama",
          .num_layers = layers,
          .hidden = 64,
          .layer = [](int) { return std::vector{AttentionStage(), DenseFfnStage()}; }};
}

Model DeepseekModel(int layers, int hidden, int top_k) {
  return {.name = "deepseek-v2-lite",
          .num_layers = layers,
          .hidden = hidden,
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
          .layer = [](int index) {
            // Even layers are attention, odd layers a top-1 MoE: single-stage appends.
            return std::vector{index % 2 == 0 ? AttentionStage() : SparseFfnStage({.top_k = 1})};
          }};
}

const std::vector<CatalogueEntry>& Catalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"llama", "dense decoder [A F] x 2 (hidden 64)", [] { return LlamaModel(2); }},
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

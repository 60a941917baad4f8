#include "seam/families.h"

#include <fmt/format.h>

#include <algorithm>

namespace seam {

int AttentionGatherWidth(int hidden, const ModelDims& d) {
  if (d.mla.kv_lora > 0 && d.mla.q_lora > 0) return d.mla.q_lora + d.mla.kv_lora + d.mla.qk_rope;
  return hidden;
}

namespace {

StageDecl Attention(int hidden, const ModelDims& d, int window = 0) {
  return AttentionStage({.gather_width = AttentionGatherWidth(hidden, d), .window = window});
}

}  // namespace

Model DenseDecoderModel(const std::string& name, int layers, int hidden, const ModelDims& d) {
  const StageDecl a = Attention(hidden, d);
  return {.name = name,
          .num_layers = layers,
          .hidden = hidden,
          .dims = d,
          .layer =
              [a](int) {
                return std::vector{a, DenseFfnStage()};
              },
          .declared_layers = layers};
}

Model MoeDecoderModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k,
                      const MoeLayout& layout) {
  return {.name = name,
          .num_layers = layers,
          .hidden = hidden,
          .dims = d,
          .layer =
              [=](int index) {
                const StageDecl ffn =
                    layout.sparse(index) ? SparseFfnStage({.top_k = top_k, .a2a = layout.a2a}) : DenseFfnStage();
                return std::vector{Attention(hidden, d, layout.window(index)), ffn};
              },
          .declared_layers = layers};
}

Expected<Model> HybridModel(const std::string& name, const std::string& pattern, int hidden, const ModelDims& d,
                            int top_k, const std::vector<int>& mlp_widths) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      return InvalidArgument(fmt::format(
          "{} pattern '{}' has '{}' at position {}; use M (mamba mixer), * (attention), - (dense MLP) or E (MoE)", name,
          pattern, pattern[i], i));
    }
  }
  if (pattern.empty()) return InvalidArgument(fmt::format("{} pattern is empty", name));
  const auto mlps = static_cast<size_t>(std::count(pattern.begin(), pattern.end(), '-'));
  if (!mlp_widths.empty() && mlp_widths.size() != mlps) {
    return InvalidArgument(fmt::format("{} pattern '{}' has {} MLP layers ('-') but {} widths are given", name, pattern,
                                       mlps, mlp_widths.size()));
  }
  std::vector<int> widths(pattern.size(), 0);  // per layer, in pattern order
  for (size_t i = 0, k = 0; i < pattern.size() && !mlp_widths.empty(); ++i) {
    if (pattern[i] == '-') widths[i] = mlp_widths[k++];
  }
  return Model{.name = name,
               .num_layers = static_cast<int>(pattern.size()),
               .hidden = hidden,
               .dims = d,
               .layer =
                   [=](int index) {
                     switch (pattern[static_cast<size_t>(index)]) {
                       case 'M': return std::vector{MixerStage()};
                       case '*': return std::vector{Attention(hidden, d)};
                       case '-': return std::vector{DenseFfnStage({.width = widths[static_cast<size_t>(index)]})};
                       default: return std::vector{SparseFfnStage({.top_k = top_k})};
                     }
                   },
               .declared_layers = static_cast<int>(pattern.size())};
}

Model AlternatingModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k) {
  return {.name = name,
          .num_layers = layers,
          .hidden = hidden,
          .dims = d,
          .layer =
              [=](int index) {
                return std::vector{index % 2 == 0 ? Attention(hidden, d) : SparseFfnStage({.top_k = top_k})};
              },
          .declared_layers = layers};
}

Model MixerMoeModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k,
                    int attention_every) {
  return {.name = name,
          .num_layers = layers,
          .hidden = hidden,
          .dims = d,
          .layer =
              [=](int index) {
                const bool full = (index + 1) % attention_every == 0;
                return std::vector{full ? Attention(hidden, d) : MixerStage(), SparseFfnStage({.top_k = top_k})};
              },
          .declared_layers = layers};
}

Model NasModel(const std::string& name, int hidden, const ModelDims& d, const std::vector<NasBlock>& blocks) {
  return {.name = name,
          .num_layers = static_cast<int>(blocks.size()),
          .hidden = hidden,
          .dims = d,
          .layer =
              [=](int index) {
                const NasBlock& b = blocks[static_cast<size_t>(index)];
                StageDecl attention = NoOpStage();
                if (b.attention == NasBlock::Part::kPresent) {
                  attention = AttentionStage({.gather_width = hidden, .kv_heads = b.kv_heads});
                } else if (b.attention == NasBlock::Part::kLinear) {
                  attention = LinearStage();
                }
                StageDecl ffn = NoOpStage();
                if (b.ffn == NasBlock::Part::kPresent) ffn = DenseFfnStage({.width = b.ffn_width});
                if (b.ffn == NasBlock::Part::kLinear) ffn = LinearStage();
                return std::vector{attention, ffn};
              },
          .declared_layers = static_cast<int>(blocks.size())};
}

Model HyperConnectionModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k, int streams,
                           int dense_layers) {
  const UpdateKind hc = UpdateKind::kHyperConnection;
  return {
      .name = name,
      .num_layers = layers,
      .hidden = hidden,
      .residual_streams = streams,
      .dims = d,
      .layer =
          [=](int index) {
            const StageDecl a = AttentionStage(
                {.sum = AttentionSum::kReducesItself, .gather_width = AttentionGatherWidth(hidden, d), .update = hc});
            const StageDecl ffn =
                index < dense_layers ? DenseFfnStage({.update = hc}) : SparseFfnStage({.top_k = top_k, .update = hc});
            return std::vector{a, ffn};
          },
      .declared_layers = layers};
}

}  // namespace seam

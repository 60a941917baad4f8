// seam/families.h — the shared declaration function of each model family,
// built from its sizes. The catalogue's tiny shapes and the Hugging Face
// config importer both build models through these, so a family is declared
// in one place whatever its size.
//
//   Model m = MoeDecoderModel("qwen3-moe", 48, 2048, dims, /*top_k=*/8,
//                             [](int) { return true; });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "seam/model.h"

namespace seam {

// Layers of [attention, dense FFN] (Llama, Qwen3).
Model DenseDecoderModel(const std::string& name, int layers, int hidden, const ModelDims& d);

// Layers of [attention, FFN] where `sparse(layer)` says which FFNs are MoE
// (Qwen3-MoE, GPT-OSS, DeepSeek, Kimi). `window(layer)` gives each
// attention's sliding window (0: full); `a2a` says whether the MoE has an
// all-to-all dispatch path.
struct MoeLayout {
  std::function<bool(int layer)> sparse = [](int) { return true; };
  std::function<int(int layer)> window = [](int) { return 0; };
  bool a2a = true;
};
Model MoeDecoderModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k,
                      const MoeLayout& layout = {});

// Single-stage layers from a pattern string: M mixer, * attention,
// - dense FFN, E MoE (Nemotron-H, Nemotron-3). `mlp_widths`, when given,
// holds one width per '-' in pattern order (empty: every MLP is the model's).
Expected<Model> HybridModel(const std::string& name, const std::string& pattern, int hidden, const ModelDims& d,
                            int top_k, const std::vector<int>& mlp_widths = {});

// Single-stage layers alternating attention and a top-k MoE (ZAYA1).
Model AlternatingModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k);

// Layers of [mixer, MoE] with [attention, MoE] every `attention_every`-th
// layer (Qwen3-Next: linear-attention layers, full attention every 4th).
Model MixerMoeModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k,
                    int attention_every);

// Nemotron-NAS block configs: each layer's attention and FFN may be absent,
// a plain linear layer, or sized per layer.
struct NasBlock {
  enum class Part { kPresent, kNoOp, kLinear };
  Part attention = Part::kPresent;
  int kv_heads = 0;  // 0: the model's
  Part ffn = Part::kPresent;
  int ffn_width = 0;  // 0: the model's
  bool operator==(const NasBlock&) const = default;
};
Model NasModel(const std::string& name, int hidden, const ModelDims& d, const std::vector<NasBlock>& blocks);

// DeepSeek-V4-like hyper-connections: a residual of `streams` streams,
// attentions that complete their own sum so every stage writes its streams at
// its exit. The first `dense_layers` layers have a dense FFN.
Model HyperConnectionModel(const std::string& name, int layers, int hidden, const ModelDims& d, int top_k, int streams,
                           int dense_layers);

// The elements per token an attention all-gathers on input-scattered
// batches: MLA with a query latent gathers its latents, others their input.
int AttentionGatherWidth(int hidden, const ModelDims& d);

}  // namespace seam

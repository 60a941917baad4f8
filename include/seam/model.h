// seam/model.h — a model as a stack of stages, declared by one shared
// function of the layer index.
//
// Every pipeline rank calls the same `layer` function for its own layers and
// for its neighbours, so both ranks at a cut resolve the stage there
// identically. A model never mentions TP, DP, EP or PP.
//
//   Expected<Model> m = CatalogueModel("deepseek-v2-lite");
//   std::vector<StageRef> s = StagesOf(*m, 0, m->num_layers);
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "seam/stage.h"

namespace seam {

// The sizes a model needs to run on numbers (the binder never reads them).
enum class Activation { kSwiGlu, kRelu2 };

struct ModelDims {
  int vocab = 0;
  int heads = 0;  // attention query heads
  int kv_heads = 0;
  int head_dim = 0;
  bool rope = true;
  double rope_theta = 10000.0;
  double rms_eps = 1e-5;
  int intermediate = 0;                     // dense FFN width
  Activation activation = Activation::kSwiGlu;  // dense FFN and experts
  int experts = 0;
  int moe_intermediate = 0;                 // one expert's width
  int shared_intermediate = 0;              // the shared expert's width; 0 for none
  bool renormalize = true;                  // top-k weights rescaled to sum to 1
  int mixer_heads = 0;
  int mixer_head_dim = 0;
  int mixer_state = 0;
  bool operator==(const ModelDims&) const = default;
};

struct Model {
  std::string name;
  int num_layers = 0;
  int hidden = 0;            // elements per token of a stage's output
  int residual_streams = 1;  // hyper-connection streams (1 = a plain residual)
  std::optional<ModelDims> dims;  // what running needs; binding needs only the stages
  // The shared declaration function: the stages of layer `index`, in order.
  std::function<std::vector<StageDecl>(int index)> layer;
};

// One stage of a model, addressed by its position.
struct StageRef {
  int index = 0;  // position among all of the model's stages
  int layer = 0;
  int slot = 0;   // position within its layer
  StageDecl decl;
};

// The stages of layers [first_layer, last_layer), numbered model-wide.
std::vector<StageRef> StagesOf(const Model& m, int first_layer, int last_layer);

// A short pattern of a model's stages, one letter each (A attention, M mixer,
// F dense FFN, E sparse FFN, . no-op), layers of several stages bracketed:
// "[A F][A E][A E]"; single-stage layers unbracketed: "MFMAMF".
std::string PatternOf(const Model& m);

struct CatalogueEntry {
  std::string name;
  std::string summary;
  std::function<Model()> make;
};

const std::vector<CatalogueEntry>& Catalogue();
Expected<Model> CatalogueModel(const std::string& name);

// Builders for the families (used by the catalogue and the benchmarks).
Model LlamaModel(int layers);
// DeepSeek-V2-like: first layer dense, the rest sparse ([A F][A E]...).
Model DeepseekModel(int layers, int hidden, int top_k);
// Nemotron-H-like: one single-stage layer per character of `pattern`
// (M mixer, * attention, - dense FFN, E sparse FFN).
Expected<Model> NemotronHModel(const std::string& pattern, int hidden);
// ZAYA1-like: single-stage layers alternating attention and top-1 MoE.
Model Zaya1Model(int layers);

}  // namespace seam

// seam/weight_specs.h — a model's weights: their names and shapes.
//
// Each weight is one full tensor ([out, in] for a linear layer); every rank
// slices the part it holds.
//
//   Expected<std::vector<WeightSpec>> specs = WeightSpecs(model);
#pragma once

#include <string>
#include <vector>

#include "seam/model.h"

namespace seam {

enum class WeightKind {
  kLinear,     // uniform in [-0.05, 0.05)
  kNorm,       // 1 + uniform in [-0.05, 0.05)
  kEmbedding,  // uniform in [-0.5, 0.5): inputs of unit-ish size
  kDecay,      // a mixer's log decay rate: uniform in [0, 1)
  kConv,       // a mixer's conv tap: uniform in [-0.5, 0.5), so a few taps keep their input's size
};

// How the ranks that compute a stage hold one of its matrices.
enum class Held {
  kSplit,   // split over the stage's shard group (seam/stage_shape.h); routed experts spread over it
  kWhole,   // whole on each of them: MLA's down-projections, a router, a shared expert's gate
  kShared,  // a shared expert: split over TP under a TP MoE, whole on each rank under an all-to-all
};

struct WeightSpec {
  std::string name;
  int rows = 0;
  int cols = 0;
  WeightKind kind = WeightKind::kLinear;
  int stage = -1;            // the stage that computes with it; -1 for the embedding, final norm and stream head
  bool vector = false;       // one-dimensional in a checkpoint (norms, biases, per-head scalars); rows is 1
  Held held = Held::kSplit;  // vectors are whole wherever they are read
};

// Where a stage's weights live: "model.layers.3.self_attn" (attention),
// ".mixer", ".mlp" (dense and sparse FFN).
std::string StagePrefix(const StageRef& s);
// The stage's input norm: input_layernorm for the first stage of a layer,
// post_attention_layernorm for the second, norm<k> beyond.
std::string StageNormName(const StageRef& s);
inline constexpr const char* kEmbeddingName = "model.embed_tokens.weight";
inline constexpr const char* kFinalNormName = "model.norm.weight";
inline constexpr const char* kLmHeadName = "lm_head.weight";
// Hyper-connections: the coefficients that collapse the streams before the final norm.
inline constexpr const char* kStreamHeadName = "model.hc_head.weight";

// Every weight the model runs with; an error when the model has no dims or
// a stage's sizes do not fit.
Expected<std::vector<WeightSpec>> WeightSpecs(const Model& m);

}  // namespace seam

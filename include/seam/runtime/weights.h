// seam/runtime/weights.h — a model's weights: their names and shapes, generated
// deterministically, or loaded from a checkpoint.
//
// Each weight is one full tensor ([out, in] for a linear layer); every rank
// reads the part it holds in place (MatrixView), so the weights must outlive
// the kernels built on them. Generated values come from (seed, name) alone,
// scaled like the seed PR's dummy weights (about 0.05, norm weights near
// 1.0) and different everywhere, so a mixed-up shard or a sum taken twice
// changes the output.
//
//   Expected<Weights> w = GenerateWeights(model, /*seed=*/1, Dtype::kBf16);
//   const Tensor& q = w->at("model.layers.0.self_attn.q_proj.weight");
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/weight_specs.h"
#include "seam/runtime/tensor.h"

namespace seam {

class Weights {
 public:
  Weights() = default;
  // Scans every tensor for NaNs and infinities once, here: the weights are
  // immutable, and a run checks them before it starts.
  explicit Weights(std::map<std::string, Tensor> tensors);
  const Tensor& at(const std::string& name) const;  // SEAM_CHECK that it exists
  bool contains(const std::string& name) const { return tensors_.count(name) > 0; }
  const std::map<std::string, Tensor>& all() const { return tensors_; }
  // Where the first NaN or infinity of a weight is (FirstNonFinite); empty
  // when it is finite.
  std::string NonFiniteIn(const std::string& name) const;

 private:
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::string> non_finite_;  // only the weights that are not finite
};

Expected<Weights> GenerateWeights(const Model& m, uint64_t seed, Dtype d);
// One generated weight: what GenerateWeights gives for this spec.
Tensor GenerateWeight(const WeightSpec& spec, uint64_t seed, Dtype d);
// Checks that `w` holds every weight of the model with its shape.
Status CheckWeights(const Model& m, const Weights& w);

}  // namespace seam

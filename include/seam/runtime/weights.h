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
//   MatrixView q = w->at("model.layers.0.self_attn.q_proj.weight");
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/runtime/tensor.h"
#include "seam/weight_specs.h"

namespace seam {

// One weight as it is kept. A weight of more than one row whose values are
// all bf16 values (what a bf16 run's weights are) is kept as their upper 16
// bits, so a bf16 run's matrices take half the memory; any other weight
// (vectors, fp32 values) as floats. view() shows the same values either way.
class StoredWeight {
 public:
  explicit StoredWeight(Tensor t);
  // Made a block of rows at a time: fill(first_row, block) sets every value
  // of `block` (rows [first_row, first_row + block.rows())), so a weight
  // kept in 16 bits never has all of its floats at once.
  using RowFill = std::function<void(int first_row, Tensor& block)>;
  StoredWeight(int rows, int cols, const RowFill& fill);
  MatrixView view() const;
  Dtype storage() const { return storage_; }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  size_t bytes() const { return floats_.size() * sizeof(float) + bits_.size() * sizeof(uint16_t); }
  // Where its first NaN or infinity is (FirstNonFinite); empty when finite.
  const std::string& non_finite() const { return non_finite_; }

 private:
  // Appends a block of rows: as halves while every value so far is bf16,
  // else as floats (what was kept as halves widened first).
  void Append(const Tensor& block, int first_row);

  Tensor floats_;
  std::vector<uint16_t> bits_;
  Dtype storage_ = Dtype::kF32;
  int rows_ = 0;
  int cols_ = 0;
  std::string non_finite_;
};

// The bytes a weight of this shape takes in a run of dtype `d` whose values
// are all of that dtype (as StoredWeight keeps it).
int64_t StoredBytes(int rows, int cols, Dtype d);

class Weights {
 public:
  Weights() = default;
  // Scans every tensor for NaNs and infinities once, here: the weights are
  // immutable, and a run checks them before it starts.
  explicit Weights(std::map<std::string, Tensor> tensors);
  explicit Weights(std::map<std::string, StoredWeight> stored);
  MatrixView at(const std::string& name) const;  // SEAM_CHECK that it exists
  bool contains(const std::string& name) const { return stored_.count(name) > 0; }
  bool empty() const { return stored_.empty(); }
  const std::map<std::string, StoredWeight>& all() const { return stored_; }
  // A copy of every weight as floats: for changing some and making new weights.
  std::map<std::string, Tensor> Copies() const;
  // Where the first NaN or infinity of a weight is (FirstNonFinite); empty
  // when it is finite.
  std::string NonFiniteIn(const std::string& name) const;

 private:
  std::map<std::string, StoredWeight> stored_;
};

Expected<Weights> GenerateWeights(const Model& m, uint64_t seed, Dtype d);
// One generated weight: what GenerateWeights gives for this spec.
StoredWeight GenerateWeight(const WeightSpec& spec, uint64_t seed, Dtype d);
// Checks that `w` holds every weight of the model with its shape.
Status CheckWeights(const Model& m, const Weights& w);

}  // namespace seam

// A mixer stage on the share of its heads a rank holds: the parts every
// mixer kind has, and the choice of kind.
//
// A mixer projects its input column-parallel (per head, and per group of
// heads for what a group shares), runs a causal depthwise conv and a
// per-head recurrence over each request's rows in order, gates and norms
// whole heads or groups, and projects back row-parallel: out_proj's columns
// of the rank's heads, as the tree sum of the rank's canonical K-blocks.
// Nothing but out_proj sums across a rank's groups of heads, so a shard
// computes exactly its columns of the whole and only the K-block tree
// differs.
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "numerics/stages.h"

namespace seam::exec {

// What every mixer kind holds: out_proj's columns of this rank's heads (in
// place), the conv's weight [channels, width] and bias (empty for none) of
// this rank's channels (small; gathered from their pieces), and the size of
// the recurrence's state.
struct MixerParts {
  MatrixView out_proj;
  Tensor conv_weight;
  Tensor conv_bias;
  size_t recurrent_size = 0;
  Shard shard;
  Numerics numerics;
};

class MixerKernel {
 public:
  // One request's state: the conv's last (width - 1) input rows, oldest
  // first, and the recurrence's state (fp32).
  struct State {
    std::vector<float> conv;
    std::vector<float> recurrent;
  };

  virtual ~MixerKernel() = default;
  MixerKernel(const MixerKernel&) = delete;
  MixerKernel& operator=(const MixerKernel&) = delete;

  // A fresh state, for a request's first row.
  State NewState() const;
  // The gated, normed output of rows x of one request, in order, continuing
  // `state`: the input of out_proj, rounded.
  virtual Tensor Scan(const Tensor& x, State& state) const = 0;
  // out_proj: the tree sum of this rank's K-blocks.
  Tensor Output(const Tensor& g) const;
  // Rows [first, last) of a batch: one request's tokens, in order,
  // continuing its state (a fresh one at its first token).
  struct Part {
    int first = 0;
    int last = 0;
    State* state = nullptr;
  };
  // Each part scanned on from its state, then out_proj over every row.
  Tensor Run(const Tensor& x, std::span<const Part> parts) const;

  // The causal depthwise conv of rows `in` (one request's, in order,
  // continuing `state`), then SiLU, rounded. Channel c of a row is
  // bias[c] + sum_j weight[c][j] * in[row - (width - 1) + j], taps oldest
  // first, with zeros before the request's first row (Hugging Face's
  // nn.Conv1d with groups = channels and padding width - 1, cut to the
  // sequence).
  Tensor Conv(const Tensor& in, State& state) const;

 protected:
  explicit MixerKernel(MixerParts parts);

  const Numerics& numerics() const { return p_.numerics; }

 private:
  MixerParts p_;
};

// The mixer kernel the model's dims name (ModelDims::mixer).
std::unique_ptr<MixerKernel> MakeMixerKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard,
                                             const Numerics& n);
std::unique_ptr<MixerKernel> MakeMixerKernel(const StageRef&, const Model&, Weights&&, Shard,
                                             const Numerics&) = delete;  // it reads the weights in place

// Row ranges [first, last) of a weight, and of a vector's columns, stacked
// in the order given: a rank's rows of a projection whose outputs it holds
// in several pieces. RowParts gives them as views, for GemmStacked.
using Range = std::pair<int, int>;
std::vector<MatrixView> RowParts(MatrixView w, std::span<const Range> ranges);
Tensor PickRows(MatrixView w, std::span<const Range> ranges);
Tensor PickCols(MatrixView v, std::span<const Range> ranges);

}  // namespace seam::exec

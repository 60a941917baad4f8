// Hyper-connection streams (DeepSeek-V4-like mHC): the residual is `streams`
// copies of the hidden state, [rows, streams * hidden]. Each stage reads a
// weighted mix of the streams and, once its output's sum is complete, writes
// the streams back mixed by a doubly-stochastic (Sinkhorn-normalised) matrix
// plus its output. The coefficients come from the streams themselves, per
// row, so they are computed where the stage reads and kept, row for row,
// until it writes.
#pragma once

#include <string>

#include "numerics/stages.h"

namespace seam::exec {

// A stage's write coefficients, one row per residual row.
struct StreamMix {
  Tensor post;  // [rows, streams]
  Tensor res;   // [rows, streams * streams], row-major per row
};

class StreamKernel {
 public:
  // `prefix` holds .hc_pre/.hc_post/.hc_res weights (a stage), or is the
  // stream head's weight name (the final collapse, which only reads).
  StreamKernel(const Weights& w, const std::string& prefix, bool head, int streams, int hidden, const ModelDims& d,
               const Numerics& n);
  // The kernel reads the weights in place: temporary ones would be gone.
  StreamKernel(Weights&&, const std::string&, bool, int, int, const ModelDims&, const Numerics&) = delete;
  // Every stream starts as the stack's input.
  static Tensor Expand(const Tensor& x, int streams, Dtype d);
  // The mix a stage reads (before its norm); `mix` receives the write coefficients.
  Tensor Read(const Tensor& streams, StreamMix* mix) const;
  // The streams after a stage writes its complete output.
  Tensor Write(const Tensor& streams, const Tensor& out, const StreamMix& mix) const;

 private:
  Tensor Coefficients(const Tensor& streams) const;  // the RMS-normed streams the projections read
  int streams_;
  int hidden_;
  float eps_;
  int sinkhorn_iters_;
  Numerics n_;
  MatrixView pre_, post_, res_;  // in place
};

}  // namespace seam::exec

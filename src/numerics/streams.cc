#include "numerics/streams.h"

#include <cmath>

#include "seam/runtime/gemm.h"

namespace seam::exec {

StreamKernel::StreamKernel(const Weights& w, const std::string& prefix, bool head, int streams, int hidden,
                           const ModelDims& d, const Numerics& n)
    : streams_(streams),
      hidden_(hidden),
      eps_(static_cast<float>(d.rms_eps)),
      sinkhorn_iters_(d.hc_sinkhorn_iters),
      n_(n) {
  if (head) {
    pre_ = w.at(prefix);
    return;
  }
  pre_ = w.at(prefix + ".hc_pre.weight");
  post_ = w.at(prefix + ".hc_post.weight");
  res_ = w.at(prefix + ".hc_res.weight");
}

Tensor StreamKernel::Expand(const Tensor& x, int streams, Dtype d) {
  Tensor out(x.rows(), x.cols() * streams);
  for (int r = 0; r < x.rows(); ++r) {
    for (int s = 0; s < streams; ++s) std::copy(x.row(r), x.row(r) + x.cols(), out.row(r) + s * x.cols());
  }
  RoundToStorage(out, d);
  return out;
}

Tensor StreamKernel::Coefficients(const Tensor& streams) const {
  const std::vector<float> ones(static_cast<size_t>(streams.cols()), 1.0f);
  return RmsNorm(streams, ones, eps_, n_.dtype);
}

Tensor StreamKernel::Read(const Tensor& s, StreamMix* mix) const {
  SEAM_CHECK(s.cols() == streams_ * hidden_, "streams of another width");
  const Tensor h = Coefficients(s);
  const Tensor pre = Gemm(h, pre_);
  Tensor x(s.rows(), hidden_);
  for (int r = 0; r < s.rows(); ++r) {
    for (int c = 0; c < hidden_; ++c) {
      float acc = 0;
      for (int k = 0; k < streams_; ++k) acc = acc + Sigmoid(pre.at(r, k)) * s.at(r, k * hidden_ + c);
      x.at(r, c) = acc;
    }
  }
  RoundToStorage(x, n_.dtype);
  if (mix == nullptr) return x;
  mix->post = Gemm(h, post_);
  for (float& v : mix->post.span()) v = 2.0f * Sigmoid(v);
  // The stream mix: exp of the projection, rows and columns normalised in turn.
  mix->res = Gemm(h, res_);
  const int k = streams_;
  for (int r = 0; r < s.rows(); ++r) {
    float* m = mix->res.row(r);
    for (int i = 0; i < k * k; ++i) m[i] = std::exp(m[i]);
    for (int it = 0; it < sinkhorn_iters_; ++it) {
      for (int i = 0; i < k; ++i) {
        float sum = 0;
        for (int j = 0; j < k; ++j) sum = sum + m[i * k + j];
        for (int j = 0; j < k; ++j) m[i * k + j] = m[i * k + j] / sum;
      }
      for (int j = 0; j < k; ++j) {
        float sum = 0;
        for (int i = 0; i < k; ++i) sum = sum + m[i * k + j];
        for (int i = 0; i < k; ++i) m[i * k + j] = m[i * k + j] / sum;
      }
    }
  }
  return x;
}

Tensor StreamKernel::Write(const Tensor& s, const Tensor& out, const StreamMix& mix) const {
  SEAM_CHECK(mix.res.rows() == s.rows() && out.rows() == s.rows(), "the stream coefficients left their rows");
  const int k = streams_;
  Tensor next(s.rows(), s.cols());
  for (int r = 0; r < s.rows(); ++r) {
    const float* m = mix.res.row(r);
    for (int i = 0; i < k; ++i) {
      for (int c = 0; c < hidden_; ++c) {
        float acc = 0;
        for (int j = 0; j < k; ++j) acc = acc + m[i * k + j] * s.at(r, j * hidden_ + c);
        next.at(r, i * hidden_ + c) = acc + mix.post.at(r, i) * out.at(r, c);
      }
    }
  }
  RoundToStorage(next, n_.dtype);
  return next;
}

}  // namespace seam::exec

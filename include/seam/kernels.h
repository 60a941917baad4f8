// seam/kernels.h — row-wise kernels, shared by the sharded runs and the
// unsharded reference so both do the same arithmetic in the same order.
//
// Every kernel is row-invariant: a row's result depends on that row (and,
// for attention and the mixer, on earlier rows of its own request) and on
// nothing else in the call. Sums run in fixed orders: Dot uses Gemm's eight
// lanes; sequences (softmax, attention, scans) go in index order. Storage
// rounding happens where the comment of each kernel says.
#pragma once

#include <span>
#include <vector>

#include "seam/tensor.h"

namespace seam {

// sum_k a[k]*b[k] in Gemm's lane order.
float Dot(const float* a, const float* b, int n);

// RMSNorm of each row: y = round(w * round(x / sqrt(mean(x^2) + eps))).
Tensor RmsNorm(const Tensor& x, std::span<const float> weight, float eps, Dtype d);

// round(a + b), elementwise.
Tensor Add(const Tensor& a, const Tensor& b, Dtype d);

float Silu(float x);
float Softplus(float x);

// Rotary embedding (the rotate-half form of Hugging Face's Llama) on each of
// `heads` heads of width head_dim in every row, at the row's position; rounds.
void ApplyRope(Tensor& x, int heads, int head_dim, std::span<const int> positions, double theta, Dtype d);

// One query row attending over `count` earlier key/value rows (causal,
// already chosen): softmax(q.k * scale) weighted sum of v, in key order.
// `keys[j]` and `values[j]` point at head_dim floats. Writes head_dim floats.
void AttendRow(const float* q, const float* const* keys, const float* const* values, int count, int head_dim,
               float scale, float* out);

// The activation of an FFN row pair: silu(gate) * up, or relu(up)^2 (gate
// unused); rounds.
void SwiGlu(const Tensor& gate, const Tensor& up, Dtype d, Tensor& out);
void Relu2(const Tensor& up, Dtype d, Tensor& out);

// Router probabilities of one row: softmax over `experts` logits, fp32.
void Softmax(const float* logits, int n, float* probs);

// The top `k` experts of one row by probability (ties to the lower index),
// with their weights (renormalised to sum to 1 when asked), in rank order.
struct Routing {
  std::vector<int> experts;
  std::vector<float> weights;
};
Routing TopK(const float* probs, int n, int k, bool renormalize);

}  // namespace seam

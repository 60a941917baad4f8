// seam/runtime/kernels.h — row-wise kernels, shared by the sharded runs and the
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

#include "seam/model.h"
#include "seam/runtime/tensor.h"

namespace seam {

// sum_k a[k]*b[k] in Gemm's lane order.
float Dot(const float* a, const float* b, int n);

// RMSNorm of each row: y = round(w * round(x / sqrt(mean(x^2) + eps))).
Tensor RmsNorm(const Tensor& x, std::span<const float> weight, float eps, Dtype d);

// round(a + b), elementwise.
Tensor Add(const Tensor& a, const Tensor& b, Dtype d);

float Silu(float x);
float Softplus(float x);
float Sigmoid(float x);

struct RopeParams {
  double theta = 10000.0;
  RopeScaling scaling;  // Llama 3's frequency-dependent scaling, when factor > 0
  YarnScaling yarn;     // YaRN, when factor > 0 (never with Llama 3's)
  RopePairing pairing = RopePairing::kHalf;
};

// YaRN's magnitude correction (Hugging Face's yarn_get_mscale):
// 0.1 * m * ln(factor) + 1 when factor > 1, else 1.
double YarnMscale(double factor, double m);

// Rotary embedding on the first `rotary_dim` dims of each of `heads` heads of
// width head_dim in every row, at the row's position, pairing dims as
// p.pairing says; the rest of each head is left as is. Rounds.
void ApplyRope(Tensor& x, int heads, int head_dim, int rotary_dim, std::span<const int> positions, const RopeParams& p,
               Dtype d);

// One query row attending over `count` earlier key/value rows (causal,
// already chosen): softmax(q.k * scale) weighted sum of v, in key order.
// `keys[j]` point at qk_dim floats, `values[j]` at v_dim floats. A sink
// logit, when given, takes part in the softmax and adds no value
// (GPT-OSS's attention sinks). Writes v_dim floats.
void AttendRow(const float* q, const float* const* keys, const float* const* values, int count, int qk_dim, int v_dim,
               float scale, const float* sink, float* out);

// The activation of an FFN row pair: silu(gate) * up, or relu(up)^2 (gate
// unused); rounds.
void SwiGlu(const Tensor& gate, const Tensor& up, Dtype d, Tensor& out);
void Relu2(const Tensor& up, Dtype d, Tensor& out);
// GPT-OSS's clamped form: (clamp(up, -limit, limit) + 1) * g * sigmoid(1.702 g)
// with g = min(gate, limit); rounds.
void ClampedSwiGlu(const Tensor& gate, const Tensor& up, float limit, Dtype d, Tensor& out);

// Router probabilities of one row: softmax over `experts` logits, fp32.
void Softmax(const float* logits, int n, float* probs);

// The top `k` experts of one row by probability (ties to the lower index),
// with their weights (renormalised to sum to 1 when asked), in rank order.
struct Routing {
  std::vector<int> experts;
  std::vector<float> weights;
};
Routing TopK(const float* probs, int n, int k, bool renormalize);

// How one row's experts are chosen and weighed.
struct RouteRule {
  int k = 1;
  ExpertGroups groups;       // the groups a row may choose from (count 1: all)
  bool renormalize = false;  // weights divided by (their sum + renormalize_eps)
  float renormalize_eps = 0;
  float scaling = 1;  // then multiplied by this
};
// One row's routing over n experts: the top k by `choice` (a row's scores
// plus any selection bias; ties to the lower index) within its kept groups,
// weighed by their `scores`, in rank order.
Routing RouteRow(const float* scores, const float* choice, int n, const RouteRule& rule);

}  // namespace seam

// seam/runtime/kernels.h — row-wise kernels, shared by the sharded runs and the
// unsharded reference so both do the same arithmetic in the same order.
//
// Every kernel is row-invariant: a row's result depends on that row (and,
// for attention and the mixer, on earlier rows of its own request) and on
// nothing else in the call. Sums run in fixed orders: Dot uses Gemm's eight
// lanes; sequences (softmax, attention, scans) go in index order. Storage
// rounding happens where the comment of each kernel says.
#pragma once

#include <cmath>

#include <span>
#include <vector>

#include "seam/model.h"
#include "seam/runtime/tensor.h"
#include "seam/topology.h"

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

// The canonical attention order. The key at position p is in class
// p mod kKeyClasses. Each class keeps its own maximum score, its sum of
// exponentials and its weighted values, in position order. The classes
// merge by a fixed binary tree whose leaves are the classes in
// KeyClassOrder(), the bit-reversed indices: for every n dividing
// kKeyClasses, the classes r, r + n, r + 2n, ... are one aligned subtree, so a
// rank that holds those keys' cache (token p on rank p mod n) can merge its
// own and hand one partial on (decode context parallelism), and the result
// is the same bits whoever holds the keys. (kKeyClasses is in
// seam/topology.h, whose DCP sizes divide it.)
std::span<const int> KeyClassOrder();

// A softmax partial of some keys: their maximum score, sum of exp(score -
// max) and sum of exp(score - max) x value (v_dim wide). No keys: max -inf,
// sum 0.
struct AttentionPartial {
  float max = -INFINITY;
  float sum = 0;
  std::vector<float> acc;
};
// The two partials merged by their log-sum-exp (a first, then b): the
// larger maximum, each side rescaled to it.
AttentionPartial MergePartials(const AttentionPartial& a, const AttentionPartial& b);

// One query row attending over `count` key/value rows at positions
// first_position, first_position + 1, ... (causal, already chosen):
// softmax(q.k * scale) weighted sum of v in the canonical order above.
// `keys[j]` point at qk_dim floats, `values[j]` at v_dim floats. A sink
// logit, when given, takes part in the softmax and adds no value
// (GPT-OSS's attention sinks): it merges at the root, after the classes.
// Writes v_dim floats.
void AttendRow(const float* q, const float* const* keys, const float* const* values, int count, int qk_dim, int v_dim,
               float scale, const float* sink, int first_position, float* out);

// Decode context parallelism, the same order split over n = `stride` ranks.
// One query row's partial over the keys a DCP rank holds, at positions
// first_position, first_position + stride, ... (`count` of them): its
// classes summed as above and merged along their aligned subtree.
AttentionPartial AttendPartial(const float* q, const float* const* keys, const float* const* values, int count,
                               int qk_dim, int v_dim, float scale, int first_position, int stride);
// The n ranks' partials (by_rank[r] of positions r mod n) merged along the
// top of the tree, then the sink at the root as AttendRow merges it: the
// same bits as AttendRow over every key. Consumes the partials.
void MergeRanks(std::span<AttentionPartial> by_rank, int v_dim, const float* sink, float* out);

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

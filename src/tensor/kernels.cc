#include "seam/runtime/kernels.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace seam {

float Dot(const float* a, const float* b, int n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int j = 0; j < 8; ++j) lane[j] = lane[j] + a[k + j] * b[k + j];
  }
  for (int j = 0; k + j < n; ++j) lane[j] = lane[j] + a[k + j] * b[k + j];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

Tensor RmsNorm(const Tensor& x, std::span<const float> weight, float eps, Dtype d) {
  SEAM_CHECK(static_cast<int>(weight.size()) == x.cols(), "norm weight of another width");
  Tensor out(x.rows(), x.cols());
  for (int r = 0; r < x.rows(); ++r) {
    const float* in = x.row(r);
    const float mean = Dot(in, in, x.cols()) / static_cast<float>(x.cols());
    const float inv = 1.0f / std::sqrt(mean + eps);
    float* y = out.row(r);
    for (int c = 0; c < x.cols(); ++c) {
      float v = in[c] * inv;
      if (d == Dtype::kBf16) v = RoundBf16(v);
      y[c] = weight[static_cast<size_t>(c)] * v;
    }
  }
  RoundToStorage(out, d);
  return out;
}

Tensor Add(const Tensor& a, const Tensor& b, Dtype d) {
  SEAM_CHECK(a.rows() == b.rows() && a.cols() == b.cols(), "adding tensors of different shapes");
  Tensor out(a.rows(), a.cols());
  for (size_t i = 0; i < a.size(); ++i) out.data()[i] = a.data()[i] + b.data()[i];
  RoundToStorage(out, d);
  return out;
}

float Silu(float x) { return x / (1.0f + std::exp(-x)); }

float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

double YarnMscale(double factor, double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; }

namespace {

constexpr double kPi = 3.14159265358979323846;

// Llama 3's scaling of inverse frequency `inv`: low frequencies slowed by
// `factor`, high ones kept, a smooth blend between.
double Llama3Frequency(double inv, const RopeScaling& s) {
  const double wavelen = 2 * kPi / inv;
  const double low_wavelen = s.original_positions / s.low_freq_factor;
  const double high_wavelen = s.original_positions / s.high_freq_factor;
  if (wavelen > low_wavelen) return inv / s.factor;
  if (wavelen < high_wavelen) return inv;
  const double smooth = (s.original_positions / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1 - smooth) * inv / s.factor + smooth * inv;
}

// The (fractional) pair index at which a rotary part of `dim` dims turns
// `turns` times over the original context.
double YarnCorrectionDim(double turns, int dim, double theta, int original_positions) {
  return dim * std::log(original_positions / (turns * 2 * kPi)) / (2 * std::log(theta));
}

// YaRN's inverse frequency of pair i: kept below the ramp (pairs that turn
// more than beta_fast times), divided by `factor` above it (fewer than
// beta_slow turns), blended linearly between.
double YarnFrequency(double inv, int i, int dim, double theta, const YarnScaling& y) {
  double low = YarnCorrectionDim(y.beta_fast, dim, theta, y.original_positions);
  double high = YarnCorrectionDim(y.beta_slow, dim, theta, y.original_positions);
  if (y.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // as Hugging Face does, so the ramp has a slope
  const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
  return inv / y.factor * ramp + inv * (1 - ramp);
}

double YarnAttentionFactor(const YarnScaling& y) {
  if (y.attention_factor > 0) return y.attention_factor;
  if (y.mscale != 0 && y.mscale_all_dim != 0) {
    return YarnMscale(y.factor, y.mscale) / YarnMscale(y.factor, y.mscale_all_dim);
  }
  return YarnMscale(y.factor, 1);
}

// The inverse frequency of rotary pair i.
double InverseFrequency(int i, int rotary_dim, const RopeParams& p) {
  const double inv = 1.0 / std::pow(p.theta, (2.0 * i) / rotary_dim);
  if (p.yarn.factor > 0) return YarnFrequency(inv, i, rotary_dim, p.theta, p.yarn);
  if (p.scaling.factor > 0) return Llama3Frequency(inv, p.scaling);
  return inv;
}

}  // namespace

void ApplyRope(Tensor& x, int heads, int head_dim, int rotary_dim, std::span<const int> positions, const RopeParams& p,
               Dtype d) {
  SEAM_CHECK(x.cols() == heads * head_dim && static_cast<int>(positions.size()) == x.rows() && rotary_dim % 2 == 0 &&
                 rotary_dim <= head_dim,
             "rotary embedding of another shape");
  SEAM_CHECK(!(p.yarn.factor > 0 && p.scaling.factor > 0), "two RoPE scalings at once");
  const int half = rotary_dim / 2;
  const double magnitude = p.yarn.factor > 0 ? YarnAttentionFactor(p.yarn) : 1.0;
  // Pair i's two dims: (i, i + half) or (2i, 2i + 1).
  const bool interleaved = p.pairing == RopePairing::kInterleaved;
  const int first_step = interleaved ? 2 : 1, second_offset = interleaved ? 1 : half;
  std::vector<float> cos_t(static_cast<size_t>(half)), sin_t(static_cast<size_t>(half));
  for (int r = 0; r < x.rows(); ++r) {
    for (int i = 0; i < half; ++i) {
      const double inv_freq = InverseFrequency(i, rotary_dim, p);
      const double angle = positions[static_cast<size_t>(r)] * inv_freq;
      cos_t[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle) * magnitude);
      sin_t[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle) * magnitude);
    }
    for (int h = 0; h < heads; ++h) {
      float* v = x.row(r) + h * head_dim;
      for (int i = 0; i < half; ++i) {
        float& first = v[i * first_step];
        float& second = v[i * first_step + second_offset];
        const float a = first;
        const float b = second;
        first = a * cos_t[static_cast<size_t>(i)] - b * sin_t[static_cast<size_t>(i)];
        second = b * cos_t[static_cast<size_t>(i)] + a * sin_t[static_cast<size_t>(i)];
      }
    }
  }
  RoundToStorage(x, d);
}

std::span<const int> KeyClassOrder() {
  static constexpr int kOrder[kKeyClasses] = {0, 4, 2, 6, 1, 5, 3, 7};  // 3-bit reversals of 0..7
  return kOrder;
}

namespace {

// a merged with b in place, a first (MergePartials' rule).
void MergeInto(AttentionPartial& a, const AttentionPartial& b) {
  if (b.sum == 0) return;  // no keys on one side: the other as it is
  if (a.sum == 0) {
    a.max = b.max;
    a.sum = b.sum;
    std::copy(b.acc.begin(), b.acc.end(), a.acc.begin());
    return;
  }
  const float top = std::max(a.max, b.max);
  const float fa = std::exp(a.max - top), fb = std::exp(b.max - top);
  a.sum = a.sum * fa + b.sum * fb;
  for (size_t c = 0; c < a.acc.size(); ++c) a.acc[c] = a.acc[c] * fa + b.acc[c] * fb;
  a.max = top;
}

}  // namespace

AttentionPartial MergePartials(const AttentionPartial& a, const AttentionPartial& b) {
  AttentionPartial out = a;
  out.acc.resize(std::max(a.acc.size(), b.acc.size()), 0.0f);
  MergeInto(out, b);
  return out;
}

namespace {

// Each class's partial of the keys at positions first_position + j x stride:
// the scores' maximum first, then the sums in position order. Classes with
// no key keep max -inf, sum 0.
std::vector<AttentionPartial>& ClassPartials(const float* q, const float* const* keys, const float* const* values,
                                             int count, int qk_dim, int v_dim, float scale, int first_position,
                                             int stride) {
  // Reused by the thread's every call: a prefill makes one a query and head.
  thread_local std::vector<float> score;
  thread_local std::vector<AttentionPartial> classes(kKeyClasses);
  score.resize(static_cast<size_t>(count));
  for (AttentionPartial& p : classes) {
    p.max = -INFINITY;
    p.sum = 0;
    p.acc.assign(static_cast<size_t>(v_dim), 0.0f);
  }
  const auto class_of = [=](int j) { return static_cast<size_t>((first_position + j * stride) % kKeyClasses); };
  for (int j = 0; j < count; ++j) {
    score[static_cast<size_t>(j)] = Dot(q, keys[j], qk_dim) * scale;
    AttentionPartial& p = classes[class_of(j)];
    p.max = std::max(p.max, score[static_cast<size_t>(j)]);
  }
  for (int j = 0; j < count; ++j) {  // each class in position order
    AttentionPartial& p = classes[class_of(j)];
    const float e = std::exp(score[static_cast<size_t>(j)] - p.max);
    p.sum = p.sum + e;
    for (int c = 0; c < v_dim; ++c) p.acc[static_cast<size_t>(c)] = p.acc[static_cast<size_t>(c)] + e * values[j][c];
  }
  return classes;
}

// The tree over `leaves` (slots of the canonical order, left to right):
// neighbours merged level by level into the left one, up to leaves[0]. A
// subtree's leaves, or the roots of the aligned subtrees in their slot
// order, make the same merges as the whole tree makes there.
void MergeLevels(std::span<AttentionPartial* const> leaves) {
  for (size_t width = 1; width < leaves.size(); width *= 2) {
    for (size_t i = 0; i + width < leaves.size(); i += 2 * width) MergeInto(*leaves[i], *leaves[i + width]);
  }
}

// The leaves of the classes r mod n, in their slots' order: one aligned
// subtree. Held in place: AttendRow makes one a query row and head.
struct Leaves {
  std::array<AttentionPartial*, kKeyClasses> at{};
  size_t size = 0;
  std::span<AttentionPartial* const> all() const { return std::span(at).first(size); }
};
Leaves SubtreeOf(std::vector<AttentionPartial>& classes, int residue, int n) {
  Leaves leaves;
  for (int c : KeyClassOrder()) {
    if (c % n == residue) leaves.at[leaves.size++] = &classes[static_cast<size_t>(c)];
  }
  return leaves;
}

// The root's output: with the sink (a logit of its own, no value) merged
// last, divided by its sum.
void Finish(AttentionPartial& root, int v_dim, const float* sink, float* out) {
  if (sink != nullptr) {
    thread_local AttentionPartial sunk;
    sunk.max = *sink;
    sunk.sum = 1;
    sunk.acc.assign(static_cast<size_t>(v_dim), 0.0f);
    MergeInto(root, sunk);
  }
  for (int c = 0; c < v_dim; ++c) out[c] = root.sum == 0 ? 0.0f : root.acc[static_cast<size_t>(c)] / root.sum;
}

// The slot a DCP rank's subtree starts at: where class `residue` sits.
size_t SlotOf(int residue) {
  const std::span<const int> order = KeyClassOrder();
  return static_cast<size_t>(std::find(order.begin(), order.end(), residue) - order.begin());
}

}  // namespace

void AttendRow(const float* q, const float* const* keys, const float* const* values, int count, int qk_dim, int v_dim,
               float scale, const float* sink, int first_position, float* out) {
  std::vector<AttentionPartial>& classes =
      ClassPartials(q, keys, values, count, qk_dim, v_dim, scale, first_position, 1);
  const Leaves leaves = SubtreeOf(classes, 0, 1);
  MergeLevels(leaves.all());
  Finish(*leaves.at[0], v_dim, sink, out);
}

AttentionPartial AttendPartial(const float* q, const float* const* keys, const float* const* values, int count,
                               int qk_dim, int v_dim, float scale, int first_position, int stride) {
  SEAM_CHECK(stride >= 1 && kKeyClasses % stride == 0, "a DCP stride that does not divide the key classes");
  std::vector<AttentionPartial>& classes =
      ClassPartials(q, keys, values, count, qk_dim, v_dim, scale, first_position, stride);
  const int residue = ((first_position % stride) + stride) % stride;
  const Leaves leaves = SubtreeOf(classes, residue, stride);
  MergeLevels(leaves.all());
  return *leaves.at[0];
}

void MergeRanks(std::span<AttentionPartial> by_rank, int v_dim, const float* sink, float* out) {
  const int n = static_cast<int>(by_rank.size());
  SEAM_CHECK(n >= 1 && kKeyClasses % n == 0, "DCP partials that do not split the key classes");
  std::vector<AttentionPartial*> roots(by_rank.size());
  for (int r = 0; r < n; ++r) {
    SEAM_CHECK(by_rank[static_cast<size_t>(r)].acc.size() == static_cast<size_t>(v_dim), "a partial of another width");
    roots[SlotOf(r) / static_cast<size_t>(kKeyClasses / n)] = &by_rank[static_cast<size_t>(r)];
  }
  MergeLevels(roots);
  Finish(*roots.front(), v_dim, sink, out);
}

void SwiGlu(const Tensor& gate, const Tensor& up, Dtype d, Tensor& out) {
  SEAM_CHECK(gate.rows() == up.rows() && gate.cols() == up.cols(), "gate and up of different shapes");
  out = Tensor(gate.rows(), gate.cols());
  for (size_t i = 0; i < gate.size(); ++i) out.data()[i] = Silu(gate.data()[i]) * up.data()[i];
  RoundToStorage(out, d);
}

void ClampedSwiGlu(const Tensor& gate, const Tensor& up, float limit, Dtype d, Tensor& out) {
  SEAM_CHECK(gate.rows() == up.rows() && gate.cols() == up.cols(), "gate and up of different shapes");
  constexpr float kAlpha = 1.702f;
  out = Tensor(gate.rows(), gate.cols());
  for (size_t i = 0; i < gate.size(); ++i) {
    const float g = std::min(gate.data()[i], limit);
    const float u = std::clamp(up.data()[i], -limit, limit);
    out.data()[i] = (u + 1.0f) * (g * Sigmoid(kAlpha * g));
  }
  RoundToStorage(out, d);
}

void Relu2(const Tensor& up, Dtype d, Tensor& out) {
  out = Tensor(up.rows(), up.cols());
  for (size_t i = 0; i < up.size(); ++i) {
    const float r = std::max(0.0f, up.data()[i]);
    out.data()[i] = r * r;
  }
  RoundToStorage(out, d);
}

void Softmax(const float* logits, int n, float* probs) {
  float top = -INFINITY;
  for (int i = 0; i < n; ++i) top = std::max(top, logits[i]);
  float total = 0;
  for (int i = 0; i < n; ++i) {
    probs[i] = std::exp(logits[i] - top);
    total = total + probs[i];
  }
  for (int i = 0; i < n; ++i) probs[i] = probs[i] / total;
}

Routing TopK(const float* probs, int n, int k, bool renormalize) {
  SEAM_CHECK(k >= 1 && k <= n, "top-k outside the experts");
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
  Routing r;
  float total = 0;
  for (int i = 0; i < k; ++i) {
    r.experts.push_back(order[static_cast<size_t>(i)]);
    r.weights.push_back(probs[order[static_cast<size_t>(i)]]);
    total = total + r.weights.back();
  }
  if (renormalize) {
    for (float& w : r.weights) w = w / total;
  }
  return r;
}

namespace {

// A group's selection score: its best member's, or the sum of its best two.
float GroupScoreOf(const float* choice, int size, GroupScore how) {
  float best = -INFINITY, second = -INFINITY;
  for (int e = 0; e < size; ++e) {
    if (choice[e] > best) {
      second = best;
      best = choice[e];
    } else if (choice[e] > second) {
      second = choice[e];
    }
  }
  return how == GroupScore::kMax ? best : best + second;
}

// Zeroes the selection scores of every expert outside the row's best groups.
void KeepBestGroups(std::vector<float>& choice, const ExpertGroups& g) {
  const int n = static_cast<int>(choice.size());
  SEAM_CHECK(g.count >= 1 && n % g.count == 0 && g.keep >= 1 && g.keep <= g.count, "experts do not fall into groups");
  const int size = n / g.count;
  SEAM_CHECK(g.score == GroupScore::kMax || size >= 2, "a group scored by its best two has fewer than two experts");
  std::vector<float> group_score(static_cast<size_t>(g.count));
  for (int i = 0; i < g.count; ++i) {
    group_score[static_cast<size_t>(i)] = GroupScoreOf(&choice[static_cast<size_t>(i * size)], size, g.score);
  }
  std::vector<bool> kept(static_cast<size_t>(g.count), false);
  for (int i : TopK(group_score.data(), g.count, g.keep, false).experts) kept[static_cast<size_t>(i)] = true;
  for (int e = 0; e < n; ++e) {
    if (!kept[static_cast<size_t>(e / size)]) choice[static_cast<size_t>(e)] = 0.0f;
  }
}

}  // namespace

Routing RouteRow(const float* scores, const float* choice, int n, const RouteRule& rule) {
  std::vector<float> select(choice, choice + n);
  if (rule.groups.count > 1) KeepBestGroups(select, rule.groups);
  Routing r = TopK(select.data(), n, rule.k, false);
  float total = 0;
  for (size_t i = 0; i < r.experts.size(); ++i) {
    r.weights[i] = scores[r.experts[i]];
    total = total + r.weights[i];
  }
  if (rule.renormalize) {
    const float denominator = total + rule.renormalize_eps;
    for (float& w : r.weights) w = w / denominator;
  }
  if (rule.scaling != 1.0f) {
    for (float& w : r.weights) w = w * rule.scaling;
  }
  return r;
}

}  // namespace seam

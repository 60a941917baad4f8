#include "numerics/stages.h"

#include <cmath>

#include "seam/runtime/gemm.h"

namespace seam::exec {
namespace {

Tensor Linear(const Tensor& x, MatrixView w, Dtype d) {
  Tensor y = Gemm(x, w);
  RoundToStorage(y, d);
  return y;
}

}  // namespace

// ---- attention ----

namespace {

// Per-head RMSNorm of [rows, heads * head_dim] (Qwen3's query/key norms).
void NormHeads(Tensor& x, int head_dim, MatrixView w, float eps, Dtype d) {
  if (x.empty()) return;
  Tensor per_head(x.rows() * (x.cols() / head_dim), head_dim, std::vector<float>(x.data(), x.data() + x.size()));
  const Tensor normed = RmsNorm(per_head, w.span(), eps, d);
  std::copy(normed.data(), normed.data() + normed.size(), x.data());
}

void AddRowBias(Tensor& x, MatrixView bias) {
  if (bias.empty()) return;
  for (int r = 0; r < x.rows(); ++r) {
    for (int c = 0; c < x.cols(); ++c) x.at(r, c) = x.at(r, c) + bias.at(0, c);
  }
}

// Columns [first, last) of each of `heads` consecutive blocks of `width`.
Tensor HeadColumns(const Tensor& x, int heads, int width, int first, int last) {
  Tensor out(x.rows(), heads * (last - first));
  for (int r = 0; r < x.rows(); ++r) {
    for (int h = 0; h < heads; ++h) {
      std::copy(x.row(r) + h * width + first, x.row(r) + h * width + last, out.row(r) + h * (last - first));
    }
  }
  return out;
}

}  // namespace

AttentionKernel::AttentionKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n,
                                 int dcp)
    : d_(*m.dims), n_(n), shard_(shard), dcp_(dcp) {
  const std::string p = StagePrefix(s);
  SEAM_CHECK(d_.heads % shard.count == 0, "attention heads do not split over the group");
  heads_ = d_.heads / shard.count;
  window_ = s.decl.window;
  rope_ = {.theta = d_.rope_theta, .scaling = d_.rope_scaling, .yarn = d_.yarn, .pairing = d_.rope_pairing};
  const int h0 = shard.index * heads_;
  SEAM_CHECK(dcp >= 1 && shard.count % dcp == 0, "a DCP group that does not split the attention group");
  attend_heads_ = heads_ * dcp;
  attend_h0_ = shard.index / dcp * attend_heads_;
  mla_ = d_.mla.kv_lora > 0;
  if (mla_) {
    const MlaDims& a = d_.mla;
    qk_dim_ = a.qk_nope + a.qk_rope;
    v_dim_ = a.v;
    scale_ = SoftmaxScale();
    kv_heads_ = heads_;  // every head has its own key and value
    kv_first_ = h0;
    if (a.q_lora > 0) {
      q_a_ = w.at(p + ".q_a_proj.weight");
      q_a_norm_ = w.at(p + ".q_a_layernorm.weight");
      q_b_ = w.at(p + ".q_b_proj.weight").Rows(h0 * qk_dim_, (h0 + heads_) * qk_dim_);
    } else {
      q_ = w.at(p + ".q_proj.weight").Rows(h0 * qk_dim_, (h0 + heads_) * qk_dim_);
    }
    kv_a_ = w.at(p + ".kv_a_proj_with_mqa.weight");
    kv_a_norm_ = w.at(p + ".kv_a_layernorm.weight");
    // The keys and values of every head it attends, made from the one latent.
    kv_b_ = w.at(p + ".kv_b_proj.weight")
                .Rows(attend_h0_ * (a.qk_nope + a.v), (attend_h0_ + attend_heads_) * (a.qk_nope + a.v));
    o_ = w.at(p + ".o_proj.weight").Cols(h0 * v_dim_, (h0 + heads_) * v_dim_);
    return;
  }
  const int kv_total = s.decl.kv_heads > 0 ? s.decl.kv_heads : d_.kv_heads;
  const int hd = d_.head_dim;
  qk_dim_ = v_dim_ = hd;
  scale_ = SoftmaxScale();
  group_ = d_.heads / kv_total;
  kv_first_ = h0 / group_;
  kv_heads_ = (h0 + heads_ - 1) / group_ + 1 - kv_first_;
  SEAM_CHECK(attend_h0_ / group_ == kv_first_ && (attend_h0_ + attend_heads_ - 1) / group_ == kv_first_ + kv_heads_ - 1,
             "a DCP group whose ranks hold different key/value heads");
  q_ = w.at(p + ".q_proj.weight").Rows(h0 * hd, (h0 + heads_) * hd);
  k_ = w.at(p + ".k_proj.weight").Rows(kv_first_ * hd, (kv_first_ + kv_heads_) * hd);
  v_ = w.at(p + ".v_proj.weight").Rows(kv_first_ * hd, (kv_first_ + kv_heads_) * hd);
  o_ = w.at(p + ".o_proj.weight").Cols(h0 * hd, (h0 + heads_) * hd);
  if (d_.qkv_bias) {
    q_bias_ = w.at(p + ".q_proj.bias").Cols(h0 * hd, (h0 + heads_) * hd);
    k_bias_ = w.at(p + ".k_proj.bias").Cols(kv_first_ * hd, (kv_first_ + kv_heads_) * hd);
    v_bias_ = w.at(p + ".v_proj.bias").Cols(kv_first_ * hd, (kv_first_ + kv_heads_) * hd);
    // The output bias joins the sum once: in canonical K-block 0.
    if (shard.index == 0) o_bias_ = w.at(p + ".o_proj.bias");
  }
  if (d_.qk_norm) {
    q_norm_ = w.at(p + ".q_norm.weight");
    k_norm_ = w.at(p + ".k_norm.weight");
  }
  if (d_.attention_sinks) sinks_ = w.at(p + ".sinks").Cols(h0, h0 + heads_);
  if (d_.attention_gate) gate_ = w.at(p + ".gate_proj.weight").Rows(h0 * hd, (h0 + heads_) * hd);
}

float AttentionKernel::SoftmaxScale() const {
  double scale = 1.0 / std::sqrt(static_cast<double>(qk_dim_));
  // DeepSeek's MLA under YaRN: its logits are scaled up by mscale(factor, mscale_all_dim)^2.
  if (mla_ && d_.yarn.factor > 0 && d_.yarn.mscale_all_dim != 0) {
    const double m = YarnMscale(d_.yarn.factor, d_.yarn.mscale_all_dim);
    scale = scale * m * m;
  }
  return static_cast<float>(scale);
}

Tensor AttentionKernel::Prepare(const Tensor& x) const {
  if (!mla_ || d_.mla.q_lora == 0) return x;
  const Tensor q_a = Linear(x, q_a_, n_.dtype), kv_a = Linear(x, kv_a_, n_.dtype);
  Tensor out(x.rows(), q_a.cols() + kv_a.cols());
  for (int r = 0; r < x.rows(); ++r) {
    std::copy(q_a.row(r), q_a.row(r) + q_a.cols(), out.row(r));
    std::copy(kv_a.row(r), kv_a.row(r) + kv_a.cols(), out.row(r) + q_a.cols());
  }
  return out;
}

void AttentionKernel::ProjectGqa(const Tensor& x, std::span<const int> positions, Projected& p) const {
  const int hd = d_.head_dim;
  p.q = Gemm(x, q_);
  Tensor k = Gemm(x, k_), v = Gemm(x, v_);
  AddRowBias(p.q, q_bias_);
  AddRowBias(k, k_bias_);
  AddRowBias(v, v_bias_);
  for (Tensor* t : {&p.q, &k, &v}) RoundToStorage(*t, n_.dtype);
  const float eps = static_cast<float>(d_.rms_eps);
  if (d_.qk_norm) {
    NormHeads(p.q, hd, q_norm_, eps, n_.dtype);
    NormHeads(k, hd, k_norm_, eps, n_.dtype);
  }
  if (d_.rope) {
    const int rotary = static_cast<int>(hd * d_.rope_fraction) / 2 * 2;
    ApplyRope(p.q, heads_, hd, rotary, positions, rope_, n_.dtype);
    ApplyRope(k, kv_heads_, hd, rotary, positions, rope_, n_.dtype);
  }
  p.entries = Tensor(x.rows(), cache_width());
  for (int r = 0; r < x.rows(); ++r) {
    std::copy(k.row(r), k.row(r) + k.cols(), p.entries.row(r));
    std::copy(v.row(r), v.row(r) + v.cols(), p.entries.row(r) + k.cols());
  }
  if (d_.attention_gate) p.gate = Linear(x, gate_, n_.dtype);
}

void AttentionKernel::ProjectMla(const Tensor& prepared, std::span<const int> positions, Projected& p) const {
  const MlaDims& a = d_.mla;
  // transformers builds q_a_layernorm and kv_a_layernorm as DeepseekV2RMSNorm(rank) /
  // DeepseekV3RMSNorm(rank), keeping the class default eps 1e-6 whatever rms_norm_eps says
  // (as DeepSeek's own modeling_deepseek.py does).
  constexpr float eps = 1e-6f;
  Tensor kv_a;
  if (a.q_lora > 0) {
    const Tensor q_a = prepared.ColRange(0, a.q_lora);
    kv_a = prepared.ColRange(a.q_lora, prepared.cols());
    p.q = Linear(RmsNorm(q_a, q_a_norm_.span(), eps, n_.dtype), q_b_, n_.dtype);
  } else {
    p.q = Linear(prepared, q_, n_.dtype);
    kv_a = Linear(prepared, kv_a_, n_.dtype);
  }
  const Tensor latent = RmsNorm(kv_a.ColRange(0, a.kv_lora), kv_a_norm_.span(), eps, n_.dtype);
  // The rotary part: each query head's last qk_rope dims, and one key part shared by every head.
  Tensor q_rope = HeadColumns(p.q, heads_, qk_dim_, a.qk_nope, qk_dim_);
  Tensor k_rope = kv_a.ColRange(a.kv_lora, kv_a.cols());
  ApplyRope(q_rope, heads_, a.qk_rope, a.qk_rope, positions, rope_, n_.dtype);
  ApplyRope(k_rope, 1, a.qk_rope, a.qk_rope, positions, rope_, n_.dtype);
  p.entries = Tensor(prepared.rows(), cache_width());
  for (int r = 0; r < prepared.rows(); ++r) {
    for (int h = 0; h < heads_; ++h) {
      std::copy(q_rope.row(r) + h * a.qk_rope, q_rope.row(r) + (h + 1) * a.qk_rope,
                p.q.row(r) + h * qk_dim_ + a.qk_nope);
    }
    std::copy(latent.row(r), latent.row(r) + a.kv_lora, p.entries.row(r));
    std::copy(k_rope.row(r), k_rope.row(r) + a.qk_rope, p.entries.row(r) + a.kv_lora);
  }
}

void AttentionKernel::KeyValues(const float* cache, int lo, int hi, Tensor& k, Tensor& v) const {
  const int width = cache_width(), count = hi - lo;
  if (!mla_) {
    k = Tensor(count, kv_width());
    v = Tensor(count, v_width());
    for (int j = 0; j < count; ++j) {
      const float* e = cache + static_cast<size_t>(lo + j) * static_cast<size_t>(width);
      std::copy(e, e + kv_width(), k.row(j));
      std::copy(e + kv_width(), e + width, v.row(j));
    }
    return;
  }
  const MlaDims& a = d_.mla;
  Tensor latent(count, a.kv_lora);
  for (int j = 0; j < count; ++j) {
    const float* e = cache + static_cast<size_t>(lo + j) * static_cast<size_t>(width);
    std::copy(e, e + a.kv_lora, latent.row(j));
  }
  const Tensor kv = Linear(latent, kv_b_, n_.dtype);  // per head: [nope | v]
  k = Tensor(count, attend_heads_ * qk_dim_);
  v = HeadColumns(kv, attend_heads_, a.qk_nope + a.v, a.qk_nope, a.qk_nope + a.v);
  for (int j = 0; j < count; ++j) {
    const float* rope = cache + static_cast<size_t>(lo + j) * static_cast<size_t>(width) + a.kv_lora;
    for (int h = 0; h < attend_heads_; ++h) {
      float* key = k.row(j) + h * qk_dim_;
      const float* nope = kv.row(j) + h * (a.qk_nope + a.v);
      std::copy(nope, nope + a.qk_nope, key);
      std::copy(rope, rope + a.qk_rope, key + a.qk_nope);
    }
  }
}

AttentionKernel::Projected AttentionKernel::Project(const Tensor& prepared, std::span<const int> positions) const {
  Projected p;
  if (mla_) {
    ProjectMla(prepared, positions, p);
  } else {
    ProjectGqa(prepared, positions, p);
  }
  return p;
}

void AttentionKernel::AttendCached(const Projected& p, int first, int last, std::span<const int> positions,
                                   const float* cache, int cached, Tensor& out) const {
  if (first == last) return;
  SEAM_CHECK(dcp_ == 1, "a whole cache read under decode context parallelism");
  const int lo = FirstKey(positions[static_cast<size_t>(first)]), hi = positions[static_cast<size_t>(last - 1)] + 1;
  SEAM_CHECK(hi <= cached, "a query past its request's cache");
  // Keys and values of positions [lo, hi) for this rank's heads: GQA's in
  // the cache rows themselves, MLA's made from the latents.
  const size_t width = static_cast<size_t>(cache_width());
  Tensor mla_k, mla_v;
  const float* keys = cache + static_cast<size_t>(lo) * width;
  const float* values = keys + kv_width();
  size_t k_stride = width, v_stride = width;
  if (mla_) {
    KeyValues(cache, lo, hi, mla_k, mla_v);
    keys = mla_k.data();
    values = mla_v.data();
    k_stride = static_cast<size_t>(mla_k.cols());
    v_stride = static_cast<size_t>(mla_v.cols());
  }
  std::vector<const float*> k, v;
  for (int r = first; r < last; ++r) {
    const int t = positions[static_cast<size_t>(r)];
    for (int h = 0; h < heads_; ++h) {
      const int kv = mla_ ? h : (shard_.index * heads_ + h) / group_ - kv_first_;
      k.clear();
      v.clear();
      for (int j = FirstKey(t); j <= t; ++j) {
        k.push_back(keys + static_cast<size_t>(j - lo) * k_stride + static_cast<size_t>(kv * qk_dim_));
        v.push_back(values + static_cast<size_t>(j - lo) * v_stride + static_cast<size_t>(kv * v_dim_));
      }
      const float* sink = sinks_.empty() ? nullptr : sinks_.row(0) + h;
      AttendRow(p.q.row(r) + h * qk_dim_, k.data(), v.data(), static_cast<int>(k.size()), qk_dim_, v_dim_, scale_, sink,
                FirstKey(t), out.row(r) + h * v_dim_);
    }
    RoundToStorage(std::span<float>(out.row(r), static_cast<size_t>(out.cols())), n_.dtype);
  }
}

namespace {

// The entries [lo, hi) of a cache holding positions residue + i x stride
// that lie in positions [from, to].
struct Held {
  int lo = 0, hi = 0;
};
Held HeldIn(int from, int to, int stride, int residue) {
  const auto ceil_div = [](int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  const int lo = std::max(0, ceil_div(from - residue, stride));
  const int hi = to < residue ? 0 : (to - residue) / stride + 1;
  return {lo, std::max(lo, hi)};
}

}  // namespace

void AttentionKernel::AttendPartials(const Tensor& q_group, int first, int last, std::span<const int> positions,
                                     const float* cache, int held, int stride, int residue, Tensor& partials) const {
  if (first == last) return;
  SEAM_CHECK(stride == dcp_ && q_group.cols() == attend_heads_ * qk_dim_, "queries of another DCP group");
  const Held all = HeldIn(FirstKey(positions[static_cast<size_t>(first)]), positions[static_cast<size_t>(last - 1)],
                          stride, residue);
  SEAM_CHECK(all.hi <= held, "a query past the cache entries this rank holds");
  const size_t width = static_cast<size_t>(cache_width());
  Tensor mla_k, mla_v;
  const float* keys = cache + static_cast<size_t>(all.lo) * width;
  const float* values = keys + kv_width();
  size_t k_stride = width, v_stride = width;
  if (mla_) {
    KeyValues(cache, all.lo, all.hi, mla_k, mla_v);
    keys = mla_k.data();
    values = mla_v.data();
    k_stride = static_cast<size_t>(mla_k.cols());
    v_stride = static_cast<size_t>(mla_v.cols());
  }
  const int pw = v_dim_ + 2;
  std::vector<const float*> k, v;
  for (int r = first; r < last; ++r) {
    const int t = positions[static_cast<size_t>(r)];
    const Held mine = HeldIn(FirstKey(t), t, stride, residue);
    for (int h = 0; h < attend_heads_; ++h) {
      const int kv = mla_ ? h : (attend_h0_ + h) / group_ - kv_first_;
      k.clear();
      v.clear();
      for (int i = mine.lo; i < mine.hi; ++i) {
        k.push_back(keys + static_cast<size_t>(i - all.lo) * k_stride + static_cast<size_t>(kv * qk_dim_));
        v.push_back(values + static_cast<size_t>(i - all.lo) * v_stride + static_cast<size_t>(kv * v_dim_));
      }
      const AttentionPartial part =
          AttendPartial(q_group.row(r) + h * qk_dim_, k.data(), v.data(), static_cast<int>(k.size()), qk_dim_, v_dim_,
                        scale_, residue + mine.lo * stride, stride);
      float* to = partials.row(r) + h * pw;
      to[0] = part.max;
      to[1] = part.sum;
      std::copy(part.acc.begin(), part.acc.end(), to + 2);
    }
  }
}

void AttentionKernel::MergePeers(std::span<const Tensor> from_each, Tensor& out) const {
  SEAM_CHECK(static_cast<int>(from_each.size()) == dcp_, "partials from another number of DCP peers");
  const int pw = v_dim_ + 2;
  std::vector<AttentionPartial> by_rank(from_each.size());
  for (int r = 0; r < out.rows(); ++r) {
    for (int h = 0; h < heads_; ++h) {
      for (size_t peer = 0; peer < from_each.size(); ++peer) {
        SEAM_CHECK(from_each[peer].rows() == out.rows() && from_each[peer].cols() == partial_width(),
                   "a DCP peer's partials of another shape");
        const float* at = from_each[peer].row(r) + h * pw;
        by_rank[peer].max = at[0];
        by_rank[peer].sum = at[1];
        by_rank[peer].acc.assign(at + 2, at + pw);
      }
      const float* sink = sinks_.empty() ? nullptr : sinks_.row(0) + h;
      MergeRanks(by_rank, v_dim_, sink, out.row(r) + h * v_dim_);
    }
    RoundToStorage(std::span<float>(out.row(r), static_cast<size_t>(out.cols())), n_.dtype);
  }
}

Tensor AttentionKernel::Output(const Tensor& o, const Tensor& gate) const {
  Tensor gated;
  if (!gate.empty()) {
    gated = o;
    for (size_t i = 0; i < gated.size(); ++i) gated.data()[i] = gated.data()[i] * Sigmoid(gate.data()[i]);
    RoundToStorage(gated, n_.dtype);
  }
  SEAM_CHECK(n_.k_blocks % shard_.count == 0, "the group does not split the canonical K-blocks");
  std::vector<Tensor> blocks = GemmBlocks(gate.empty() ? o : gated, o_, n_.k_blocks / shard_.count);
  if (!o_bias_.empty() && !blocks.empty()) AddRowBias(blocks.front(), o_bias_);
  return TreeSum(blocks);
}

// ---- linear ----

LinearKernel::LinearKernel(const StageRef& s, const Weights& w, const Numerics& n)
    : n_(n), w_(w.at(StagePrefix(s) + ".linear.weight")) {}

Tensor LinearKernel::Run(const Tensor& x) const { return Linear(x, w_, n_.dtype); }

// ---- dense FFN ----

FfnKernel::FfnKernel(const Weights& w, const std::string& prefix, const FfnShape& shape, Shard shard, const Numerics& n)
    : shape_(shape), n_(n) {
  SEAM_CHECK(shape.width % shard.count == 0 && n.k_blocks % shard.count == 0, "the FFN width does not split");
  const int first = shard.index * shape.width / shard.count, last = (shard.index + 1) * shape.width / shard.count;
  blocks_ = n.k_blocks / shard.count;
  const bool gated = shape.act != Activation::kRelu2;
  if (gated) gate_ = w.at(prefix + ".gate_proj.weight").Rows(first, last);
  up_ = w.at(prefix + ".up_proj.weight").Rows(first, last);
  down_ = w.at(prefix + ".down_proj.weight").Cols(first, last);
  if (!shape.bias) return;
  // Column-parallel biases are sliced with their rows; the row-parallel
  // down bias is added once, in canonical K-block 0, which shard 0 holds.
  if (gated) gate_bias_ = w.at(prefix + ".gate_proj.bias").Cols(first, last);
  up_bias_ = w.at(prefix + ".up_proj.bias").Cols(first, last);
  if (shard.index == 0) down_bias_ = w.at(prefix + ".down_proj.bias");
}

std::vector<Tensor> FfnKernel::Blocks(const Tensor& x) const {
  const auto project = [&](MatrixView weight, MatrixView bias) {
    Tensor y = Gemm(x, weight);
    AddRowBias(y, bias);
    RoundToStorage(y, n_.dtype);
    return y;
  };
  Tensor a;
  const Tensor up = project(up_, up_bias_);
  switch (shape_.act) {
    case Activation::kSwiGlu: SwiGlu(project(gate_, gate_bias_), up, n_.dtype, a); break;
    case Activation::kClampedSwiGlu: ClampedSwiGlu(project(gate_, gate_bias_), up, shape_.limit, n_.dtype, a); break;
    case Activation::kRelu2: Relu2(up, n_.dtype, a); break;
  }
  std::vector<Tensor> blocks = GemmBlocks(a, down_, blocks_);
  if (!down_bias_.empty()) AddRowBias(blocks.front(), down_bias_);
  return blocks;
}

Tensor FfnKernel::Partial(const Tensor& x) const { return TreeSum(Blocks(x)); }

// ---- MoE ----

MoeKernel::MoeKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, MoeMode mode, const Numerics& n)
    : d_(*m.dims), top_k_(s.decl.top_k), hidden_(m.hidden), n_(n), shard_(shard) {
  const std::string p = StagePrefix(s);
  router_ = w.at(p + ".gate.weight");
  if (d_.moe_bias) router_bias_ = w.at(p + ".gate.bias");
  if (d_.correction_bias) correction_ = w.at(p + ".gate.e_score_correction_bias");
  const Shard whole{0, 1};
  const float limit = static_cast<float>(d_.swiglu_limit);
  const FfnShape expert{d_.moe_intermediate, d_.activation, d_.moe_bias, limit};
  for (int e = 0; e < d_.experts; ++e) {
    const std::string name = p + ".experts." + std::to_string(e);
    if (mode == MoeMode::kTp) {
      experts_.push_back(std::make_unique<FfnKernel>(w, name, expert, shard, n));
    } else if (e % shard.count == shard.index) {
      experts_.push_back(std::make_unique<FfnKernel>(w, name, expert, whole, n));
    } else {
      experts_.push_back(nullptr);
    }
  }
  if (d_.shared_intermediate > 0) {
    shared_ = std::make_unique<FfnKernel>(w, p + ".shared_expert",
                                          FfnShape{d_.shared_intermediate, d_.activation, false, limit},
                                          mode == MoeMode::kTp ? shard : whole, n);
    if (d_.shared_expert_gate) shared_gate_ = w.at(p + ".shared_expert_gate.weight");
  }
}

std::vector<float> MoeKernel::SharedGates(const Tensor& x) const {
  std::vector<float> g(static_cast<size_t>(x.rows()), 1.0f);
  if (shared_gate_.empty()) return g;
  for (int r = 0; r < x.rows(); ++r) g[static_cast<size_t>(r)] = Sigmoid(Dot(x.row(r), shared_gate_.row(0), x.cols()));
  return g;
}

std::vector<Routing> MoeKernel::Route(const Tensor& x) const {
  Tensor logits = Gemm(x, router_);
  AddRowBias(logits, router_bias_);
  const int n = logits.cols();  // the experts, and the skip expert when there is one
  const RouteRule rule{.k = top_k_,
                       .groups = d_.expert_groups,
                       .renormalize = d_.renormalize,
                       .renormalize_eps = static_cast<float>(d_.renormalize_eps),
                       .scaling = static_cast<float>(d_.routed_scaling)};
  std::vector<float> scores(static_cast<size_t>(n)), choice(static_cast<size_t>(n));
  std::vector<Routing> out;
  for (int r = 0; r < x.rows(); ++r) {
    if (d_.scoring == RouterScoring::kSoftmax) {
      Softmax(logits.row(r), n, scores.data());
    } else {  // independent scores
      for (int e = 0; e < n; ++e) {
        const float l = logits.at(r, e);
        scores[static_cast<size_t>(e)] = d_.scoring == RouterScoring::kSigmoid ? Sigmoid(l) : std::sqrt(Softplus(l));
      }
    }
    // A correction bias steers the choice only.
    for (int e = 0; e < n; ++e) {
      const float bias = correction_.empty() ? 0.0f : correction_.at(0, e);
      choice[static_cast<size_t>(e)] = scores[static_cast<size_t>(e)] + bias;
    }
    out.push_back(RouteRow(scores.data(), choice.data(), n, rule));
  }
  return out;
}

Tensor MoeKernel::TpPartial(const Tensor& x) const {
  const std::vector<Routing> routes = Route(x);
  // Each expert runs once on the rows routed to it.
  std::vector<std::vector<int>> rows_of(static_cast<size_t>(d_.experts));
  for (int r = 0; r < x.rows(); ++r) {
    for (int e : routes[static_cast<size_t>(r)].experts) {
      if (!IsSkip(e)) rows_of[static_cast<size_t>(e)].push_back(r);
    }
  }
  std::vector<std::vector<Tensor>> blocks(static_cast<size_t>(d_.experts));  // [expert][block] -> rows_of rows
  std::vector<std::vector<int>> slot_row(static_cast<size_t>(d_.experts),
                                         std::vector<int>(static_cast<size_t>(x.rows()), -1));
  for (int e = 0; e < d_.experts; ++e) {
    const std::vector<int>& rows = rows_of[static_cast<size_t>(e)];
    if (rows.empty()) continue;
    Tensor xe(static_cast<int>(rows.size()), x.cols());
    for (size_t i = 0; i < rows.size(); ++i) {
      std::copy(x.row(rows[i]), x.row(rows[i]) + x.cols(), xe.row(static_cast<int>(i)));
      slot_row[static_cast<size_t>(e)][static_cast<size_t>(rows[i])] = static_cast<int>(i);
    }
    blocks[static_cast<size_t>(e)] = experts_[static_cast<size_t>(e)]->Blocks(xe);
  }
  std::vector<Tensor> shared;
  if (shared_) shared = shared_->Blocks(x);
  const std::vector<float> gates = SharedGates(x);
  const int nblocks = n_.k_blocks / shard_.count;
  std::vector<Tensor> per_block;
  for (int b = 0; b < nblocks; ++b) {
    Tensor acc(x.rows(), hidden_);
    for (int r = 0; r < x.rows(); ++r) {
      float* out = acc.row(r);
      const Routing& route = routes[static_cast<size_t>(r)];
      for (size_t slot = 0; slot < route.experts.size(); ++slot) {
        const int e = route.experts[slot];
        if (IsSkip(e)) {
          // The skip expert passes the input through: whole, so it joins one block (canonical block 0).
          if (b == 0 && shard_.index == 0) {
            for (int c = 0; c < hidden_; ++c) out[c] = out[c] + route.weights[slot] * x.at(r, c);
          }
          continue;
        }
        const float* p = blocks[static_cast<size_t>(e)][static_cast<size_t>(b)].row(
            slot_row[static_cast<size_t>(e)][static_cast<size_t>(r)]);
        for (int c = 0; c < hidden_; ++c) out[c] = out[c] + route.weights[slot] * p[c];
      }
      if (shared_) {
        const float* p = shared[static_cast<size_t>(b)].row(r);
        const float g = gates[static_cast<size_t>(r)];
        for (int c = 0; c < hidden_; ++c) out[c] = out[c] + g * p[c];
      }
    }
    per_block.push_back(std::move(acc));
  }
  return TreeSum(per_block);
}

Tensor MoeKernel::Expert(int expert, const Tensor& x) const {
  const FfnKernel* k = experts_[static_cast<size_t>(expert)].get();
  SEAM_CHECK(k != nullptr, "this rank does not hold expert " + std::to_string(expert));
  Tensor out = k->Partial(x);
  RoundToStorage(out, n_.dtype);
  return out;
}

Tensor MoeKernel::Shared(const Tensor& x) const {
  if (!shared_) return Tensor();
  Tensor out = shared_->Partial(x);
  RoundToStorage(out, n_.dtype);
  if (shared_gate_.empty()) return out;
  const std::vector<float> gates = SharedGates(x);
  for (int r = 0; r < out.rows(); ++r) {
    for (int c = 0; c < out.cols(); ++c) out.at(r, c) = gates[static_cast<size_t>(r)] * out.at(r, c);
  }
  RoundToStorage(out, n_.dtype);
  return out;
}

void MoeKernel::Fold(const Routing& r, std::span<const float* const> outputs, const float* shared, float* out) const {
  for (int c = 0; c < hidden_; ++c) out[c] = 0.0f;
  for (size_t slot = 0; slot < r.experts.size(); ++slot) {
    for (int c = 0; c < hidden_; ++c) out[c] = out[c] + r.weights[slot] * outputs[slot][c];
  }
  if (shared != nullptr) {
    for (int c = 0; c < hidden_; ++c) out[c] = out[c] + shared[c];
  }
  RoundToStorage(std::span<float>(out, static_cast<size_t>(hidden_)), n_.dtype);
}

}  // namespace seam::exec

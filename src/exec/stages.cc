#include "exec/stages.h"

#include <cmath>

#include "seam/gemm.h"

namespace seam::exec {
namespace {

Tensor Linear(const Tensor& x, const Tensor& w, Dtype d) {
  Tensor y = Gemm(x, w);
  RoundToStorage(y, d);
  return y;
}

// The tree sum of a row-parallel product over this rank's share of the
// canonical K-blocks.
Tensor RowParallel(const Tensor& x, const Tensor& w, const Numerics& n, Shard shard) {
  SEAM_CHECK(n.k_blocks % shard.count == 0, "the group does not split the canonical K-blocks");
  return TreeSum(GemmBlocks(x, w, n.k_blocks / shard.count));
}

}  // namespace

// ---- attention ----

AttentionKernel::AttentionKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n)
    : d_(*m.dims), n_(n), shard_(shard) {
  const std::string p = StagePrefix(s);
  SEAM_CHECK(d_.heads % shard.count == 0, "attention heads do not split over the group");
  heads_ = d_.heads / shard.count;
  const int group = d_.heads / d_.kv_heads;  // query heads per key/value head
  const int first_head = shard.index * heads_;
  kv_first_ = first_head / group;
  const int kv_last = (first_head + heads_ - 1) / group + 1;
  const int hd = d_.head_dim;
  q_ = w.at(p + ".q_proj.weight").RowRange(first_head * hd, (first_head + heads_) * hd);
  k_ = w.at(p + ".k_proj.weight").RowRange(kv_first_ * hd, kv_last * hd);
  v_ = w.at(p + ".v_proj.weight").RowRange(kv_first_ * hd, kv_last * hd);
  o_ = w.at(p + ".o_proj.weight").ColRange(first_head * hd, (first_head + heads_) * hd);
}

void AttentionKernel::Project(const Tensor& x, std::span<const int> positions, Tensor& q, Tensor& k,
                              Tensor& v) const {
  q = Linear(x, q_, n_.dtype);
  k = Linear(x, k_, n_.dtype);
  v = Linear(x, v_, n_.dtype);
  if (d_.rope) {
    ApplyRope(q, heads_, d_.head_dim, positions, d_.rope_theta, n_.dtype);
    ApplyRope(k, k.cols() / d_.head_dim, d_.head_dim, positions, d_.rope_theta, n_.dtype);
  }
}

Tensor AttentionKernel::Attend(const Tensor& q, const Tensor& k, const Tensor& v, std::span<const int> begin,
                               std::span<const int> end) const {
  const int hd = d_.head_dim;
  const int group = d_.heads / d_.kv_heads;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  Tensor out(q.rows(), q.cols());
  std::vector<const float*> keys, values;
  for (int r = 0; r < q.rows(); ++r) {
    for (int h = 0; h < heads_; ++h) {
      const int kv = (shard_.index * heads_ + h) / group - kv_first_;
      keys.clear();
      values.clear();
      for (int j = begin[static_cast<size_t>(r)]; j < end[static_cast<size_t>(r)]; ++j) {
        keys.push_back(k.row(j) + kv * hd);
        values.push_back(v.row(j) + kv * hd);
      }
      AttendRow(q.row(r) + h * hd, keys.data(), values.data(), static_cast<int>(keys.size()), hd, scale,
                out.row(r) + h * hd);
    }
  }
  RoundToStorage(out, n_.dtype);
  return out;
}

Tensor AttentionKernel::Output(const Tensor& o) const { return RowParallel(o, o_, n_, shard_); }

Tensor AttentionKernel::Run(const Tensor& x, std::span<const int> positions,
                            std::span<const int> request_start) const {
  Tensor q, k, v;
  Project(x, positions, q, k, v);
  std::vector<int> end(static_cast<size_t>(x.rows()));
  for (int r = 0; r < x.rows(); ++r) end[static_cast<size_t>(r)] = r + 1;
  return Output(Attend(q, k, v, request_start, end));
}

// ---- mixer ----

MixerKernel::MixerKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, const Numerics& n)
    : d_(*m.dims), n_(n), shard_(shard) {
  const std::string p = StagePrefix(s);
  SEAM_CHECK(d_.mixer_heads % shard.count == 0, "mixer heads do not split over the group");
  heads_ = d_.mixer_heads / shard.count;
  const int h0 = shard.index * heads_;
  const int h1 = h0 + heads_;
  const int hp = d_.mixer_head_dim;
  const int ns = d_.mixer_state;
  x_ = w.at(p + ".x_proj.weight").RowRange(h0 * hp, h1 * hp);
  z_ = w.at(p + ".z_proj.weight").RowRange(h0 * hp, h1 * hp);
  dt_ = w.at(p + ".dt_proj.weight").RowRange(h0, h1);
  b_ = w.at(p + ".B_proj.weight").RowRange(h0 * ns, h1 * ns);
  c_ = w.at(p + ".C_proj.weight").RowRange(h0 * ns, h1 * ns);
  a_log_ = w.at(p + ".A_log").ColRange(h0, h1);
  out_ = w.at(p + ".out_proj.weight").ColRange(h0 * hp, h1 * hp);
}

std::vector<float> MixerKernel::NewState() const {
  return std::vector<float>(static_cast<size_t>(heads_ * d_.mixer_head_dim * d_.mixer_state), 0.0f);
}

namespace {

// One row of the scan for every head: S = a*S + x (x) B, y = S.C, g = y*silu(z).
void MixerStep(int heads, int hp, int ns, const float* x, const float* z, const float* dt, const float* b,
               const float* c, const float* a_log, float* state, float* g) {
  for (int h = 0; h < heads; ++h) {
    const float a = std::exp(-Softplus(dt[h]) * std::exp(a_log[h]));
    for (int p = 0; p < hp; ++p) {
      float* s = state + (static_cast<size_t>(h) * hp + p) * ns;
      const float xv = x[h * hp + p];
      for (int k = 0; k < ns; ++k) s[k] = a * s[k] + xv * b[h * ns + k];
      g[h * hp + p] = Dot(s, c + h * ns, ns) * Silu(z[h * hp + p]);
    }
  }
}

}  // namespace

Tensor MixerKernel::Scan(const Tensor& x, std::vector<float>& state) const {
  const Tensor xp = Linear(x, x_, n_.dtype), zp = Linear(x, z_, n_.dtype), dt = Linear(x, dt_, n_.dtype);
  const Tensor bp = Linear(x, b_, n_.dtype), cp = Linear(x, c_, n_.dtype);
  Tensor g(x.rows(), xp.cols());
  for (int r = 0; r < x.rows(); ++r) {
    MixerStep(heads_, d_.mixer_head_dim, d_.mixer_state, xp.row(r), zp.row(r), dt.row(r), bp.row(r), cp.row(r),
              a_log_.row(0), state.data(), g.row(r));
  }
  RoundToStorage(g, n_.dtype);
  return g;
}

Tensor MixerKernel::Output(const Tensor& g) const { return RowParallel(g, out_, n_, shard_); }

Tensor MixerKernel::Run(const Tensor& x, std::span<const int> request_start) const {
  Tensor g(x.rows(), x_.rows());
  std::vector<float> state;
  for (int r = 0; r < x.rows();) {
    int end = r + 1;
    while (end < x.rows() && request_start[static_cast<size_t>(end)] == request_start[static_cast<size_t>(r)]) ++end;
    state = NewState();
    const Tensor part = Scan(x.RowRange(r, end), state);
    for (int i = r; i < end; ++i) std::copy(part.row(i - r), part.row(i - r) + part.cols(), g.row(i));
    r = end;
  }
  return Output(g);
}

// ---- dense FFN ----

FfnKernel::FfnKernel(const Weights& w, const std::string& prefix, int width, Activation act, Shard shard,
                     const Numerics& n)
    : act_(act), n_(n) {
  SEAM_CHECK(width % shard.count == 0 && n.k_blocks % shard.count == 0, "the FFN width does not split");
  const int per = width / shard.count;
  blocks_ = n.k_blocks / shard.count;
  if (act == Activation::kSwiGlu) gate_ = w.at(prefix + ".gate_proj.weight").RowRange(shard.index * per, (shard.index + 1) * per);
  up_ = w.at(prefix + ".up_proj.weight").RowRange(shard.index * per, (shard.index + 1) * per);
  down_ = w.at(prefix + ".down_proj.weight").ColRange(shard.index * per, (shard.index + 1) * per);
}

std::vector<Tensor> FfnKernel::Blocks(const Tensor& x) const {
  Tensor a;
  const Tensor up = Linear(x, up_, n_.dtype);
  if (act_ == Activation::kSwiGlu) {
    SwiGlu(Linear(x, gate_, n_.dtype), up, n_.dtype, a);
  } else {
    Relu2(up, n_.dtype, a);
  }
  return GemmBlocks(a, down_, blocks_);
}

Tensor FfnKernel::Partial(const Tensor& x) const { return TreeSum(Blocks(x)); }

// ---- MoE ----

MoeKernel::MoeKernel(const StageRef& s, const Model& m, const Weights& w, Shard shard, MoeMode mode,
                     const Numerics& n)
    : d_(*m.dims), top_k_(s.decl.top_k), hidden_(m.hidden), n_(n), shard_(shard) {
  const std::string p = StagePrefix(s);
  router_ = w.at(p + ".gate.weight");
  const Shard whole{0, 1};
  for (int e = 0; e < d_.experts; ++e) {
    const std::string name = p + ".experts." + std::to_string(e);
    if (mode == MoeMode::kTp) {
      experts_.push_back(std::make_unique<FfnKernel>(w, name, d_.moe_intermediate, d_.activation, shard, n));
    } else if (e % shard.count == shard.index) {
      experts_.push_back(std::make_unique<FfnKernel>(w, name, d_.moe_intermediate, d_.activation, whole, n));
    } else {
      experts_.push_back(nullptr);
    }
  }
  if (d_.shared_intermediate > 0) {
    shared_ = std::make_unique<FfnKernel>(w, p + ".shared_expert", d_.shared_intermediate, d_.activation,
                                          mode == MoeMode::kTp ? shard : whole, n);
  }
}

std::vector<Routing> MoeKernel::Route(const Tensor& x) const {
  const Tensor logits = Gemm(x, router_);
  std::vector<float> probs(static_cast<size_t>(d_.experts));
  std::vector<Routing> out;
  for (int r = 0; r < x.rows(); ++r) {
    Softmax(logits.row(r), d_.experts, probs.data());
    out.push_back(TopK(probs.data(), d_.experts, top_k_, d_.renormalize));
  }
  return out;
}

Tensor MoeKernel::TpPartial(const Tensor& x) const {
  const std::vector<Routing> routes = Route(x);
  // Each expert runs once on the rows routed to it.
  std::vector<std::vector<int>> rows_of(static_cast<size_t>(d_.experts));
  for (int r = 0; r < x.rows(); ++r) {
    for (int e : routes[static_cast<size_t>(r)].experts) rows_of[static_cast<size_t>(e)].push_back(r);
  }
  std::vector<std::vector<Tensor>> blocks(static_cast<size_t>(d_.experts));  // [expert][block] -> rows_of rows
  std::vector<std::vector<int>> slot_row(static_cast<size_t>(d_.experts), std::vector<int>(static_cast<size_t>(x.rows()), -1));
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
  const int nblocks = n_.k_blocks / shard_.count;
  std::vector<Tensor> per_block;
  for (int b = 0; b < nblocks; ++b) {
    Tensor acc(x.rows(), hidden_);
    for (int r = 0; r < x.rows(); ++r) {
      float* out = acc.row(r);
      const Routing& route = routes[static_cast<size_t>(r)];
      for (size_t slot = 0; slot < route.experts.size(); ++slot) {
        const int e = route.experts[slot];
        const float* p = blocks[static_cast<size_t>(e)][static_cast<size_t>(b)].row(slot_row[static_cast<size_t>(e)][static_cast<size_t>(r)]);
        for (int c = 0; c < hidden_; ++c) out[c] = out[c] + route.weights[slot] * p[c];
      }
      if (shared_) {
        const float* p = shared[static_cast<size_t>(b)].row(r);
        for (int c = 0; c < hidden_; ++c) out[c] = out[c] + p[c];
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

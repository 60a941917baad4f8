// What each rank computes and reads in a decode step and a prefill: its
// shard of every stage's weights, the experts its batch touches, attention
// over the context and the cache it reads; each stage's roofline.
#include "seam/work.h"

#include <algorithm>
#include <cmath>

#include "cost/cache.h"
#include "seam/pipeline.h"
#include "seam/stage_shape.h"

namespace seam {
namespace {

// One pass (a decode step or a prefill) on a pipeline rank: the replica's tokens, the sequences they
// belong to, and how many tokens of context each attends to.
struct Pass {
  double tokens = 0;     // the replica's tokens this step (every pipeline rank computes them all)
  double sequences = 0;  // the sequences they belong to (the LM head runs once per sequence)
  double context = 0;    // tokens each query attends to, on average
  bool decode = true;    // a decode step reads the KV cache; a prefill writes it
};

bool Routed(const WeightSpec& w) { return w.name.find(".experts.") != std::string::npos; }

// The stage's roofline on one rank of `hw`, and its kernels' fixed time.
double Roofline(const Work& w, const Gpu& g, double weight_bytes) {
  const double compute = w.flops / (PeakFlops(g, weight_bytes) * g.compute_efficiency);
  const double memory = w.bytes / (g.hbm_tbs * 1e12 * g.memory_efficiency);
  return std::max(compute, memory) + g.stage_us * 1e-6;
}

// The routed experts of a sparse stage on one rank: top_k experts' work per
// token spread evenly over the TP group, and the experts its tokens touch
// among those the rank holds (all of them, split over TP, under a TP MoE;
// E / ep whole experts under an all-to-all, whose expert group sees
// tokens / (tp / ep) of them).
Work RoutedWork(const StageDecl& d, const ModelDims& dims, double params, const ParallelConfig& cfg, double tokens,
                double weight_bytes) {
  const double per_expert = params / dims.experts;
  Work w{.flops = 2.0 * d.top_k * per_expert * tokens / cfg.tp};
  if (cfg.moe == MoeMode::kA2a) {
    const double group_tokens = tokens / (cfg.tp / cfg.ep_size());
    w.bytes = TouchedExperts(dims.experts, d.top_k, group_tokens) / cfg.ep_size() * per_expert * weight_bytes;
  } else {
    w.bytes = TouchedExperts(dims.experts, d.top_k, tokens) * per_expert * weight_bytes / cfg.tp;
  }
  return w;
}

// Scores and values over the context, and the KV cache a decode step reads.
Work AttentionWork(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, const Pass& s, double rows,
                   const CacheBytes& bytes) {
  const double heads = static_cast<double>(dims.heads) / cfg.attn_tp();
  const double context = d.window > 0 ? std::min<double>(d.window, s.context) : s.context;
  // Per query head and context token: QK^T and PV (MLA attends in its latent width).
  const double per_head = dims.mla.kv_lora > 0 ? 2.0 * (2 * dims.mla.kv_lora + dims.mla.qk_rope) : 4.0 * dims.head_dim;
  Work w{.flops = rows * heads * per_head * context};
  const CacheRow c = CacheOf(d, dims, cfg, bytes);
  const double sequences = s.sequences * rows / s.tokens;
  // A decode step reads its sequences' caches; a prefill writes its prompt's
  // entries, and under context parallelism those its CP peers gathered too.
  // Under decode context parallelism a rank holds, and so reads and
  // writes, one token in dcp (and attends dcp times its heads over them).
  w.bytes = (s.decode ? sequences * context * c.per_token : rows * cfg.cp * c.per_token) / cfg.dcp;
  return w;
}

Work MixerWork(const StageDecl& d, const ModelDims& dims, const ParallelConfig& cfg, const Pass& s, double rows,
               const CacheBytes& bytes) {
  const CacheRow c = CacheOf(d, dims, cfg, bytes);
  const double sequences = s.sequences * rows / s.tokens;
  return {.bytes = 2 * sequences * c.per_sequence};  // its state read and written once a step
}

// One stage on one rank: its matrices' FLOPs on its rows and every weight
// it holds read once, its routed experts, attention or mixer.
Work StageWork(const StageWeights& st, const ModelDims& dims, const ParallelConfig& cfg, const Pass& s,
               const WorkOptions& o) {
  const StageShape shape = ShapeOf(st.stage.decl, cfg);
  const double rows = s.tokens * RowFraction(cfg, shape.rows);
  const double shard = shape.shard ? GroupSize(cfg, *shape.shard) : 1;
  const double matrices = st.whole + st.split / shard + (cfg.moe == MoeMode::kA2a ? st.shared : st.shared / shard);
  Work w{.flops = 2 * rows * matrices, .bytes = (matrices + st.vectors) * o.weight_bytes};
  if (st.routed > 0) w += RoutedWork(st.stage.decl, dims, st.routed, cfg, s.tokens, o.weight_bytes);
  const CacheBytes bytes = CacheBytesOf(o.kv, o.fill);
  if (st.stage.decl.kind == StageKind::kAttention) w += AttentionWork(st.stage.decl, dims, cfg, s, rows, bytes);
  if (st.stage.decl.kind == StageKind::kMixer) w += MixerWork(st.stage.decl, dims, cfg, s, rows, bytes);
  return w;
}

// The LM head on the last rank: the logits of each sequence's last token,
// its vocabulary split over its group.
Work HeadWork(double elements, const ParallelConfig& cfg, const Pass& s, const WorkOptions& o) {
  const StageShape shape = LmHeadShape(cfg);
  const double held = elements / (shape.shard ? GroupSize(cfg, *shape.shard) : 1);
  return {.flops = 2 * s.sequences * RowFraction(cfg, shape.rows) * held, .bytes = held * o.weight_bytes};
}

// A rank's work, and (where `parts` is given) the same by what does it.
Work RankWorkOf(const ModelDims& dims, const ModelWeights& weights, const ParallelConfig& cfg, LayerRange range,
                bool last, const Pass& s, const Hardware& hw, const WorkOptions& o,
                std::vector<RankWork::Part>* parts = nullptr) {
  Work total;
  const auto add = [&](std::string_view what, Work w) {
    w.seconds = Roofline(w, hw.gpu, o.weight_bytes);
    total += w;
    if (parts == nullptr) return;
    auto p = std::find_if(parts->begin(), parts->end(), [&](const RankWork::Part& x) { return x.what == what; });
    if (p == parts->end()) p = parts->insert(parts->end(), {.what = std::string(what)});
    ++p->count;
    p->work += w;
  };
  for (const StageWeights& st : weights.stages) {
    if (st.stage.layer < range.first || st.stage.layer >= range.last || st.stage.decl.kind == StageKind::kNoOp) {
      continue;
    }
    add(Name(st.stage.decl.kind), StageWork(st, dims, cfg, s, o));
  }
  if (last && weights.head() > 0) add("lm-head", HeadWork(weights.head(), cfg, s, o));
  return total;
}

}  // namespace

double TouchedExperts(int experts, int top_k, double tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double miss = 1.0 - static_cast<double>(top_k) / experts;
  return experts * (1.0 - std::pow(miss, tokens));
}

Expected<ModelWeights> SumWeights(const Model& m, const std::vector<WeightSpec>& specs) {
  ModelWeights out;
  for (const StageRef& st : StagesOf(m, 0, m.num_layers)) out.stages.push_back({.stage = st});
  for (const WeightSpec& w : specs) {
    const double elements = static_cast<double>(w.rows) * w.cols;
    if (w.stage < 0) {
      if (w.name == kLmHeadName) out.lm_head = elements;
      if (w.name == kEmbeddingName) out.embedding = elements;
      if (w.name == kFinalNormName) out.final_norm = elements;
      continue;
    }
    if (static_cast<size_t>(w.stage) >= out.stages.size()) {
      return Internal("a weight names stage " + std::to_string(w.stage) + " the model does not have");
    }
    StageWeights& st = out.stages[static_cast<size_t>(w.stage)];
    if (w.vector) {
      st.vectors += elements;
    } else if (Routed(w)) {
      st.routed += elements;
    } else if (w.held == Held::kWhole) {
      st.whole += elements;
    } else if (w.held == Held::kShared) {
      st.shared += elements;
    } else {
      st.split += elements;
    }
  }
  return out;
}

Expected<RankWork> WorkOf(const Model& m, const std::vector<WeightSpec>& specs, const ParallelConfig& cfg, int replicas,
                          const Workload& load, const Hardware& hw, const WorkOptions& o) {
  Expected<ModelWeights> weights = SumWeights(m, specs);
  if (!weights) return weights.error();
  return WorkOf(m, *weights, cfg, replicas, load, hw, o);
}

Expected<RankWork> WorkOf(const Model& m, const ModelWeights& weights, const ParallelConfig& cfg, int replicas,
                          const Workload& load, const Hardware& hw, const WorkOptions& o) {
  if (!m.dims) return InvalidArgument("the model has no sizes to count its work from");
  if (hw.gpu.hbm_tbs <= 0 || PeakFlops(hw.gpu, o.weight_bytes) <= 0) {
    return InvalidArgument("the hardware states no GPU compute or memory bandwidth to price work on");
  }
  Expected<std::vector<LayerRange>> ranges = SplitLayers(cfg, m.num_layers);
  if (!ranges) return ranges.error();
  const double batch = static_cast<double>(load.batch) / replicas / load.parts;
  const Pass decode{.tokens = batch, .sequences = batch, .context = static_cast<double>(load.context)};
  const Pass prefill{
      .tokens = static_cast<double>(load.prefill), .sequences = 1, .context = load.prefill / 2.0, .decode = false};
  RankWork out;
  for (size_t r = 0; r < ranges->size(); ++r) {
    const bool last = r + 1 == ranges->size();
    if (o.parts) out.decode_parts.emplace_back();
    std::vector<RankWork::Part>* parts = o.parts ? &out.decode_parts.back() : nullptr;
    out.decode.push_back(RankWorkOf(*m.dims, weights, cfg, (*ranges)[r], last, decode, hw, o, parts));
    out.prefill.push_back(RankWorkOf(*m.dims, weights, cfg, (*ranges)[r], last, prefill, hw, o));
  }
  return out;
}

}  // namespace seam

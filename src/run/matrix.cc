#include "seam/runtime/matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/pipeline.h"

namespace seam {
namespace {

struct Base {
  std::string name;
  ParallelConfig cfg;
};

std::vector<Base> Bases(const Model& m) {
  const bool sparse = HasStageKind(m, StageKind::kSparseFfn);
  const bool dense = HasStageKind(m, StageKind::kDenseFfn);
  std::vector<Base> out = {{"tp1", {.tp = 1}},
                           {"tp2", {.tp = 2}},
                           {"tp4", {.tp = 4}},
                           {"tp8", {.tp = 8}},
                           {"tp4 attn-dp2", {.tp = 4, .attn_dp = 2}},
                           {"tp8 attn-dp2", {.tp = 8, .attn_dp = 2}},
                           {"tp4 attn-dp4", {.tp = 4, .attn_dp = 4}},
                           {"tp4 attn-dp2 dp-lm-head", {.tp = 4, .attn_dp = 2, .dp_lm_head = true}},
                           {"tp2 input-scattered", {.tp = 2, .input_scattered = true}},
                           {"tp4 input-scattered", {.tp = 4, .input_scattered = true}},
                           // Context parallelism: alone, with attention TP, under attention DP.
                           {"tp2 cp2", {.tp = 2, .cp = 2}},
                           {"tp4 cp4", {.tp = 4, .cp = 4}},
                           {"tp4 cp2", {.tp = 4, .cp = 2}},
                           {"tp8 attn-dp2 cp2", {.tp = 8, .attn_dp = 2, .cp = 2}},
                           // Decode context parallelism: alone, over a whole TP group, under
                           // attention DP and beside prefill context parallelism.
                           {"tp4 dcp2", {.tp = 4, .dcp = 2}},
                           {"tp8 dcp4", {.tp = 8, .dcp = 4}},
                           {"tp8 attn-dp2 dcp2", {.tp = 8, .attn_dp = 2, .dcp = 2}},
                           {"tp8 cp2 dcp2", {.tp = 8, .cp = 2, .dcp = 2}}};
  if (dense) {
    out.push_back({"tp4 dense-tp1", {.tp = 4, .dense_tp = 1}});
    out.push_back({"tp4 attn-dp2 dense-tp1", {.tp = 4, .attn_dp = 2, .dense_tp = 1}});
    out.push_back({"tp4 attn-dp2 dense-tp2", {.tp = 4, .attn_dp = 2, .dense_tp = 2}});
    out.push_back({"tp4 cp2 dense-tp2", {.tp = 4, .cp = 2, .dense_tp = 2}});
    out.push_back({"tp4 cp2 dense-tp1", {.tp = 4, .cp = 2, .dense_tp = 1}});
  }
  if (sparse) {
    out.push_back({"tp4 a2a", {.tp = 4, .moe = MoeMode::kA2a}});
    out.push_back({"tp4 attn-dp2 a2a", {.tp = 4, .attn_dp = 2, .moe = MoeMode::kA2a}});
    out.push_back({"tp8 attn-dp2 a2a dense-tp1", {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}});
    // Expert groups apart from TP: two sets of experts, and every expert on every rank.
    out.push_back({"tp4 a2a ep2", {.tp = 4, .moe = MoeMode::kA2a, .ep = 2}});
    out.push_back(
        {"tp8 attn-dp2 a2a ep4 dense-tp1", {.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4}});
    out.push_back({"tp2 a2a ep1", {.tp = 2, .moe = MoeMode::kA2a, .ep = 1}});
    out.push_back({"tp4 cp2 a2a", {.tp = 4, .cp = 2, .moe = MoeMode::kA2a}});
    out.push_back({"tp8 attn-dp2 cp2 a2a ep4 dense-tp1",
                   {.tp = 8, .attn_dp = 2, .cp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4}});
    out.push_back({"tp8 attn-dp2 dcp2 a2a ep4 dense-tp1",
                   {.tp = 8, .attn_dp = 2, .dcp = 2, .dense_tp = 1, .moe = MoeMode::kA2a, .ep = 4}});
  }
  return out;
}

MatrixCase Case(const Base& b, Reduction r, const std::vector<int>& split, Dtype dtype, bool fuse) {
  ParallelConfig cfg = b.cfg;
  cfg.reduction = r;
  std::string name = fmt::format("{} {}", b.name, Name(r));
  if (split.size() > 1) {
    cfg.pp = static_cast<int>(split.size());
    cfg.pp_split = split;
    name += fmt::format(" pp{} ({})", split.size(), fmt::join(split, "+"));
  }
  if (!fuse) name += " unfused";
  return {fmt::format("{} {}", name, Name(dtype)), cfg, dtype, fuse};
}

struct Reference {
  Weights weights;
  std::map<std::pair<MoeSumOrder, int>, Tensor> hidden;  // per MoE sum order and canonical K-block count
};

// What a case ran and what it must equal.
struct Outcome {
  Tensor hidden, logits;
  std::vector<CommStats> ranks;
  double seconds = 0;
};

// The batch's requests, each generating `generate` tokens, in an order and
// with arrivals of their own for case `index`.
std::vector<Request> Shuffled(const Batch& b, int generate, size_t index, std::vector<size_t>& order) {
  order.resize(b.requests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(index);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Request> out;
  for (size_t i = 0; i < order.size(); ++i) {
    out.push_back({b.requests[order[i]], generate, static_cast<int>(rng() % 3)});
  }
  return out;
}

// A case's generation, its rows back in the batch's request order.
Expected<Outcome> GenerateCase(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b, Dtype d,
                               const MatrixOptions& o, size_t index, std::vector<std::vector<int>>& tokens) {
  std::vector<size_t> order;
  const std::vector<Request> requests = Shuffled(b, o.generate, index, order);
  Expected<Generation> g = Generate(m, plans, w, requests, o.serve, {.dtype = d});
  if (!g) return g.error();
  tokens.assign(order.size(), {});
  std::vector<int> first(order.size());  // each shuffled request's first row in the generation
  for (size_t i = 0, at = 0; i < order.size(); ++i) {
    first[i] = static_cast<int>(at);
    at += static_cast<size_t>(requests[i].fed());
    tokens[order[i]] = g->tokens[i];
  }
  std::vector<size_t> where(order.size());
  for (size_t i = 0; i < order.size(); ++i) where[order[i]] = i;
  Outcome out{Tensor(g->hidden.rows(), g->hidden.cols()), Tensor(g->logits.rows(), g->logits.cols()), g->ranks,
              g->seconds};
  int row = 0;
  for (size_t q = 0; q < order.size(); ++q) {
    const size_t i = where[q];
    const int rows = requests[i].fed();
    for (int r = 0; r < rows; ++r, ++row) {
      std::copy(g->hidden.row(first[i] + r), g->hidden.row(first[i] + r) + out.hidden.cols(), out.hidden.row(row));
      std::copy(g->logits.row(first[i] + r), g->logits.row(first[i] + r) + out.logits.cols(), out.logits.row(row));
    }
  }
  return out;
}

}  // namespace

std::vector<MatrixCase> MatrixCases(const Model& m, bool full) {
  std::vector<MatrixCase> out;
  const std::vector<std::vector<int>> splits = LayerSplits(m.num_layers, 4);
  for (Dtype dtype : {Dtype::kF32, Dtype::kBf16}) {
    for (const Base& b : Bases(m)) {
      for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
        out.push_back(Case(b, r, {m.num_layers}, dtype, true));
      }
      out.push_back(Case(b, Reduction::kAr, {m.num_layers}, dtype, false));
      for (const std::vector<int>& split : splits) {
        if (split.size() == 1) continue;
        for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
          if (full || r == Reduction::kAr || (r == Reduction::kRs && split.size() == 2)) {
            out.push_back(Case(b, r, split, dtype, true));
          }
        }
      }
    }
  }
  return out;
}

Expected<std::vector<MatrixRow>> RunMatrix(const Model& m, const std::vector<MatrixCase>& cases,
                                           const MatrixOptions& options) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to run with", m.name));
  Expected<Batch> batch = RandomBatch(options.tokens, options.requests, m.dims->vocab, options.seed);
  if (!batch) return batch.error();
  std::map<Dtype, Reference> refs;
  // Generation: the reference of each set of generated tokens, per numerics.
  std::map<std::tuple<Dtype, MoeSumOrder, int, std::vector<std::vector<int>>>, Tensor> generated_refs;
  std::vector<MatrixRow> rows;
  for (const MatrixCase& c : cases) {
    if (options.progress) options.progress(rows.size(), cases.size());
    MatrixRow row{.c = c};
    rows.push_back(row);
    MatrixRow& out = rows.back();
    if (Status s = CheckRunnable(m, c.cfg); !s.ok()) {
      out.note = s.error().message;
      continue;
    }
    Expected<Pipeline> plans = BindPipelineChecked(m, c.cfg, {.fuse = c.fuse});
    if (!plans) {
      out.note = plans.error().message;
      continue;
    }
    Reference& ref = refs[c.dtype];
    if (ref.weights.empty()) {
      Expected<Weights> w = GenerateWeights(m, options.seed, c.dtype);
      if (!w) return w.error();
      ref.weights = *std::move(w);
    }
    const RunNumerics numerics = NumericsOf(c.cfg, c.dtype);
    Outcome ran;
    const Tensor* expected = nullptr;
    if (options.generate > 0) {
      std::vector<std::vector<int>> tokens;
      Expected<Outcome> g = GenerateCase(m, *plans, ref.weights, *batch, c.dtype, options, rows.size(), tokens);
      if (!g) return Error{g.error().code, c.name + ": " + g.error().message};
      ran = *std::move(g);
      const auto key = std::tuple{c.dtype, numerics.moe_order, numerics.k_blocks, tokens};
      if (!generated_refs.count(key)) {
        Generation fed;
        fed.tokens = tokens;
        std::vector<Request> requests;
        for (const auto& prompt : batch->requests) requests.push_back({prompt, options.generate, 0});
        Expected<Tensor> h = RunReference(m, ref.weights, TeacherForced(requests, fed), numerics);
        if (!h) return h.error();
        generated_refs[key] = *std::move(h);
      }
      expected = &generated_refs[key];
    } else {
      Expected<RunOutput> run = RunPlans(m, *plans, ref.weights, *batch, {.dtype = c.dtype});
      if (!run) return Error{run.error().code, c.name + ": " + run.error().message};
      ran = {std::move(run->hidden), std::move(run->logits), std::move(run->ranks), run->seconds};
      const std::pair key{numerics.moe_order, numerics.k_blocks};
      if (!ref.hidden.count(key)) {
        Expected<Tensor> h = RunReference(m, ref.weights, *batch, numerics);
        if (!h) return h.error();
        ref.hidden[key] = *std::move(h);
      }
      expected = &ref.hidden[key];
    }
    const Tensor logits = ReferenceLogits(*expected, ref.weights, c.dtype);
    out.max_diff = std::max(MaxAbsDiff(ran.hidden, *expected), MaxAbsDiff(ran.logits, logits));
    // A run that computed NaN or infinity matches nothing, even the same bits.
    const bool finite = FirstNonFinite(ran.hidden).empty() && FirstNonFinite(*expected).empty() &&
                        FirstNonFinite(ran.logits).empty() && FirstNonFinite(logits).empty();
    const bool same = ran.hidden == *expected && ran.logits == logits;
    out.outcome = finite && same ? MatrixOutcome::kIdentical : MatrixOutcome::kDiffers;
    out.seconds = ran.seconds;
    for (const CommStats& s : ran.ranks) {
      out.max_calls = std::max(out.max_calls, s.calls());
      out.max_elements = std::max(out.max_elements, s.elements_sent());
    }
  }
  if (options.progress) options.progress(cases.size(), cases.size());
  return rows;
}

Expected<std::vector<MatrixPair>> RunMatrixPairs(const Model& m, const MatrixOptions& options) {
  std::vector<MatrixPair> out;
  // Nothing to compare without an MoE that runs in both orders.
  if (!HasStageKind(m, StageKind::kSparseFfn) || !MoeDispatchesA2a(m) || !m.dims) return out;
  Expected<Batch> batch = RandomBatch(options.tokens, options.requests, m.dims->vocab, options.seed);
  if (!batch) return batch.error();
  for (Dtype dtype : {Dtype::kF32, Dtype::kBf16}) {
    Expected<Weights> w = GenerateWeights(m, options.seed, dtype);
    if (!w) return w.error();
    std::vector<std::vector<int>> tp_routes, a2a_routes;
    Expected<Tensor> tp = RunReference(m, *w, *batch, {dtype, MoeSumOrder::kPerKBlock, kDefaultKBlocks}, &tp_routes);
    Expected<Tensor> a2a = RunReference(m, *w, *batch, {dtype, MoeSumOrder::kPerExpert, kDefaultKBlocks}, &a2a_routes);
    if (!tp) return tp.error();
    if (!a2a) return a2a.error();
    MatrixPair pair{fmt::format("a2a MoE vs TP-MoE {}", Name(dtype)),
                    "TP-MoE sums the experts inside each K-block, a2a sums whole experts (and rounds each)", 0,
                    dtype == Dtype::kF32 ? 1e-4 : 0.1, tp->rows()};
    for (int r = 0; r < tp->rows(); ++r) {
      const double diff = MaxAbsDiff(tp->RowRange(r, r + 1), a2a->RowRange(r, r + 1));
      if (tp_routes[static_cast<size_t>(r)] == a2a_routes[static_cast<size_t>(r)]) {
        pair.max_diff = std::max(pair.max_diff, diff);
      } else {
        ++pair.rerouted;
        pair.rerouted_max_diff = std::max(pair.rerouted_max_diff, diff);
      }
    }
    out.push_back(pair);
  }
  return out;
}

}  // namespace seam

// Running every rank's plan on threads (or recording it), and checking a
// configuration can run with the canonical reduction.
#include <fmt/format.h>

#include <chrono>

#include "exec/interpreter.h"
#include "seam/exec.h"

namespace seam {
namespace {

bool PowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

Status Divides(int part, int whole, std::string_view what, std::string_view by) {
  if (whole % part == 0) return Status::Ok();
  return InvalidArgument(fmt::format("{} = {} does not split over {} = {}", what, whole, by, part));
}

// Every group that completes a sum must be a power of two that splits the
// canonical K-blocks, so each rank holds an aligned subtree of the tree.
Status SumGroupsFit(const ParallelConfig& cfg, int k_blocks) {
  if (!PowerOfTwo(k_blocks)) return InvalidArgument(fmt::format("k_blocks = {} is not a power of two", k_blocks));
  const std::pair<const char*, int> groups[] = {{"tp", cfg.tp}, {"attn_tp", cfg.attn_tp()},
                                                {"dense_tp", cfg.dense_tp_size()}};
  for (const auto& [name, size] : groups) {
    if (!PowerOfTwo(size) || size > k_blocks) {
      return InvalidArgument(fmt::format("{}={} cannot run with the canonical reduction: sums need power-of-two "
                                         "groups of at most {} ranks (the canonical K-blocks)",
                                         name, size, k_blocks));
    }
  }
  return Status::Ok();
}

Status WidthsFit(const Model& m, const ParallelConfig& cfg, int k_blocks) {
  const ModelDims& d = *m.dims;
  const int a = cfg.attn_tp();
  const int t = cfg.tp;
  const int dense = cfg.dense_tp_size();
  std::vector<Status> checks;
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
    switch (s.decl.kind) {
      case StageKind::kAttention: {
        checks.push_back(Divides(a, d.heads, "attention heads", "attn_tp"));
        if (d.mla.kv_lora > 0) {
          checks.push_back(Divides(k_blocks, d.heads * d.mla.v, "the attention output width", "k_blocks"));
          break;
        }
        const int kv = s.decl.kv_heads > 0 ? s.decl.kv_heads : d.kv_heads;
        checks.push_back(Divides(kv, d.heads, "attention heads", "key/value heads"));
        if (kv % a != 0) checks.push_back(Divides(kv, a, "attn_tp", "key/value heads"));
        checks.push_back(Divides(k_blocks, d.heads * d.head_dim, "the attention output width", "k_blocks"));
        break;
      }
      case StageKind::kMixer:
        checks.push_back(Divides(a, d.mixer_heads, "mixer heads", "attn_tp"));
        checks.push_back(Divides(k_blocks, d.mixer_heads * d.mixer_head_dim, "the mixer width", "k_blocks"));
        break;
      case StageKind::kDenseFfn: {
        const int width = FfnWidthOf(s.decl, d);
        checks.push_back(Divides(dense, width, "the dense FFN width", "dense_tp"));
        checks.push_back(Divides(k_blocks, width, "the dense FFN width", "k_blocks"));
        break;
      }
      case StageKind::kSparseFfn:
        checks.push_back(Divides(t, d.moe_intermediate, "the expert width", "tp"));
        checks.push_back(Divides(k_blocks, d.moe_intermediate, "the expert width", "k_blocks"));
        if (d.shared_intermediate > 0) {
          checks.push_back(Divides(t, d.shared_intermediate, "the shared expert width", "tp"));
          checks.push_back(Divides(k_blocks, d.shared_intermediate, "the shared expert width", "k_blocks"));
        }
        break;
      case StageKind::kLinear:
      case StageKind::kNoOp: break;
    }
  }
  for (Status& s : checks) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

RunNumerics NumericsOf(const ParallelConfig& cfg, Dtype dtype) { return {dtype, cfg.moe, 8}; }

Status CheckRunnable(const Model& m, const ParallelConfig& cfg, int k_blocks) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to run with", m.name));
  if (Status s = SumGroupsFit(cfg, k_blocks); !s.ok()) return s;
  return WidthsFit(m, cfg, k_blocks);
}

Status CheckRun(const Model& m, const Pipeline& plans, const Weights& w, const RunOptions& options) {
  SEAM_CHECK(!plans.empty(), "no plans to run");
  const ParallelConfig& cfg = plans.front().config();
  if (Status s = CheckRunnable(m, cfg, options.k_blocks); !s.ok()) return s;
  if (Status s = CheckWeights(m, w); !s.ok()) return s;
  if (static_cast<int>(plans.size()) != cfg.pp) return InvalidArgument("one plan per pipeline rank is needed");
  return Status::Ok();
}

RankOutput RunRankOf(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                     const RunOptions& options, int rank, Comm& comm) {
  const ParallelConfig& cfg = plans.front().config();
  const exec::RunContext ctx{m, w, LayoutOf(b, cfg.attn_dp), RunNumerics{options.dtype, cfg.moe, options.k_blocks},
                             cfg.input_scattered ? Variant::kInputScattered : Variant::kOrdinary,
                             StagesOf(m, 0, m.num_layers)};
  std::optional<Tensor> rows = exec::RunRank(ctx, plans[static_cast<size_t>(CoordOf(cfg, rank).pp_rank)], comm);
  return {std::move(rows), comm.stats()};
}

RunOutput AssembleRun(const Model& m, const ParallelConfig& cfg, const Batch& b, std::vector<RankOutput> ranks) {
  const BatchLayout layout = LayoutOf(b, cfg.attn_dp);
  RunOutput out;
  out.hidden = Tensor(b.tokens(), m.hidden);
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    out.ranks.push_back(std::move(ranks[rank].stats));
    const std::optional<Tensor>& rows = ranks[rank].rows;
    if (!rows) continue;
    const RowSpan span = SpanOf(layout, cfg, Rows::Attention(cfg), CoordOf(cfg, static_cast<int>(rank)));
    SEAM_CHECK(rows->rows() == span.rows() && rows->cols() == m.hidden, "the final rows do not match the DP group");
    for (int r = 0; r < span.rows(); ++r) {
      const int dst = layout.batch_index[static_cast<size_t>(span.begin + r)];
      std::copy(rows->row(r), rows->row(r) + rows->cols(), out.hidden.row(dst));
    }
  }
  return out;
}

Expected<RunOutput> RunPlans(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                             const RunOptions& options) {
  if (Status s = CheckRun(m, plans, w, options); !s.ok()) return s.error();
  const ParallelConfig& cfg = plans.front().config();
  std::vector<RankOutput> ranks(static_cast<size_t>(WorldSize(cfg)));
  const auto start = std::chrono::steady_clock::now();
  Status status = RunOnRanks(options.backend, WorldSize(cfg), [&](int rank, Comm& comm) {
    ranks[static_cast<size_t>(rank)] = RunRankOf(m, plans, w, b, options, rank, comm);
  }, options.timeout_seconds);
  if (!status.ok()) return status.error();
  RunOutput out = AssembleRun(m, cfg, b, std::move(ranks));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace seam

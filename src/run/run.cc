// Running every rank's plan on threads (or recording it), and checking a
// configuration can run: sizes to run with, and a sharding both `plan` and
// `run` accept (seam/sharding.h).
#include "seam/runtime/exec.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "run/interpreter.h"
#include "run/rank_step.h"
#include "run/record.h"
#include "seam/sharding.h"

namespace seam {

Status CheckRunnable(const Model& m, const ParallelConfig& cfg) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to run with", m.name));
  return CheckSharding(m, cfg);
}

Status CheckRun(const Model& m, const Pipeline& plans, const Weights& w, const RunOptions& options) {
  SEAM_CHECK(!plans.empty(), "no plans to run");
  const ParallelConfig& cfg = plans.front().config();
  SEAM_RETURN_IF_ERROR(CheckRunnable(m, cfg));
  if (options.backend != Backend::kRecord) SEAM_RETURN_IF_ERROR(CheckWeights(m, w));
  if (static_cast<int>(plans.size()) != cfg.pp) return InvalidArgument("one plan per pipeline rank is needed");
  return Status::Ok();
}

namespace exec {

RankOutput RunRankStep(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                       const RunOptions& options, int rank, Comm& comm, RankCache& cache) {
  const ParallelConfig& cfg = plans.front().config();
  const RunContext ctx{m,
                       w,
                       LayoutOf(b, cfg.attn_dp, cfg.cp),
                       NumericsOf(cfg, options.dtype),
                       cfg.input_scattered ? Variant::kInputScattered : Variant::kOrdinary,
                       StagesOf(m, 0, m.num_layers),
                       cache};
  const Plan& plan = plans[static_cast<size_t>(CoordOf(cfg, rank).pp_rank)];
  if (!comm.moves_data()) {
    RecordRank(ctx, plan, comm);
    return {std::nullopt, std::nullopt, comm.stats()};
  }
  std::optional<FinalRows> rows = RunRank(ctx, plan, comm);
  if (!rows) return {std::nullopt, std::nullopt, comm.stats()};
  return {std::move(rows->hidden), std::move(rows->logits), comm.stats()};
}

}  // namespace exec

RankOutput RunRankOf(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b, const RunOptions& options,
                     int rank, Comm& comm) {
  exec::RankCache cache;  // one step: the batch's requests start here and end with it
  return exec::RunRankStep(m, plans, w, b, options, rank, comm, cache);
}

RunOutput AssembleRun(const Model& m, const ParallelConfig& cfg, const Batch& b, std::vector<RankOutput> ranks) {
  const BatchLayout layout = LayoutOf(b, cfg.attn_dp, cfg.cp);
  RunOutput out;
  // A backend that moves no data returns no rows: nothing to assemble.
  const bool any = std::any_of(ranks.begin(), ranks.end(), [](const RankOutput& r) { return r.rows.has_value(); });
  if (any) out.hidden = Tensor(b.tokens(), m.hidden);
  const bool logits = std::any_of(ranks.begin(), ranks.end(), [](const RankOutput& r) { return r.logits.has_value(); });
  if (logits) out.logits = Tensor(b.tokens(), m.dims->vocab);
  // Each DP group's rows, from attention-TP rank 0 of it, into batch order.
  const auto place = [&](const Tensor& rows, const RowSpan& span, Tensor& into) {
    SEAM_CHECK(rows.rows() == span.rows() && rows.cols() == into.cols(), "the final rows do not match the DP group");
    for (int r = 0; r < span.rows(); ++r) {
      const int dst = layout.batch_index[static_cast<size_t>(span.begin + r)];
      std::copy(rows.row(r), rows.row(r) + rows.cols(), into.row(dst));
    }
  };
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    out.ranks.push_back(std::move(ranks[rank].stats));
    out.calls.push_back(std::move(ranks[rank].calls));
    if (!ranks[rank].rows) continue;
    const RowSpan span = SpanOf(layout, cfg, Rows::Attention(cfg), CoordOf(cfg, static_cast<int>(rank)));
    place(*ranks[rank].rows, span, out.hidden);
    if (logits) {
      SEAM_CHECK(ranks[rank].logits.has_value(), "a DP group returned no logits");
      place(*ranks[rank].logits, span, out.logits);
    }
  }
  return out;
}

Expected<RunOutput> RunPlans(const Model& m, const Pipeline& plans, const Weights& w, const Batch& b,
                             const RunOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckRun(m, plans, w, options));
  const ParallelConfig& cfg = plans.front().config();
  std::vector<RankOutput> ranks(static_cast<size_t>(WorldSize(cfg)));
  const auto start = std::chrono::steady_clock::now();
  Status status = RunOnRanks(
      options.backend, WorldSize(cfg),
      [&](int rank, Comm& comm) {
        std::vector<CommCall> calls;
        if (options.log_calls) comm.LogCalls(&calls);
        RankOutput& out = ranks[static_cast<size_t>(rank)];
        out = RunRankOf(m, plans, w, b, options, rank, comm);
        comm.LogCalls(nullptr);
        out.calls = std::move(calls);
      },
      options.timeout_seconds);
  if (!status.ok()) return status.error();
  RunOutput out = AssembleRun(m, cfg, b, std::move(ranks));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

Status CheckFinite(const RunOutput& out, const Tensor& reference, const Tensor& reference_logits) {
  for (const auto& [what, t] :
       {std::pair{"the run's output", &out.hidden}, std::pair{"the reference", &reference},
        std::pair{"the run's logits", &out.logits}, std::pair{"the reference logits", &reference_logits}}) {
    if (const std::string where = FirstNonFinite(*t); !where.empty()) {
      return FailedCheck(fmt::format("{} holds {}: nothing was computed to compare", what, where));
    }
  }
  return Status::Ok();
}

}  // namespace seam

// A rank's plan as the trace an engine would leave: each collective with the
// place it implements, and seam's own runs written the same way.
#include <fmt/format.h>

#include "numerics/stages.h"
#include "run/calls.h"
#include "run/trace_align.h"

namespace seam {
namespace {

// The dtype a trace names for what crosses the wire in `d` (torch's names).
std::string TorchDtype(WireDtype d) {
  switch (d) {
    case WireDtype::kFp32: return "float32";
    case WireDtype::kBf16: return "bfloat16";
    case WireDtype::kFp16: return "float16";
    case WireDtype::kFp8: return "float8_e4m3fn";
  }
  return "";
}

TraceOp TraceOpOf(CommOp op) {
  switch (op) {
    case CommOp::kAllReduce: return TraceOp::kAllReduce;
    case CommOp::kReduceScatter: return TraceOp::kReduceScatter;
    case CommOp::kAllGather: return TraceOp::kAllGather;
    case CommOp::kAllToAll: return TraceOp::kAllToAll;
    case CommOp::kSend: return TraceOp::kSend;
    case CommOp::kRecv: return TraceOp::kRecv;
    case CommOp::kBarrier: break;
  }
  SEAM_CHECK(false, "a barrier is no trace event");
}

TraceEvent EventOf(const CommCall& c, int rank, WireDtype d) {
  TraceEvent e{.op = TraceOpOf(c.op), .group = c.group, .shape = {c.rows, c.cols}, .elements = c.rows * c.cols};
  e.dtype = TorchDtype(d);
  for (int rows : c.parts) e.splits.push_back(int64_t{rows} * c.cols);
  if (e.op == TraceOp::kAllReduce || e.op == TraceOp::kReduceScatter) e.reduce = "sum";
  if (e.op == TraceOp::kSend || e.op == TraceOp::kRecv) {
    e.peer = c.peer;
    e.group = {std::min(rank, c.peer), std::max(rank, c.peer)};
  }
  return e;
}

// What the stage before `i` is, as an exit or entry names its side.
std::string Before(const Plan& plan, const LinePlan& line, int i) {
  if (i > 0) return std::string(Name(line.stages[static_cast<size_t>(i - 1)].decl.kind));
  return plan.header().pp_rank == 0 ? "the embedding" : "the handoff";
}

std::string After(const Plan& plan, const LinePlan& line, int i) {
  if (i + 1 < static_cast<int>(line.stages.size())) {
    return std::string(Name(line.stages[static_cast<size_t>(i + 1)].decl.kind));
  }
  return plan.header().pp_rank + 1 < plan.config().pp ? "the handoff" : "the final norm";
}

std::string WhereOf(const Plan& plan, const LinePlan& line, const StepPlace& at) {
  const int pp = plan.header().pp_rank;
  switch (at.line.part) {
    case LinePart::kStart: return pp == 0 ? "the embedding" : fmt::format("the handoff from pipeline rank {}", pp - 1);
    case LinePart::kEnd:
      return line.end.kind == EndKind::kSend ? fmt::format("the handoff to pipeline rank {}", pp + 1)
                                             : "the final norm";
    case LinePart::kHead: return "the LM head";
    case LinePart::kEntry:
    case LinePart::kCompute:
    case LinePart::kExit: break;
  }
  const StagePlan& s = line.stages[static_cast<size_t>(at.line.stage_at)];
  const std::string kind(Name(s.decl.kind));
  if (at.line.part == LinePart::kEntry) {
    return fmt::format("layer {} entry ({} -> {})", s.layer, Before(plan, line, at.line.stage_at), kind);
  }
  if (at.line.part == LinePart::kCompute) return fmt::format("layer {} {}", s.layer, kind);
  return fmt::format("layer {} exit ({} -> {})", s.layer, kind, After(plan, line, at.line.stage_at));
}

BatchLayout LayoutOfRows(std::span<const int> group_rows) {
  BatchLayout l;
  for (int rows : group_rows) {
    l.group_offset.push_back(l.tokens);
    l.group_rows.push_back(rows);
    l.tokens += rows;
  }
  return l;
}

}  // namespace

std::string BatchShapeError(size_t given, const ParallelConfig& cfg) {
  if (cfg.cp == 1) {
    return fmt::format("the batch gives {} DP groups' rows; the configuration has {} (attention DP)", given,
                       cfg.attn_dp);
  }
  return fmt::format(
      "the batch gives {} shards' rows; the configuration has {} (attention DP {} x CP {}: each CP "
      "rank's rows of each DP group, in that order)",
      given, cfg.shards(), cfg.attn_dp, cfg.cp);
}

std::vector<PlannedCollective> PlannedFor(const Model& m, const Pipeline& plans, const std::vector<StageRef>& stages,
                                          std::span<const int> group_rows, int rank, size_t most) {
  const ParallelConfig& cfg = plans.front().config();
  const Weights none;
  const BatchLayout layout = LayoutOfRows(group_rows);
  const Variant variant = cfg.input_scattered ? Variant::kInputScattered : Variant::kOrdinary;
  exec::RankCache cache;  // no kernels run: it stays empty
  const exec::RunContext ctx{m, none, layout, NumericsOf(cfg, Dtype::kF32), variant, stages, cache};
  const Plan& plan = plans[static_cast<size_t>(CoordOf(cfg, rank).pp_rank)];
  const WireDtypes& wire = plan.header().wire;
  std::vector<PlannedCollective> out;
  for (const exec::PlannedCall& c : exec::PlannedCalls(ctx, plan, rank, most)) {
    const Step& s = *c.step;
    PlannedCollective p{.event = EventOf(c.call, rank, s.kind == StepKind::kDispatch ? wire.dispatch : wire.act),
                        .kind = s.kind,
                        .group = s.group,
                        .operand = s.operand,
                        .owed_before = s.owed_before,
                        .where = WhereOf(plan, *plan.line(variant), c.where),
                        .routed = c.call.op == CommOp::kAllToAll};
    if (c.call.op == CommOp::kAllGather || c.call.op == CommOp::kReduceScatter) {
      for (int rows : c.call.parts) p.member_elements.push_back(int64_t{rows} * c.call.cols);
    }
    out.push_back(std::move(p));
  }
  return out;
}

Expected<std::vector<std::vector<PlannedCollective>>> PlannedTraces(const Model& m, const Pipeline& plans,
                                                                    std::span<const int> group_rows) {
  SEAM_CHECK(!plans.empty(), "no plans");
  const ParallelConfig& cfg = plans.front().config();
  if (static_cast<int>(group_rows.size()) != cfg.shards())
    return InvalidArgument(BatchShapeError(group_rows.size(), cfg));
  for (int rows : group_rows) {
    if (rows < 0) return InvalidArgument("a DP group's rows are negative");
  }
  const std::vector<StageRef> stages = StagesOf(m, 0, m.num_layers);
  std::vector<std::vector<PlannedCollective>> out;
  for (int rank = 0; rank < WorldSize(cfg); ++rank) out.push_back(PlannedFor(m, plans, stages, group_rows, rank));
  return out;
}

std::vector<RankTrace> TraceOfRun(const RunOutput& out, const Pipeline& plans) {
  std::vector<RankTrace> traces;
  for (size_t rank = 0; rank < out.calls.size(); ++rank) {
    const ParallelConfig& cfg = plans.front().config();
    const int r = static_cast<int>(rank);
    const WireDtypes& wire = plans[static_cast<size_t>(CoordOf(cfg, r).pp_rank)].header().wire;
    RankTrace& t = traces.emplace_back();
    t.rank = r;
    // A MoE's exchanges come in pairs: the dispatch, then the combine.
    bool dispatch = true;
    for (const CommCall& c : out.calls[rank]) {
      WireDtype d = wire.act;
      if (c.op == CommOp::kAllToAll) {
        d = dispatch ? wire.dispatch : wire.act;
        dispatch = !dispatch;
      }
      t.events.push_back(EventOf(c, r, d));
      t.events.back().line = static_cast<int>(t.events.size());
    }
  }
  return traces;
}

}  // namespace seam

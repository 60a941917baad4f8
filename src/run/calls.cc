#include "run/calls.h"

#include "run/rank_place.h"
#include "seam/sharding.h"
#include "seam/step_rules.h"

namespace seam::exec {
namespace {

class Walker {
 public:
  Walker(const RunContext& ctx, const Plan& plan, int rank, size_t most)
      : ctx_(ctx), cfg_(plan.config()), rank_(rank), most_(most), place_(ctx.layout, cfg_, rank) {}

  std::vector<PlannedCall> Run(const LinePlan& line) {
    // Past the first `most` calls each part is passed over without a look
    // at its steps: a trace check asks for a few calls at many batches.
    WalkLine(line, [this](const LinePlace& at, const std::vector<Step>& steps) {
      const StageRef* stage = at.in_stage() ? &ctx_.stages[static_cast<size_t>(at.stage->index)] : nullptr;
      for (size_t i = 0; i < steps.size() && calls_.size() < most_; ++i) {
        const Step& s = steps[i];
        SEAM_CHECK(StepRuleError(s, cfg_).empty(), StepRuleError(s, cfg_));
        if (!IsCollective(s.kind)) continue;
        PlannedCall c = CallOf(s, stage);
        c.step = &s;
        c.where = {at, static_cast<int>(i)};
        calls_.push_back(std::move(c));
      }
    });
    return std::move(calls_);
  }

 private:
  RowSpan Span(Rows r) const { return place_.Span(r); }
  RankGroup GroupFor(Group g) const { return place_.GroupFor(g); }

  PlannedCall CallOf(const Step& s, const StageRef* stage) const {
    if (s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine) {
      return Exchange(s, *stage, s.kind == StepKind::kDispatch);
    }
    PlannedCall c;
    c.call.rows = Span(s.rows_in).rows();
    c.call.cols = s.width;
    if (s.kind == StepKind::kSend || s.kind == StepKind::kRecv) {
      const bool send = s.kind == StepKind::kSend;
      c.call.op = send ? CommOp::kSend : CommOp::kRecv;
      c.call.peer = place_.Neighbour(send ? +1 : -1);
      if (!send) c.call.rows = Span(s.rows_out).rows();
      return c;
    }
    const RankGroup g = GroupFor(*s.group);
    c.call.group = g.ranks;
    switch (s.kind) {
      case StepKind::kAllReduce:
      case StepKind::kAllReduceAddNorm: c.call.op = CommOp::kAllReduce; break;
      case StepKind::kReduceScatter:
      case StepKind::kReduceScatterV:
        c.call.op = CommOp::kReduceScatter;
        for (const RowSpan& sp : place_.ScatterSpans(g, s.rows_in, s.rows_out)) c.call.parts.push_back(sp.rows());
        break;
      case StepKind::kAllGather:
      case StepKind::kGatherQueries:  // each DCP peer's query heads of the same rows
      case StepKind::kGatherKeys:     // each CP peer's rows' keys and values, beside this rank's
        c.call.op = CommOp::kAllGather;
        c.call.parts = place_.MemberRows(g, s.rows_in);
        break;
      case StepKind::kExchangePartials:  // to each DCP peer its heads' partials of every row
        c.call.op = CommOp::kAllToAll;
        c.call.parts = place_.MemberRows(g, s.rows_in);
        c.call.rows = 0;
        for (int rows : c.call.parts) c.call.rows += rows;
        break;
      case StepKind::kGatherVocab:
        // Each member's columns of the vocabulary, padded to one chunk.
        c.call.op = CommOp::kAllGather;
        c.call.cols = (s.width + g.size() - 1) / g.size();
        c.call.parts.assign(static_cast<size_t>(g.size()), static_cast<int>(c.call.rows));
        break;
      default: SEAM_CHECK(false, "a step with no call of its own");
    }
    return c;
  }

  // The rows member `from` sends member `to` (its experts' share of from's
  // slice under the even spread), as the dispatch packs them.
  int Routed(const RankGroup& g, int from, int to, const StageRef& s) const {
    const ModelDims& d = *ctx_.model.dims;
    const RowSpan sp = place_.MemberSpans(g, Rows::Slice(cfg_))[static_cast<size_t>(from)];
    const int k = s.decl.top_k;
    int n = 0;
    for (int r = sp.begin; r < sp.end; ++r) {
      for (int j = 0; j < k; ++j) n += ExpertOwner((r * k + j) % d.experts, g.size()) == to ? 1 : 0;
    }
    return n;
  }

  // The dispatch sends each member the rows its experts take with the
  // expert id beside each (one column more); the combine returns what each
  // member sent here.
  PlannedCall Exchange(const Step& step, const StageRef& s, bool dispatch) const {
    const RankGroup g = GroupFor(*step.group);
    const int me = g.IndexOf(rank_);
    PlannedCall c{.call = {CommOp::kAllToAll, g.ranks, -1, 0, ctx_.model.hidden + (dispatch ? 1 : 0)}};
    for (int j = 0; j < g.size(); ++j) {
      c.call.parts.push_back(dispatch ? Routed(g, me, j, s) : Routed(g, j, me, s));
      c.call.rows += c.call.parts.back();
    }
    return c;
  }

  const RunContext& ctx_;
  const ParallelConfig& cfg_;
  int rank_;
  size_t most_;
  RankPlace place_;
  std::vector<PlannedCall> calls_;
};

}  // namespace

std::vector<PlannedCall> PlannedCalls(const RunContext& ctx, const Plan& plan, int rank, size_t most) {
  const LinePlan* line = plan.line(ctx.variant);
  SEAM_CHECK(line != nullptr, "the plan has no line for this batch variant");
  return Walker(ctx, plan, rank, most).Run(*line);
}

}  // namespace seam::exec

#include "run/record.h"

#include "run/rank_place.h"
#include "seam/sharding.h"
#include "seam/step_rules.h"

namespace seam::exec {
namespace {

class Recorder {
 public:
  Recorder(const RunContext& ctx, const Plan& plan, Comm& comm)
      : ctx_(ctx), cfg_(plan.config()), comm_(comm), place_(ctx.layout, cfg_, comm.rank()) {}

  void Run(const LinePlan& line) {
    Steps(line.start, nullptr);
    for (const StagePlan& s : line.stages) {
      const StageRef& ref = ctx_.stages[static_cast<size_t>(s.index)];
      Steps(s.entry, &ref);
      Steps(s.compute, &ref);
      Steps(s.exit, &ref);
    }
    Steps(line.end.steps, nullptr);
    Steps(line.end.head, nullptr);
  }

 private:
  RowSpan Span(Rows r) const { return place_.Span(r); }
  RankGroup GroupFor(Group g) const { return place_.GroupFor(g); }
  int Neighbour(int step) const { return place_.Neighbour(step); }

  void Steps(const std::vector<Step>& steps, const StageRef* stage) {
    for (const Step& s : steps) {
      SEAM_CHECK(StepRuleError(s, cfg_).empty(), StepRuleError(s, cfg_));
      Step1(s, stage);
    }
  }

  void Step1(const Step& s, const StageRef* stage) {
    switch (s.kind) {
      case StepKind::kAllReduce:
      case StepKind::kAllReduceAddNorm:
        comm_.AllReduce(GroupFor(*s.group), Tensor(Span(s.rows_in).rows(), s.width));
        return;
      case StepKind::kReduceScatter:
      case StepKind::kReduceScatterV: return ReduceScatter(s);
      case StepKind::kAllGather: return AllGather(s);
      case StepKind::kGatherVocab: {
        const RankGroup g = GroupFor(*s.group);
        const int rows = Span(s.rows_in).rows(), chunk = (s.width + g.size() - 1) / g.size();
        comm_.AllGather(g, Tensor(rows, chunk), std::vector<int>(static_cast<size_t>(g.size()), rows));
        return;
      }
      case StepKind::kDispatch: return Exchange(s, *stage, true);
      case StepKind::kCombine: return Exchange(s, *stage, false);
      case StepKind::kSend: comm_.Send(Neighbour(+1), Tensor(Span(s.rows_in).rows(), s.width)); return;
      case StepKind::kRecv: comm_.Recv(Neighbour(-1), Span(s.rows_out).rows(), s.width); return;
      case StepKind::kSlice:
      case StepKind::kStartResidual:
      case StepKind::kAdd:
      case StepKind::kNorm:
      case StepKind::kCompute:
      case StepKind::kEmbed:
      case StepKind::kLmHead:
      case StepKind::kLeave: return;  // local: nothing to count
    }
  }

  void ReduceScatter(const Step& s) {
    const RankGroup g = GroupFor(*s.group);
    comm_.ReduceScatter(g, Tensor(Span(s.rows_in).rows(), s.width), place_.ScatterSpans(g, s.rows_in, s.rows_out));
  }

  void AllGather(const Step& s) {
    const RankGroup g = GroupFor(*s.group);
    comm_.AllGather(g, Tensor(Span(s.rows_in).rows(), s.width), place_.MemberRows(g, s.rows_in));
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

  // The dispatch sends each member the rows its experts take (with the
  // expert id); the combine returns what each member sent here.
  void Exchange(const Step& step, const StageRef& s, bool dispatch) {
    const RankGroup g = GroupFor(*step.group);
    const int me = g.IndexOf(comm_.rank());
    std::vector<Tensor> to_each;
    for (int j = 0; j < g.size(); ++j) {
      const int rows = dispatch ? Routed(g, me, j, s) : Routed(g, j, me, s);
      to_each.emplace_back(rows, ctx_.model.hidden + (dispatch ? 1 : 0));
    }
    comm_.AllToAll(g, std::move(to_each));
  }

  const RunContext& ctx_;
  const ParallelConfig& cfg_;
  Comm& comm_;
  RankPlace place_;
};

}  // namespace

void RecordRank(const RunContext& ctx, const Plan& plan, Comm& comm) {
  const LinePlan* line = plan.line(ctx.variant);
  SEAM_CHECK(line != nullptr, "the plan has no line for this batch variant");
  Recorder(ctx, plan, comm).Run(*line);
}

}  // namespace seam::exec

// The plan walker: replays each line from the rank's start and compares the
// replayed state with the boundaries the binder recorded.
#include "seam/verify.h"
#include "seam/plan_walk.h"

#include <fmt/format.h>

#include <algorithm>

#include "verify/checks.h"
#include "verify/symbolic.h"

namespace seam {
namespace {

using verify::State;

}  // namespace

std::string_view InvariantText(Invariant i) {
  switch (i) {
    case Invariant::kResidualRowsAgree: return "both sides of a boundary agree on the residual's rows";
    case Invariant::kSumOnce: return "every owed sum completes once, over its group, before any read";
    case Invariant::kHandoff: return "a handoff carries the attention rows with every sum complete";
    case Invariant::kAwayFromCut: return "stages away from a cut bind as they do uncut";
    case Invariant::kCutRejects: return "a cut rejects only what the uncut stack rejects";
    case Invariant::kStageRows: return "each stage receives the rows it declared";
    case Invariant::kGroupFitsRows: return "collectives name the right group for their rows";
    case Invariant::kWellFormed: return "the plan agrees with itself, its model and its configuration";
    case Invariant::kPolicy: return "an FFN's sum completes only by collectives the boundary reduction allows";
    case Invariant::kFewestBytes: return "the plan moves no more bytes than its stages need";
  }
  return "?";
}

namespace {

std::string Facts(const std::optional<ValueFacts>& v) {
  if (!v) return "no value (written)";
  return fmt::format("value on {} owing {}", Name(v->rows), Name(v->owed));
}

std::string RowsText(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "none"; }

bool Completes(StepKind k) { return Spec(k).completes; }

class Walker {
 public:
  Walker(const Plan& plan, const LinePlan& line, std::vector<Violation>& out)
      : plan_(plan), cfg_(plan.config()), line_(line), out_(out) {}

  void Run() {
    State st;
    WalkLine(line_, [&](const LinePlace& at, const std::vector<Step>& steps) {
      switch (at.part) {
        case LinePart::kStart: return RunStart(st);
        case LinePart::kEntry: return EnterStage(*at.stage, st);
        case LinePart::kCompute:
          if (at.stage->decl.kind != StageKind::kNoOp) RunSteps(&at.stage->decl, steps, Side::kCompute, st);
          return;
        case LinePart::kExit: return LeaveStage(*at.stage, st);
        case LinePart::kEnd: return RunEnd(st);
        case LinePart::kHead:
          if (line_.end.kind == EndKind::kFinalNorm) RunHead(st);
          return;
      }
    });
  }

 private:
  bool first_rank() const { return plan_.header().pp_rank == 0; }
  bool last_rank() const { return plan_.header().pp_rank + 1 == cfg_.pp; }

  // The first rank starts with its one embedding step; a later rank
  // receives slices and gathers them, summing nothing.
  void RunStart(State& st) {
    Where(-1, Side::kStart, -1);
    const bool embeds = line_.start.size() == 1 && line_.start.front().kind == StepKind::kEmbed;
    if (first_rank()) {
      if (!embeds) Report(Invariant::kHandoff, "the first pipeline rank starts with its embedding alone");
      RunSteps(nullptr, line_.start, Side::kStart, st);
      return;
    }
    if (line_.start.empty()) Report(Invariant::kHandoff, "a later pipeline rank receives nothing");
    for (const Step& s : line_.start) {
      if (s.kind == StepKind::kEmbed) Report(Invariant::kHandoff, "a later pipeline rank embeds tokens");
    }
    RunSteps(nullptr, line_.start, Side::kStart, st);
    for (size_t i = 0; i < line_.start.size(); ++i) {
      if (Completes(line_.start[i].kind)) {
        Where(-1, Side::kStart, static_cast<int>(i));
        Report(Invariant::kHandoff, "the receiver sums what it receives");
      }
    }
    Where(-1, Side::kStart, -1);
    if (st.residual != Rows::Attention(cfg_) || (st.value && st.value->rows != Rows::Attention(cfg_))) {
      Report(Invariant::kHandoff, "the received slices are not gathered back to the attention rows");
    }
  }

  // A stage's arrival, then its entry. A no-op's steps are not replayed: it
  // has no shape to check them against.
  void EnterStage(const StagePlan& s, State& st) {
    Where(s.index, Side::kArrival, -1);
    Compare(st, s.arrives, "the stage was bound for");
    st = {s.arrives.value, s.arrives.residual, std::nullopt};
    if (s.decl.kind != StageKind::kNoOp) return RunEntry(s, st);
    if (!s.entry.empty() || !s.compute.empty() || !s.exit.empty() || s.input || s.residual) {
      Report(Invariant::kStageRows, "a no-op stage runs steps or records rows");
    }
  }

  // A stage's exit, then what it departs with.
  void LeaveStage(const StagePlan& s, State& st) {
    if (s.decl.kind != StageKind::kNoOp) RunSteps(&s.decl, s.exit, Side::kExit, st);
    Where(s.index, Side::kExit, -1);
    Compare(st, s.departs, "the exit records");
    st = {s.departs.value, s.departs.residual, std::nullopt};
  }

  void RunEntry(const StagePlan& s, State& st) {
    RunSteps(&s.decl, s.entry, Side::kEntry, st);
    Where(s.index, Side::kEntry, -1);
    if (st.residual != s.residual) {
      Report(Invariant::kResidualRowsAgree, fmt::format("the entry leaves the residual on {} but the stage runs with "
                                                        "it on {}",
                                                        RowsText(st.residual), RowsText(s.residual)));
    }
    if (st.input != s.input) {
      Report(Invariant::kStageRows, fmt::format("the entry hands compute {} rows but the stage records {}",
                                                RowsText(st.input), RowsText(s.input)));
    }
  }

  // The last rank ends on the final norm; any other rank sends every slice.
  void RunEnd(State& st) {
    const Side side = SideOf(line_.end.kind);
    Where(-1, side, -1);
    const EndKind expected = last_rank() ? EndKind::kFinalNorm : EndKind::kSend;
    if (line_.end.kind != expected) {
      Report(Invariant::kHandoff, fmt::format("pipeline rank {} of {} ends with a {} step list", plan_.header().pp_rank,
                                              cfg_.pp, Name(line_.end.kind)));
    }
    Compare(st, line_.end.arrives, "the rank's end was bound for");
    st = {line_.end.arrives.value, line_.end.arrives.residual, std::nullopt};
    RunSteps(nullptr, line_.end.steps, side, st);
    Where(-1, side, -1);
    if (line_.end.kind == EndKind::kSend) {
      if (st.value || st.residual) Report(Invariant::kHandoff, "the handoff leaves the value or the residual unsent");
      if (!line_.end.head.empty()) Report(Invariant::kHandoff, "a rank that sends runs an LM head");
      if (!SendsResidual()) Report(Invariant::kHandoff, "the handoff does not send the residual");
      return;
    }
    if (st.value) Report(Invariant::kSumOnce, fmt::format("the stack ends with a {} never added", Facts(st.value)));
    if (st.residual != Rows::Attention(cfg_)) {
      Report(Invariant::kResidualRowsAgree, "the final norm does not read the residual on the attention rows");
    }
    if (st.input != Rows::Attention(cfg_))
      Report(Invariant::kStageRows, "the final norm does not read the attention rows");
  }

  // The LM head reads the final norm's output and leaves every row's logits
  // over the whole vocabulary on the attention rows.
  void RunHead(State& st) {
    if (line_.end.head.empty()) return;
    RunSteps(nullptr, line_.end.head, Side::kHead, st);
    Where(-1, Side::kHead, -1);
    const bool computes = std::any_of(line_.end.head.begin(), line_.end.head.end(),
                                      [](const Step& s) { return s.kind == StepKind::kLmHead; });
    if (!computes) Report(Invariant::kStageRows, "the LM head's steps compute no logits");
    if (st.logits != Rows::Attention(cfg_)) {
      Report(Invariant::kStageRows, "the LM head does not leave its logits on the attention rows");
    }
  }

  bool SendsResidual() const {
    for (const Step& s : line_.end.steps) {
      if (s.kind == StepKind::kSend && s.operand == Operand::kResidual) return true;
    }
    return false;
  }

  void RunSteps(const StageDecl* decl, const std::vector<Step>& steps, Side side, State& st) {
    for (size_t i = 0; i < steps.size(); ++i) {
      Where(stage_, side, static_cast<int>(i));
      Policy(steps[i]);
      verify::Apply(cfg_, decl, steps[i], st, [this](Invariant inv, std::string m) { Report(inv, std::move(m)); });
      if (steps[i].kind == StepKind::kCompute) from_ffn_ = decl != nullptr && IsFfn(*decl);
    }
  }

  // Invariant 9: the boundary reduction says which collectives may complete
  // an FFN's sum: a fixed-size reduce-scatter only under rs or rs+rsv, the
  // attention-DP reduce-scatterv only under rsv or rs+rsv.
  void Policy(const Step& s) {
    const bool completes = s.operand == Operand::kValue && s.owed_before != Owed::kNothing;
    if (s.kind == StepKind::kReduceScatterV && !cfg_.allows_reduce_scatterv()) {
      Report(Invariant::kPolicy,
             fmt::format("rsv under --reduction {}, which does not allow the reduce-scatterv", Name(cfg_.reduction)));
    }
    if (s.kind == StepKind::kReduceScatter && completes && from_ffn_ && !cfg_.allows_reduce_scatter()) {
      Report(Invariant::kPolicy, fmt::format("rs completes an FFN's sum under --reduction {}, which allows no "
                                             "fixed-size reduce-scatter for it",
                                             Name(cfg_.reduction)));
    }
  }

  // Compares the replayed state with a boundary the binder recorded.
  void Compare(const State& st, const Boundary& recorded, std::string_view what) {
    if (st.residual != recorded.residual) {
      Report(Invariant::kResidualRowsAgree, fmt::format("the residual is on {} but {} it on {}", RowsText(st.residual),
                                                        what, RowsText(recorded.residual)));
    }
    const bool same_rows =
        st.value.has_value() == recorded.value.has_value() && (!st.value || st.value->rows == recorded.value->rows);
    if (!same_rows) {
      Report(Invariant::kStageRows, fmt::format("the {} but {} a {}", Facts(st.value), what, Facts(recorded.value)));
    } else if (st.value && st.value->owed != recorded.value->owed) {
      Report(Invariant::kSumOnce, fmt::format("the value owes {} but {} one owing {}", Name(st.value->owed), what,
                                              Name(recorded.value->owed)));
    }
  }

  void Where(int stage, Side side, int step) {
    stage_ = stage;
    side_ = side;
    step_ = step;
  }

  void Report(Invariant inv, std::string message) {
    out_.push_back({plan_.header().pp_rank, line_.variant, stage_, side_, step_, inv, std::move(message)});
  }

  const Plan& plan_;
  const ParallelConfig& cfg_;
  const LinePlan& line_;
  std::vector<Violation>& out_;
  int stage_ = -1;
  bool from_ffn_ = false;  // the value in flight is an FFN's output
  Side side_;
  int step_ = -1;
};

}  // namespace

std::vector<Violation> Verify(const Plan& plan) {
  std::vector<Violation> out;
  if (!verify::CheckStructure(plan, out)) return out;  // no configuration to replay against
  for (const LinePlan& line : plan.lines()) {
    Walker(plan, line, out).Run();
    verify::CheckBytes(plan, line, out);
  }
  return out;
}

Side SideOf(EndKind k) { return k == EndKind::kFinalNorm ? Side::kFinal : Side::kSend; }

Side SideOf(LinePart part, EndKind end) {
  switch (part) {
    case LinePart::kStart: return Side::kStart;
    case LinePart::kEntry: return Side::kEntry;
    case LinePart::kCompute: return Side::kCompute;
    case LinePart::kExit: return Side::kExit;
    case LinePart::kEnd: return SideOf(end);
    case LinePart::kHead: break;
  }
  return Side::kHead;
}

std::string_view Name(Side s) {
  switch (s) {
    case Side::kHeader: return "header";
    case Side::kStart: return "start";
    case Side::kArrival: return "arrival";
    case Side::kEntry: return "entry";
    case Side::kCompute: return "compute";
    case Side::kExit: return "exit";
    case Side::kFinal: return "final";
    case Side::kHead: return "lm-head";
    case Side::kSend: return "send";
    case Side::kBinding: return "binding";
    case Side::kSeam: return "seam";
  }
  return "?";
}

std::string Describe(const Violation& v) {
  const std::string where = v.stage < 0 ? "" : fmt::format("stage {} ", v.stage);
  const std::string step = v.step < 0 ? std::string(Name(v.side)) : fmt::format("{}[{}]", Name(v.side), v.step);
  return fmt::format("rank {} {} {}{}: invariant {} ({}): {}", v.pp_rank, Name(v.variant), where, step,
                     static_cast<int>(v.invariant), InvariantText(v.invariant), v.message);
}

std::string Describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const Violation& v : violations) out += Describe(v) + "\n";
  return out;
}

}  // namespace seam

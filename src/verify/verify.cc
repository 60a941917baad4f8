// The plan walker: replays each line from the stack entry and compares the
// replayed state with the boundaries the binder recorded.
#include "seam/verify.h"

#include <fmt/format.h>

#include "verify/symbolic.h"

namespace seam {
namespace {

using verify::State;

std::string_view InvariantText(Invariant i) {
  switch (i) {
    case Invariant::kResidualRowsAgree: return "both sides of a boundary agree on the residual's rows";
    case Invariant::kSumOnce: return "every owed sum completes once, over its group, before any read";
    case Invariant::kHandoff: return "a handoff carries the attention rows with every sum complete";
    case Invariant::kAwayFromCut: return "stages away from a cut bind as they do uncut";
    case Invariant::kCutRejects: return "a cut rejects only what the uncut stack rejects";
    case Invariant::kStageRows: return "each stage receives the rows it declared";
    case Invariant::kGroupFitsRows: return "collectives name the right group for their rows";
  }
  return "?";
}

std::string Facts(const std::optional<ValueFacts>& v) {
  if (!v) return "no value (written)";
  return fmt::format("value on {} owing {}", Name(v->rows), Name(v->owed));
}

class Walker {
 public:
  Walker(const Plan& plan, const LinePlan& line, std::vector<Violation>& out)
      : cfg_(plan.config()), line_(line), out_(out) {}

  void Run() {
    State st{StackArrival()};
    for (const StagePlan& s : line_.stages) RunStage(s, st);
    Where(-1, "final", -1);
    Compare(st, line_.final.arrives, "the final norm was bound for");
    st = {line_.final.arrives.value, line_.final.arrives.residual, std::nullopt};
    RunSteps(nullptr, line_.final.steps, "final", st);
    Where(-1, "final", -1);
    if (st.value) Report(Invariant::kSumOnce, fmt::format("the stack ends with a {} never added", Facts(st.value)));
    if (st.residual != Rows::Attention(cfg_)) {
      Report(Invariant::kResidualRowsAgree, "the final norm does not read the residual on the attention rows");
    }
    if (st.input != Rows::Attention(cfg_)) Report(Invariant::kStageRows, "the final norm does not read the attention rows");
  }

 private:
  std::optional<ValueFacts> StackArrival() const {
    if (line_.variant == Variant::kInputScattered) return ValueFacts{Rows::Full(), Owe(cfg_, Owed::kTp)};
    return ValueFacts{Rows::Attention(cfg_), Owed::kNothing};
  }

  void RunStage(const StagePlan& s, State& st) {
    Where(s.index, "arrival", -1);
    Compare(st, s.arrives, "the stage was bound for");
    st = {s.arrives.value, s.arrives.residual, std::nullopt};
    if (s.decl.kind == StageKind::kNoOp) {
      if (!s.entry.empty() || !s.compute.empty() || !s.exit.empty() || s.input || s.residual) {
        Report(Invariant::kStageRows, "a no-op stage runs steps or records rows");
      }
    } else {
      RunEntry(s, st);
    }
    RunSteps(&s.decl, s.compute, "compute", st);
    RunSteps(&s.decl, s.exit, "exit", st);
    Where(s.index, "exit", -1);
    Compare(st, s.departs, "the exit records");
    st = {s.departs.value, s.departs.residual, std::nullopt};
  }

  void RunEntry(const StagePlan& s, State& st) {
    RunSteps(&s.decl, s.entry, "entry", st);
    Where(s.index, "entry", -1);
    if (st.residual != s.residual) {
      Report(Invariant::kResidualRowsAgree, fmt::format("the entry leaves the residual on {} but the stage runs with it on {}",
                                                        RowsText(st.residual), RowsText(s.residual)));
    }
    if (st.input != s.input) {
      Report(Invariant::kStageRows, fmt::format("the entry hands compute {} rows but the stage records {}",
                                                RowsText(st.input), RowsText(s.input)));
    }
  }

  void RunSteps(const StageDecl* decl, const std::vector<Step>& steps, std::string_view side, State& st) {
    for (size_t i = 0; i < steps.size(); ++i) {
      Where(stage_, side, static_cast<int>(i));
      verify::Apply(cfg_, decl, steps[i], st, [this](Invariant inv, std::string m) { Report(inv, std::move(m)); });
    }
  }

  // Compares the replayed state with a boundary the binder recorded.
  void Compare(const State& st, const Boundary& recorded, std::string_view what) {
    if (st.residual != recorded.residual) {
      Report(Invariant::kResidualRowsAgree, fmt::format("the residual is on {} but {} it on {}",
                                                        RowsText(st.residual), what, RowsText(recorded.residual)));
    }
    const bool same_rows = st.value.has_value() == recorded.value.has_value() &&
                           (!st.value || st.value->rows == recorded.value->rows);
    if (!same_rows) {
      Report(Invariant::kStageRows, fmt::format("the {} but {} a {}", Facts(st.value), what, Facts(recorded.value)));
    } else if (st.value && st.value->owed != recorded.value->owed) {
      Report(Invariant::kSumOnce, fmt::format("the value owes {} but {} one owing {}", Name(st.value->owed), what,
                                              Name(recorded.value->owed)));
    }
  }

  static std::string RowsText(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "none"; }

  void Where(int stage, std::string_view side, int step) {
    stage_ = stage;
    side_ = side;
    step_ = step;
  }

  void Report(Invariant inv, std::string message) {
    out_.push_back({line_.variant, stage_, std::string(side_), step_, inv, std::move(message)});
  }

  const ParallelConfig& cfg_;
  const LinePlan& line_;
  std::vector<Violation>& out_;
  int stage_ = -1;
  std::string_view side_;
  int step_ = -1;
};

}  // namespace

std::vector<Violation> Verify(const Plan& plan) {
  std::vector<Violation> out;
  for (const LinePlan& line : plan.lines()) Walker(plan, line, out).Run();
  return out;
}

std::string Describe(const Violation& v) {
  const std::string where = v.stage < 0 ? "final norm" : fmt::format("stage {}", v.stage);
  const std::string step = v.step < 0 ? v.side : fmt::format("{}[{}]", v.side, v.step);
  return fmt::format("{} {} {}: invariant {} ({}): {}", Name(v.variant), where, step, static_cast<int>(v.invariant),
                     InvariantText(v.invariant), v.message);
}

std::string Describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const Violation& v : violations) out += Describe(v) + "\n";
  return out;
}

}  // namespace seam

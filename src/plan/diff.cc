// Structural diff of two plans: the first place each part differs.
#include <fmt/format.h>

#include "seam/plan_io.h"

namespace seam {
namespace {

class Differ {
 public:
  explicit Differ(std::vector<std::string>& out) : out_(out) {}

  template <class T>
  void Field(const std::string& where, const T& a, const T& b) {
    if (!(a == b)) out_.push_back(fmt::format("{}: {} != {}", where, a, b));
  }

  void Header(const PlanHeader& a, const PlanHeader& b) {
    Field("model", a.model, b.model);
    Field("hidden", a.hidden, b.hidden);
    Field("residual_streams", a.residual_streams, b.residual_streams);
    Field("act_dtype", std::string(Name(a.wire.act)), std::string(Name(b.wire.act)));
    Field("dispatch_dtype", std::string(Name(a.wire.dispatch)), std::string(Name(b.wire.dispatch)));
    Field("config", Describe(a.config), Describe(b.config));
    Field("pp_rank", a.pp_rank, b.pp_rank);
    Field("layers", fmt::format("{}..{}", a.first_layer, a.last_layer), fmt::format("{}..{}", b.first_layer, b.last_layer));
  }

  void Steps(const std::string& where, const std::vector<Step>& a, const std::vector<Step>& b) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      if (i < a.size() && i < b.size() && a[i] == b[i]) continue;
      out_.push_back(fmt::format("{}[{}]: {} != {}", where, i, StepText(a, i), StepText(b, i)));
    }
  }

  void Stage(const std::string& where, const StagePlan& a, const StagePlan& b) {
    Field(where + " index", a.index, b.index);
    Field(where + " layer", a.layer, b.layer);
    if (!(a.decl == b.decl)) out_.push_back(fmt::format("{} declaration differs ({} vs {})", where, Name(a.decl.kind), Name(b.decl.kind)));
    Field(where + " arrives", ShortString(a.arrives), ShortString(b.arrives));
    Field(where + " input", RowsText(a.input), RowsText(b.input));
    Field(where + " residual", RowsText(a.residual), RowsText(b.residual));
    Steps(where + " entry", a.entry, b.entry);
    Steps(where + " compute", a.compute, b.compute);
    Steps(where + " exit", a.exit, b.exit);
    Field(where + " departs", ShortString(a.departs), ShortString(b.departs));
  }

  void Line(const LinePlan& a, const LinePlan& b) {
    const std::string v(Name(a.variant));
    Steps(v + " receive", a.receive, b.receive);
    const size_t n = std::max(a.stages.size(), b.stages.size());
    for (size_t i = 0; i < n; ++i) {
      if (i >= a.stages.size() || i >= b.stages.size()) {
        out_.push_back(fmt::format("{}: only one plan has stage position {}", v, i));
        continue;
      }
      Stage(fmt::format("{} stage {}", v, a.stages[i].index), a.stages[i], b.stages[i]);
    }
    Field(v + " end", std::string(Name(a.end.kind)), std::string(Name(b.end.kind)));
    Field(fmt::format("{} {} arrives", v, Name(a.end.kind)), ShortString(a.end.arrives), ShortString(b.end.arrives));
    Steps(fmt::format("{} {}", v, Name(a.end.kind)), a.end.steps, b.end.steps);
  }

 private:
  // Every field of the step, so two different steps never print alike.
  static std::string StepText(const std::vector<Step>& steps, size_t i) {
    if (i >= steps.size()) return "(none)";
    const Step& s = steps[i];
    const std::string group = s.group ? fmt::format("({})", Name(*s.group)) : "";
    return fmt::format("{}{} {} {} -> {}, owes {} -> {}, width {}", Name(s.kind), group, Name(s.operand),
                       Name(s.rows_in), Name(s.rows_out), Name(s.owed_before), Name(s.owed_after), s.width);
  }
  static std::string RowsText(const std::optional<Rows>& r) { return r ? std::string(Name(*r)) : "-"; }
  std::vector<std::string>& out_;
};

}  // namespace

std::vector<std::string> Diff(const Pipeline& a, const Pipeline& b) {
  std::vector<std::string> out;
  if (a.size() != b.size()) out.push_back(fmt::format("pipeline ranks: {} != {}", a.size(), b.size()));
  for (size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    for (const std::string& d : Diff(a[r], b[r])) out.push_back(a.size() > 1 ? fmt::format("rank {}: {}", r, d) : d);
  }
  return out;
}

std::vector<std::string> Diff(const Plan& a, const Plan& b) {
  std::vector<std::string> out;
  Differ d(out);
  d.Header(a.header(), b.header());
  for (const LinePlan& la : a.lines()) {
    const LinePlan* lb = b.line(la.variant);
    if (lb == nullptr) {
      out.push_back(fmt::format("only the first plan has {} batches", Name(la.variant)));
    } else {
      d.Line(la, *lb);
    }
  }
  for (const LinePlan& lb : b.lines()) {
    if (a.line(lb.variant) == nullptr) out.push_back(fmt::format("only the second plan has {} batches", Name(lb.variant)));
  }
  return out;
}

}  // namespace seam

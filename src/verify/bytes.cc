// Invariant 10: a plan moves the fewest bytes its stages and configuration
// need, counted apart from the binder.
//
// The count follows the structure every plan shares (docs/binding.md §1-§4, kept
// in docs/binding.md): where each stage adds its input into the residual,
// where the residual lives while a stage runs, what each stage computes on
// and which collectives its compute runs, and what a handoff carries. What
// is left to choose is how each owed sum completes and how rows move to where
// they are read; the count takes the cheapest way the boundary-reduction
// policy allows. Bytes are counted per seam: everything between one stage's
// compute and the next one's, so the count does not depend on whether a sum
// completes at a stage's exit or at the next entry.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "seam/plan_walk.h"
#include "seam/stage_shape.h"
#include "verify/checks.h"
#include "verify/symbolic.h"

namespace seam::verify {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Value {
  Rows rows;
  Owed owed = Owed::kNothing;
  bool from_ffn = false;  // an FFN's sum obeys the boundary-reduction policy
};

// Where a stage reads and keeps the residual, from its declaration alone.
struct Shape {
  Rows input;        // rows its entry hands to compute
  Rows need;         // rows its compute reads (after a gather of its own)
  Rows residual_to;  // the residual's rows while it runs
};

class Count {
 public:
  Count(const Plan& plan, const LinePlan& line)
      : cfg_(plan.config()),
        variant_(line.variant),
        hidden_(plan.header().hidden),
        wire_(plan.header().wire),
        first_rank_(plan.header().pp_rank == 0),
        value_bytes_(RowBytes(wire_.act, hidden_)),
        residual_bytes_(value_bytes_ * plan.header().residual_streams),
        line_(line) {}

  // Bytes per seam: seam k ends at the compute of the k-th computing stage;
  // the last seam runs to the rank's end.
  std::vector<double> Run() {
    seams_.reserve(line_.stages.size() + 1);
    Start();
    for (size_t i = 0; i < line_.stages.size(); ++i) {
      const StageDecl& d = line_.stages[i].decl;
      if (d.kind == StageKind::kNoOp) continue;
      Stage(d, i);
    }
    End();
    return seams_;
  }

 private:
  Rows attn() const { return Rows::Attention(cfg_); }
  Rows slice() const { return Rows::Slice(cfg_); }
  double Fraction(Rows r) const { return RowFraction(cfg_, r); }
  static double Share(int n) { return static_cast<double>(n - 1) / n; }

  double AllReduce(Group g, Rows rows) const { return 2 * Share(GroupSize(cfg_, g)) * value_bytes_ * Fraction(rows); }
  double Scatter(Group g, Rows rows) const { return Share(GroupSize(cfg_, g)) * value_bytes_ * Fraction(rows); }
  // Moving complete rows: a local slice is free, a gather costs its share of
  // the gathered rows, anything else cannot be done.
  double Move(Rows from, Rows to, double bytes) const {
    if (from.Covers(to)) return 0;
    if (!to.Covers(from)) return kNever;
    return Share(GroupSize(cfg_, GatherGroup(from, to))) * bytes * Fraction(to);
  }

  // The cheapest completion of an owed sum onto `dest`: all-reduce in place,
  // reduce-scatter onto the group's slice, or (attn_tp = 1) the variable
  // reduce-scatter that returns the full rows to the DP groups; then move.
  double Complete(const Value& v, Rows dest) const {
    if (v.owed == Owed::kNothing) return Move(v.rows, dest, value_bytes_);
    const Group g = GroupOf(v.owed);
    double best = AllReduce(g, v.rows) + Move(v.rows, dest, value_bytes_);
    const bool rs = !v.from_ffn || cfg_.allows_reduce_scatter();
    if (rs) best = std::min(best, Scatter(g, v.rows) + Move(v.rows.With(AxesOf(cfg_, g)), dest, value_bytes_));
    const bool rsv = v.from_ffn && cfg_.allows_reduce_scatterv() && cfg_.attn_tp() == 1 && v.owed == Owed::kTp &&
                     v.rows == Rows::Full();
    if (rsv) best = std::min(best, Scatter(g, v.rows) + Move(attn(), dest, value_bytes_));
    return best;
  }

  // An FFN that runs on this rank's own slice of rows and hands it on
  // complete: a2a MoE, a fully data-parallel dense FFN.
  bool OnOwnRows(const StageDecl& d) const {
    if (d.kind == StageKind::kSparseFfn) return cfg_.moe == MoeMode::kA2a;
    return d.kind == StageKind::kDenseFfn && DenseWidthOf(cfg_) == DenseWidth::kRank;
  }

  Shape ShapeOf(const StageDecl& d) const {
    const Rows need = NeedOf(d, cfg_);
    const bool attention_like = IsAttentionLike(d) || d.kind == StageKind::kLinear;
    if (attention_like && variant_ == Variant::kInputScattered) return {slice(), need, slice()};
    if (attention_like) {
      const Rows r = d.read == ReadKind::kAllRows || !residual_ ? attn() : *residual_;
      return {need, need, r};
    }
    return {need, need, OnOwnRows(d) ? slice() : attn()};
  }

  // A stack's first rank starts from the embedding (a TP partial sum on the
  // full rows where its table is split, complete on the attention rows
  // under attention DP); a later rank gathers the slices it receives.
  void Start() {
    if (first_rank_) {
      const StageShape e = EmbeddingShape(cfg_);
      value_ = Value{e.rows, Owe(cfg_, e.sum)};
      return;
    }
    bool value = false;
    for (const Step& s : line_.start) value = value || (s.kind == StepKind::kRecv && s.operand == Operand::kValue);
    if (value) {
      value_ = Value{attn(), Owed::kNothing};
      bytes_ += Move(slice(), attn(), value_bytes_);
    }
    residual_ = attn();
    bytes_ += Move(slice(), attn(), residual_bytes_);
  }

  // The entry of a stage with shape `s`: complete and bring the value onto
  // the rows the stage adds on, add, keep the residual where the stage keeps
  // it, and move the normed input to where the stage reads it.
  void Entry(const Shape& s) {
    const bool on_slice = residual_ == slice() || s.residual_to == slice() || s.input == slice();
    const Rows add = on_slice ? slice() : attn();
    if (value_) bytes_ += Complete(*value_, add);
    value_.reset();
    if (!residual_) residual_ = add;
    bytes_ += Move(*residual_, add, residual_bytes_) + Move(add, s.residual_to, residual_bytes_);
    residual_ = s.residual_to;
    bytes_ += Move(s.residual_to, s.input, value_bytes_);
  }

  static int WidthOf(const StagePlan& s, StepKind kind) {
    for (const Step& step : s.compute) {
      if (step.kind == kind) return step.width;
    }
    return 0;  // none: the structure check reports the missing exchange
  }

  void Stage(const StageDecl& d, size_t at) {
    const Shape s = ShapeOf(d);
    Entry(s);
    if (s.need != s.input) {  // the attention gathers its projected input itself
      const double width = RowBytes(wire_.act, d.gather_width > 0 ? d.gather_width : hidden_);
      bytes_ += Share(GroupSize(cfg_, GatherGroup(s.input, s.need))) * width * Fraction(s.need);
    }
    if (d.kind == StageKind::kAttention && cfg_.cp > 1) {
      // The other CP ranks' keys and values, as wide as the plan's gather
      // says (the plan names the heads' widths, not the verifier).
      bytes_ +=
          (cfg_.cp - 1) * Fraction(s.need) * RowBytes(wire_.act, WidthOf(line_.stages[at], StepKind::kGatherKeys));
    }
    if (d.kind == StageKind::kAttention && cfg_.dcp > 1) {
      // Each DCP peer's query heads, then from each its partials of this
      // rank's heads (widths again as the plan states them).
      for (StepKind k : {StepKind::kGatherQueries, StepKind::kExchangePartials}) {
        bytes_ += (cfg_.dcp - 1) * Fraction(s.need) * RowBytes(wire_.act, WidthOf(line_.stages[at], k));
      }
    }
    const bool a2a = d.kind == StageKind::kSparseFfn && cfg_.moe == MoeMode::kA2a;
    // The dispatch may go in fp8 with its scales; the combine returns in the
    // activation dtype.
    const double share = Share(cfg_.ep_size()) * Fraction(slice()) * d.top_k;
    if (a2a) bytes_ += share * RowBytes(wire_.dispatch, hidden_);
    EndSeam();
    if (a2a) bytes_ += share * value_bytes_;
    value_ = Value{s.need, OwesOf(d, cfg_), IsFfn(d)};
    if (d.kind == StageKind::kAttention && d.attention_sum == AttentionSum::kReducesItself &&
        value_->owed != Owed::kNothing) {
      bytes_ += AllReduce(GroupOf(value_->owed), value_->rows);
      value_->owed = Owed::kNothing;
    }
    Exit(d, at);
  }

  // What a stage writes at its own exit: a non-additive update once its sum
  // is complete; an FFN on its own rows before a handoff, before the stack
  // end, before trailing always-partial attentions or a read of every row
  // (then it gathers the residual back to the attention rows).
  void Exit(const StageDecl& d, size_t at) {
    if (d.update == UpdateKind::kHyperConnection) {
      bytes_ += Complete(*value_, *residual_);
      value_.reset();
    }
    if (!OnOwnRows(d)) return;
    const StageDecl* next = nullptr;
    bool only_partial_attentions = true;
    for (size_t j = at + 1; j < line_.stages.size(); ++j) {
      const StageDecl& n = line_.stages[j].decl;
      if (n.kind == StageKind::kNoOp) continue;
      if (next == nullptr) next = &n;
      only_partial_attentions = only_partial_attentions && IsAlwaysPartialAttention(n);
    }
    const bool stack_end = next == nullptr && line_.end.kind == EndKind::kFinalNorm;
    const bool returns = stack_end || (next != nullptr && only_partial_attentions) ||
                         (next != nullptr && next->read == ReadKind::kAllRows);
    if (returns || next == nullptr) value_.reset();
    if (returns) {
      bytes_ += Move(*residual_, attn(), residual_bytes_);
      residual_ = attn();
    }
  }

  // to_pp completes everything onto the slice and sends it; the last rank's
  // final norm reads the attention rows.
  void End() {
    if (line_.end.kind == EndKind::kSend) {
      if (value_) bytes_ += Complete(*value_, slice()) + value_bytes_ * Fraction(slice());
      bytes_ += residual_bytes_ * Fraction(slice());
    } else {
      Entry({attn(), attn(), attn()});
      Head();
    }
    EndSeam();
  }

  // The LM head (seam/stage_shape.h): gather the DP groups' rows where it
  // runs on every row, then gather the vocabulary's columns over its group;
  // its width is the vocabulary the plan's head computes.
  void Head() {
    int vocab = 0;
    for (const Step& s : line_.end.head) {
      if (s.kind == StepKind::kLmHead) vocab = s.width;
    }
    if (vocab == 0) return;  // a stack without a vocabulary
    const StageShape head = LmHeadShape(cfg_);
    bytes_ += Move(attn(), head.rows, value_bytes_);
    bytes_ += Share(GroupSize(cfg_, *head.shard)) * RowBytes(wire_.act, vocab) * Fraction(head.rows);
  }

  void EndSeam() {
    seams_.push_back(bytes_);
    bytes_ = 0;
  }

  const ParallelConfig& cfg_;
  Variant variant_;
  int hidden_;
  WireDtypes wire_;
  bool first_rank_ = false;
  double value_bytes_;
  double residual_bytes_;
  const LinePlan& line_;
  std::optional<Value> value_;
  std::optional<Rows> residual_;
  double bytes_ = 0;
  std::vector<double> seams_;
};

// Where a step lies, to name it.
struct Located {
  int stage;
  Side side;
  int step;
  const Step* s;
};

// Calls f(seam, located) for each step of the line in order: seam k ends at
// the k-th compute step. Returns the number of seams.
template <typename F>
size_t ForEachSeamStep(const LinePlan& line, EndKind end, F&& f) {
  size_t seam = 0;
  WalkSteps(line, [&](const StepPlace& at, const Step& s) {
    const int stage = at.line.in_stage() ? at.line.stage->index : -1;
    f(seam, Located{stage, SideOf(at.line.part, end), at.step, &s});
    if (s.kind == StepKind::kCompute) ++seam;
  });
  return seam + 1;
}

// The violation of seam k, naming each step of it that moves bytes: only for
// a seam that fails, as formatting every step of every plan would cost more
// than the count.
Violation SeamViolation(const Plan& plan, const LinePlan& line, size_t k, double got, double want) {
  const PlanHeader& h = plan.header();
  std::optional<Located> where;
  std::vector<std::string> moved;
  ForEachSeamStep(line, line.end.kind, [&](size_t seam, const Located& l) {
    if (seam != k) return;
    const double b = BytesPerToken(*l.s, h);
    if (!where || (b > 0 && moved.empty())) where = l;
    if (b > 0) moved.push_back(fmt::format("{} {}", ShortString(*l.s), b));
  });
  if (!where) where = Located{-1, Side::kSeam, -1, nullptr};
  return {h.pp_rank,
          line.variant,
          where->stage,
          where->side,
          where->step,
          Invariant::kFewestBytes,
          fmt::format("the seam from here to the next compute moves {} bytes per token ({}) but its stages need {}{}",
                      got, moved.empty() ? "nothing" : fmt::format("{}", fmt::join(moved, ", ")), want,
                      got < want ? " (fewer than the count: the count or the plan is wrong)" : "")};
}

}  // namespace

void CheckBytes(const Plan& plan, const LinePlan& line, std::vector<Violation>& out) {
  Count count(plan, line);
  const std::vector<double> want = count.Run();
  std::vector<double> got(want.size(), 0.0);
  const size_t seams = ForEachSeamStep(line, line.end.kind, [&](size_t k, const Located& l) {
    if (k < got.size()) got[k] += BytesPerToken(*l.s, plan.header());
  });
  if (seams != want.size()) return;  // a missing compute step: invariant 8 reports it
  for (size_t k = 0; k < seams; ++k) {
    if (std::abs(got[k] - want[k]) <= 1e-6 * std::max(1.0, want[k])) continue;
    out.push_back(SeamViolation(plan, line, k, got[k], want[k]));
  }
}

}  // namespace seam::verify

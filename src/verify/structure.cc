// Invariant 8: a plan agrees with itself, its model and its configuration.
//
// The symbolic replay checks that steps follow from one another; these
// checks make sure there is a whole plan to replay: no stage dropped or
// duplicated, no layer outside the header, no compute step missing, no step
// whose own operand, rows or sums contradict its kind, no width that is not
// the model's. Each is stated here from the step vocabulary and the stage
// kinds, apart from the binder.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>

#include "seam/plan_walk.h"
#include "seam/step_rules.h"
#include "verify/checks.h"

namespace seam::verify {
namespace {

class Checker {
 public:
  Checker(const Plan& plan, std::vector<Violation>& out) : plan_(plan), cfg_(plan.config()), out_(out) {}

  bool Run() {
    if (!Header()) return false;  // nothing else can be judged against a broken header
    Lines();
    for (const LinePlan& line : plan_.lines()) Line(line);
    return true;
  }

 private:
  const PlanHeader& h() const { return plan_.header(); }
  int value_width() const { return h().hidden; }
  int residual_width() const { return h().hidden * h().residual_streams; }

  bool Header() {
    bool ok = true;
    auto bad = [&](std::string m) {
      Report(Variant::kOrdinary, -1, Side::kHeader, -1, std::move(m));
      ok = false;
    };
    if (Status s = Validate(cfg_); !s.ok()) bad("the configuration is invalid: " + s.error().message);
    if (cfg_.dense_tp == 0) bad("the configuration leaves dense_tp unresolved; a plan states its widths");
    if (cfg_.ep == 0) bad("the configuration leaves ep unresolved; a plan states its widths");
    if (h().hidden < 1) bad(fmt::format("hidden size {} is not positive", h().hidden));
    if (h().residual_streams < 1) bad(fmt::format("{} residual streams", h().residual_streams));
    if (h().vocab < 0) bad(fmt::format("a vocabulary of {}", h().vocab));
    if (Status s = Validate(h().wire); !s.ok()) bad("the wire dtypes are invalid: " + s.error().message);
    if (h().first_layer < 0 || h().first_layer >= h().last_layer) {
      bad(fmt::format("the layer range {}..{} is empty or negative", h().first_layer, h().last_layer));
    }
    if (ok && (h().pp_rank < 0 || h().pp_rank >= cfg_.pp)) {
      bad(fmt::format("pipeline rank {} is outside pp={}", h().pp_rank, cfg_.pp));
    }
    return ok;
  }

  // The ordinary line, then the input-scattered one exactly when asked for.
  void Lines() {
    static constexpr Variant kBoth[] = {Variant::kOrdinary, Variant::kInputScattered};
    const std::span<const Variant> want = std::span(kBoth).first(cfg_.input_scattered ? 2 : 1);
    if (std::ranges::equal(plan_.lines(), want, {}, &LinePlan::variant)) return;
    std::vector<Variant> got;
    for (const LinePlan& l : plan_.lines()) got.push_back(l.variant);
    auto names = [](std::span<const Variant> v) {
      std::vector<std::string_view> n;
      for (Variant x : v) n.push_back(Name(x));
      return n.empty() ? std::string("none") : fmt::format("{}", fmt::join(n, ", "));
    };
    Report(Variant::kOrdinary, -1, Side::kHeader, -1,
           fmt::format("the configuration asks for {} batches but the plan has lines for {}", names(want), names(got)));
  }

  void Line(const LinePlan& line) {
    v_ = line.variant;
    Stages(line);
    if (v_ == Variant::kInputScattered) Eligible(line);
    WalkLine(line, [&](const LinePlace& at, const std::vector<Step>& steps) {
      if (at.part == LinePart::kCompute) return Compute(*at.stage);
      if (at.part == LinePart::kHead) return Head(steps, line.end.kind);
      const Side side = SideOf(at.part, line.end.kind);
      for (size_t i = 0; i < steps.size(); ++i) Shape(at.in_stage() ? at.stage->index : -1, side, i, steps[i]);
    });
  }

  // The LM head: its input gather is as wide as the value; its logits as
  // wide as the vocabulary its compute names, one width throughout.
  void Head(const std::vector<Step>& head, EndKind end) {
    const int vocab = h().vocab;
    const bool wants = end == EndKind::kFinalNorm && vocab > 0;
    if (wants == head.empty()) {
      Report(v_, -1, Side::kHead, -1,
             wants ? fmt::format("the last rank of a model with a vocabulary of {} has no LM head", vocab)
                   : "an LM head where the plan names no vocabulary or the rank sends");
    }
    for (size_t i = 0; i < head.size(); ++i) {
      const Step& s = head[i];
      const bool logits = s.kind == StepKind::kLmHead || s.operand == Operand::kLogits;
      const int want = logits ? vocab : value_width();
      if (s.width != want || want < 1) {
        Report(v_, -1, Side::kHead, static_cast<int>(i),
               fmt::format("{} {} is {} wide but the head makes it {}", Name(s.kind), Name(s.operand), s.width, want));
      }
      const bool belongs = s.kind == StepKind::kLmHead || s.kind == StepKind::kGatherVocab ||
                           (s.kind == StepKind::kAllGather && s.operand == Operand::kInput) ||
                           (s.kind == StepKind::kSlice && s.operand == Operand::kLogits);
      if (!belongs) {
        Report(v_, -1, Side::kHead, static_cast<int>(i),
               fmt::format("{} {} has no place in an LM head", Name(s.kind), Name(s.operand)));
      }
      Transitions(-1, Side::kHead, i, s);
    }
  }

  // Stage indices run on by one; layers run from the header's first to its
  // last without a gap; every line holds the same stages.
  void Stages(const LinePlan& line) {
    if (line.stages.empty()) return Report(v_, -1, Side::kHeader, -1, "the line has no stages");
    const StagePlan& first = line.stages.front();
    if (h().pp_rank == 0 && first.index != 0) {
      Report(v_, first.index, Side::kHeader, -1,
             fmt::format("the first pipeline rank starts at stage {}, not 0", first.index));
    }
    if (first.layer != h().first_layer) {
      Report(v_, first.index, Side::kHeader, -1,
             fmt::format("the first stage is in layer {} but the header starts at layer {}", first.layer,
                         h().first_layer));
    }
    for (size_t i = 1; i < line.stages.size(); ++i) {
      const StagePlan& a = line.stages[i - 1];
      const StagePlan& b = line.stages[i];
      if (b.index != a.index + 1) {
        Report(v_, b.index, Side::kHeader, -1,
               fmt::format("stage {} follows stage {}: stage indices run on by one", b.index, a.index));
      }
      if (b.layer != a.layer && b.layer != a.layer + 1) {
        Report(v_, b.index, Side::kHeader, -1,
               fmt::format("stage {} is in layer {} after a stage in layer {}: layers run on without a gap", b.index,
                           b.layer, a.layer));
      }
    }
    const StagePlan& last = line.stages.back();
    if (last.layer != h().last_layer - 1) {
      Report(v_, last.index, Side::kHeader, -1,
             fmt::format("the last stage is in layer {} but the header ends with layer {}", last.layer,
                         h().last_layer - 1));
    }
    SameStagesAsFirstLine(line);
  }

  void SameStagesAsFirstLine(const LinePlan& line) {
    const LinePlan& first = plan_.lines().front();
    if (&line == &first) return;
    bool same = first.stages.size() == line.stages.size();
    for (size_t i = 0; same && i < line.stages.size(); ++i) {
      const StagePlan& a = first.stages[i];
      const StagePlan& b = line.stages[i];
      same = a.index == b.index && a.layer == b.layer && a.decl == b.decl;
    }
    if (!same)
      Report(v_, -1, Side::kHeader, -1,
             fmt::format("the {} line holds other stages than the {} line", Name(v_), Name(first.variant)));
  }

  // Input-scattered batches: every layer's input is a TP partial sum on the
  // full rows and each attention gathers its own slice. Only a stack whose
  // every stage can take that is eligible (SGLang's rule): TP > 1 without
  // attention DP, attentions that gather their input, no mixer, no linear
  // stage, no stage that hands its slice on complete.
  void Eligible(const LinePlan& line) {
    if (cfg_.tp < 2 || cfg_.attn_dp != 1 || cfg_.cp != 1) {
      Report(v_, -1, Side::kHeader, -1, "input-scattered batches need tp > 1, attn_dp = 1 and cp = 1");
    }
    for (const StagePlan& s : line.stages) {
      const StageDecl& d = s.decl;
      const bool eligible = d.kind == StageKind::kNoOp || (d.kind == StageKind::kAttention && d.gathers_input) ||
                            (d.kind == StageKind::kDenseFfn && DenseWidthOf(cfg_) != DenseWidth::kRank) ||
                            (d.kind == StageKind::kSparseFfn && cfg_.moe == MoeMode::kTp);
      if (!eligible || d.read == ReadKind::kAllRows) {
        Report(v_, s.index, Side::kHeader, -1,
               fmt::format("a {} of this declaration cannot run on input-scattered batches under {}", Name(d.kind),
                           Describe(cfg_)));
      }
    }
  }

  // What a stage's compute runs is fixed by its declaration and the
  // configuration: its own gather, dispatch and combine, its own all-reduce.
  struct Expect {
    StepKind kind;
    Operand operand;
    std::optional<Group> group;
    int width;
  };

  // A width the plan states and the verifier cannot restate: the keys and
  // values of the heads a rank holds (the header names no head widths). It
  // must be positive.
  static constexpr int kHeadsWide = -1;

  // At most a gather or a dispatch, the compute, a combine or an
  // all-reduce: held in place, as every stage of every plan is checked.
  struct Expects {
    std::array<Expect, 6> at;
    size_t size = 0;
    void push_back(const Expect& e) { at[size++] = e; }
    const Expect& operator[](size_t i) const { return at[i]; }
    std::span<const Expect> all() const { return std::span(at).first(size); }
  };

  Expects ComputeOf(const StageDecl& d) const {
    Expects out;
    if (d.kind == StageKind::kNoOp) return out;
    const Expect compute{StepKind::kCompute, Operand::kInput, std::nullopt, value_width()};
    const bool scattered = v_ == Variant::kInputScattered;
    if (d.kind == StageKind::kAttention && scattered && Rows::Slice(cfg_) != Rows::Attention(cfg_)) {
      out.push_back({StepKind::kAllGather, Operand::kInput, GatherGroup(Rows::Slice(cfg_), Rows::Attention(cfg_)),
                     d.gather_width > 0 ? d.gather_width : value_width()});
    }
    if (d.kind == StageKind::kAttention && cfg_.cp > 1) {
      out.push_back({StepKind::kGatherKeys, Operand::kKeys, Group::kCp, kHeadsWide});
    }
    if (d.kind == StageKind::kAttention && cfg_.dcp > 1) {
      out.push_back({StepKind::kGatherQueries, Operand::kQueries, Group::kDcp, kHeadsWide});
      out.push_back({StepKind::kExchangePartials, Operand::kPartials, Group::kDcp, kHeadsWide});
    }
    const bool a2a = d.kind == StageKind::kSparseFfn && cfg_.moe == MoeMode::kA2a && cfg_.ep_size() > 1;
    const int dispatched = d.top_k * value_width();
    if (a2a) out.push_back({StepKind::kDispatch, Operand::kInput, A2aGroup(cfg_), dispatched});
    out.push_back(compute);
    if (a2a) out.push_back({StepKind::kCombine, Operand::kValue, A2aGroup(cfg_), dispatched});
    const bool reduces = d.kind == StageKind::kAttention && d.attention_sum == AttentionSum::kReducesItself;
    if (reduces && Owe(cfg_, Owed::kAttnTp) != Owed::kNothing) {
      out.push_back({StepKind::kAllReduce, Operand::kValue, Group::kAttnTp, value_width()});
    }
    return out;
  }

  static std::string ExpectText(std::span<const Expect> e) {
    std::vector<std::string> parts;
    for (const Expect& x : e) parts.push_back(fmt::format("{} {}", Name(x.kind), Name(x.operand)));
    return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; "));
  }

  static std::string StepsText(const std::vector<Step>& steps) {
    std::vector<std::string> parts;
    for (const Step& s : steps) parts.push_back(fmt::format("{} {}", Name(s.kind), Name(s.operand)));
    return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; "));
  }

  void Compute(const StagePlan& s) {
    const Expects want = ComputeOf(s.decl);
    bool same = want.size == s.compute.size();
    for (size_t i = 0; same && i < want.size; ++i) {
      same = want[i].kind == s.compute[i].kind && want[i].operand == s.compute[i].operand;
    }
    if (!same) {
      return Report(v_, s.index, Side::kCompute, -1,
                    fmt::format("the {} computes '{}' but its declaration and configuration require '{}'",
                                Name(s.decl.kind), StepsText(s.compute), ExpectText(want.all())));
    }
    for (size_t i = 0; i < want.size; ++i) {
      const Step& step = s.compute[i];
      if (step.group != want[i].group) {
        Report(v_, s.index, Side::kCompute, static_cast<int>(i),
               fmt::format("{} runs over {}, not {}", Name(step.kind), step.group ? Name(*step.group) : "no group",
                           want[i].group ? Name(*want[i].group) : "no group"));
      }
      if (want[i].width == kHeadsWide ? step.width < 1 : step.width != want[i].width) {
        Report(
            v_, s.index, Side::kCompute, static_cast<int>(i),
            fmt::format("{} {} is {} wide but the model makes it {}", Name(step.kind), Name(step.operand), step.width,
                        want[i].width == kHeadsWide
                            ? fmt::format("its heads' {} wide",
                                          step.operand == Operand::kKeys ? "keys and values" : Name(step.operand))
                            : std::to_string(want[i].width)));
      }
      if (step.kind != StepKind::kCompute) Transitions(s.index, Side::kCompute, i, step);
    }
  }

  // Entry, exit, receive and end steps: the buffer's width, then the shape.
  void Shape(int stage, Side side, size_t i, const Step& s) {
    const bool residual =
        (s.operand == Operand::kResidual && s.kind != StepKind::kNorm) || s.kind == StepKind::kStartResidual;
    const int want = residual ? residual_width() : value_width();
    if (s.width != want) {
      Report(v_, stage, side, static_cast<int>(i),
             fmt::format("{} {} is {} wide but the model makes it {}", Name(s.kind), Name(s.operand), s.width, want));
    }
    if (s.kind == StepKind::kCompute || s.kind == StepKind::kDispatch || s.kind == StepKind::kCombine ||
        s.kind == StepKind::kGatherKeys || s.kind == StepKind::kGatherQueries ||
        s.kind == StepKind::kExchangePartials) {
      return Report(v_, stage, side, static_cast<int>(i),
                    fmt::format("{} belongs to a stage's compute, not its {}", Name(s.kind), Name(side)));
    }
    Transitions(stage, side, i, s);
  }

  // What each step kind does to its operand's rows and owed sum.
  void Transitions(int stage, Side side, size_t i, const Step& s) {
    const std::string why = StepRuleError(s, cfg_);
    if (!why.empty()) Report(v_, stage, side, static_cast<int>(i), fmt::format("{}: {}", ShortString(s), why));
  }

  void Report(Variant v, int stage, Side side, int step, std::string message) {
    out_.push_back({h().pp_rank, v, stage, side, step, Invariant::kWellFormed, std::move(message)});
  }

  const Plan& plan_;
  const ParallelConfig& cfg_;
  std::vector<Violation>& out_;
  Variant v_ = Variant::kOrdinary;
};

}  // namespace

bool CheckStructure(const Plan& plan, std::vector<Violation>& out) { return Checker(plan, out).Run(); }

}  // namespace seam::verify

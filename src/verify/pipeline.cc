// Checks across pipeline ranks: handoffs pair up (invariant 3), and stages
// away from a cut bind as they do uncut (invariant 4).
#include <fmt/format.h>


#include "seam/pipeline.h"
#include "seam/verify.h"

namespace seam {
namespace {

Violation At(int pp_rank, Variant v, int stage, std::string side, Invariant inv, std::string message) {
  return {pp_rank, v, stage, std::move(side), -1, inv, std::move(message)};
}

std::vector<const Step*> StepsOfKind(const std::vector<Step>& steps, StepKind kind) {
  std::vector<const Step*> out;
  for (const Step& s : steps) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

std::string TransportText(const std::vector<const Step*>& steps) {
  std::vector<std::string> parts;
  for (const Step* s : steps) parts.push_back(fmt::format("{} on {} x{}", Name(s->operand), Name(s->rows_in), s->width));
  return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, ", "));
}

bool SameTransport(const std::vector<const Step*>& a, const std::vector<const Step*>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->operand != b[i]->operand || a[i]->rows_in != b[i]->rows_in || a[i]->width != b[i]->width) return false;
  }
  return true;
}

// The ranks hold the layers the configuration's split gives them.
void CheckSplit(const Pipeline& ranks, int layers, std::vector<Violation>& out) {
  const ParallelConfig& cfg = ranks.front().config();
  if (static_cast<int>(ranks.size()) != cfg.pp || layers < 1) return;  // reported as not one pipeline
  const Expected<std::vector<LayerRange>> split = SplitLayers(cfg, layers);
  if (!split) {
    out.push_back(At(0, Variant::kOrdinary, -1, "header", Invariant::kWellFormed,
                     fmt::format("the {} layers cannot be split so: {}", layers, split.error().message)));
    return;
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    const PlanHeader& h = ranks[r].header();
    const LayerRange want = (*split)[r];
    if (h.first_layer != want.first || h.last_layer != want.last) {
      out.push_back(At(static_cast<int>(r), Variant::kOrdinary, -1, "header", Invariant::kWellFormed,
                       fmt::format("the rank holds layers {}..{} but the configuration's split of {} layers gives it "
                                   "{}..{}",
                                   h.first_layer, h.last_layer - 1, layers, want.first, want.last - 1)));
    }
  }
}

// Stage indices run on from one rank to the next.
void CheckStageIndices(const Pipeline& ranks, std::vector<Violation>& out) {
  for (size_t r = 0; r + 1 < ranks.size(); ++r) {
    for (const LinePlan& line : ranks[r].lines()) {
      const LinePlan* next = ranks[r + 1].line(line.variant);
      if (next == nullptr || line.stages.empty() || next->stages.empty()) continue;
      const int last = line.stages.back().index;
      const int first = next->stages.front().index;
      if (first != last + 1) {
        out.push_back(At(static_cast<int>(r + 1), line.variant, first, "header", Invariant::kWellFormed,
                         fmt::format("the rank starts at stage {} but the previous rank ended with stage {}", first,
                                     last)));
      }
    }
  }
}

// The ranks describe one model and configuration, and their layers tile it.
void CheckHeaders(const Pipeline& ranks, std::vector<Violation>& out) {
  const PlanHeader& h0 = ranks.front().header();
  int next_layer = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const PlanHeader& h = ranks[r].header();
    const int rank = static_cast<int>(r);
    if (h.pp_rank != rank || h.model != h0.model || !(h.config == h0.config) ||
        static_cast<int>(ranks.size()) != h.config.pp) {
      out.push_back(At(rank, Variant::kOrdinary, -1, "header", Invariant::kHandoff,
                       "the ranks' plans are not one pipeline of the same model and configuration"));
    }
    if (h.first_layer != next_layer) {
      out.push_back(At(rank, Variant::kOrdinary, -1, "header", Invariant::kHandoff,
                       fmt::format("the rank starts at layer {} but the previous one ended before layer {}",
                                   h.first_layer, next_layer)));
    }
    next_layer = h.last_layer;
  }
  CheckSplit(ranks, next_layer, out);
  CheckStageIndices(ranks, out);
}

void CheckPairs(const Plan& sender, const Plan& receiver, std::vector<Violation>& out) {
  for (const LinePlan& line : sender.lines()) {
    const LinePlan* other = receiver.line(line.variant);
    const int r = sender.header().pp_rank;
    if (other == nullptr) {
      out.push_back(At(r + 1, line.variant, -1, "receive", Invariant::kHandoff,
                       fmt::format("rank {} has no {} batches to receive", r + 1, Name(line.variant))));
      continue;
    }
    const auto sends = StepsOfKind(line.end.steps, StepKind::kSend);
    const auto recvs = StepsOfKind(other->receive, StepKind::kRecv);
    if (!SameTransport(sends, recvs)) {
      out.push_back(At(r + 1, line.variant, -1, "receive", Invariant::kHandoff,
                       fmt::format("rank {} sends {} but rank {} receives {}", r, TransportText(sends), r + 1,
                                   TransportText(recvs))));
    }
  }
}

// Invariant 4, exactly. A stage binds as a function of what arrives, its
// declaration, the configuration and what lies after it on its rank. A cut
// changes only two of those: the receiver's first stage arrives with what
// from_pp gathers, and a stage on a sending rank that is the rank's last or
// is followed on the rank only by always-partial attentions has the handoff
// downstream (its exit looks across the cut by definition). A difference
// may travel on only through what a stage hands on: an entry may differ only
// when its arrival does, an exit only when its downstream or the residual it
// runs with does. Compute never differs. Everything else is compared.
class CutComparer {
 public:
  CutComparer(const LinePlan& uncut, std::vector<Violation>& out, CutCoverage& coverage)
      : uncut_(uncut), out_(out), coverage_(coverage) {}

  void Rank(const Plan& plan, const LinePlan& line) {
    const int rank = plan.header().pp_rank;
    const bool sends = line.end.kind == EndKind::kSend;
    bool may_differ = rank > 0;  // what the rank's first stage arrives with
    const std::vector<bool> looks_across = LooksAcross(line.stages, sends);
    for (size_t i = 0; i < line.stages.size(); ++i) {
      const StagePlan& s = line.stages[i];
      const StagePlan* u = UncutStage(s.index);
      if (u == nullptr) return Fail(rank, line.variant, s.index, "the uncut plan has no such stage");
      may_differ = Stage(rank, line.variant, s, *u, may_differ, looks_across[i]);
    }
  }

 private:
  const StagePlan* UncutStage(int index) const {
    for (const StagePlan& u : uncut_.stages) {
      if (u.index == index) return &u;
    }
    return nullptr;
  }

  // Stages whose exit has the handoff downstream: the rank's last stage that
  // does something, and each one followed only by always-partial attentions.
  static std::vector<bool> LooksAcross(const std::vector<StagePlan>& stages, bool sends) {
    std::vector<bool> out(stages.size(), false);
    if (!sends) return out;
    bool tail = true;  // every later stage on the rank is an always-partial attention
    for (size_t i = stages.size(); i-- > 0;) {
      out[i] = tail;
      const StageDecl& d = stages[i].decl;
      if (d.kind != StageKind::kNoOp) tail = tail && IsAlwaysPartialAttention(d);
    }
    return out;
  }

  // Compares one stage; returns whether what it hands on may differ.
  bool Stage(int rank, Variant v, const StagePlan& s, const StagePlan& u, bool arrival_may_differ, bool looks_across) {
    int exempt = 0;
    if (!(s.decl == u.decl) || s.layer != u.layer) Fail(rank, v, s.index, "declares another stage than uncut");
    const bool arrives_differs = !(s.arrives == u.arrives);
    if (arrives_differs && !arrival_may_differ) {
      Fail(rank, v, s.index, fmt::format("arrives {} vs uncut {}", ShortString(s.arrives), ShortString(u.arrives)));
    }
    if (arrives_differs && arrival_may_differ) {
      ++exempt;
    } else if (!(s.entry == u.entry) || s.input != u.input || s.residual != u.residual) {
      Fail(rank, v, s.index, fmt::format("entry '{}' vs uncut '{}'", ShortString(s.entry), ShortString(u.entry)));
    }
    if (!(s.compute == u.compute)) {
      Fail(rank, v, s.index, fmt::format("compute '{}' vs uncut '{}'", ShortString(s.compute), ShortString(u.compute)));
    }
    const bool exit_may_differ = s.decl.kind == StageKind::kNoOp ? arrival_may_differ && arrives_differs
                                                                 : looks_across || s.residual != u.residual;
    if (exit_may_differ) {
      ++exempt;
    } else if (!(s.exit == u.exit) || !(s.departs == u.departs)) {
      Fail(rank, v, s.index, fmt::format("exit '{}' departing {} vs uncut '{}' departing {}", ShortString(s.exit),
                                         ShortString(s.departs), ShortString(u.exit), ShortString(u.departs)));
    }
    ++coverage_.stages;
    coverage_.parts += 3;
    coverage_.exempt_parts += exempt;
    if (exempt > 0) ++coverage_.exempt_stages;
    return exit_may_differ;
  }

  void Fail(int rank, Variant v, int stage, std::string what) {
    out_.push_back(At(rank, v, stage, "binding", Invariant::kAwayFromCut, "binds differently than uncut: " + what));
  }

  const LinePlan& uncut_;
  std::vector<Violation>& out_;
  CutCoverage& coverage_;
};

}  // namespace

std::vector<Violation> VerifyPipeline(const Pipeline& ranks) {
  std::vector<Violation> out;
  if (ranks.empty()) return out;
  CheckHeaders(ranks, out);
  for (const Plan& p : ranks) {
    for (Violation& v : Verify(p)) out.push_back(std::move(v));
  }
  for (size_t r = 0; r + 1 < ranks.size(); ++r) CheckPairs(ranks[r], ranks[r + 1], out);
  return out;
}

std::vector<Violation> CompareWithUncut(const Plan& uncut, const Pipeline& ranks, CutCoverage* coverage) {
  std::vector<Violation> out;
  CutCoverage local;
  for (const LinePlan& line : uncut.lines()) {
    CutComparer comparer(line, out, coverage != nullptr ? *coverage : local);
    size_t stages = 0;
    for (const Plan& p : ranks) {
      const LinePlan* l = p.line(line.variant);
      if (l == nullptr) {
        out.push_back(At(p.header().pp_rank, line.variant, -1, "header", Invariant::kAwayFromCut,
                         fmt::format("the cut plan has no {} line", Name(line.variant))));
        continue;
      }
      stages += l->stages.size();
      comparer.Rank(p, *l);
    }
    if (stages != line.stages.size()) {
      out.push_back(At(0, line.variant, -1, "header", Invariant::kAwayFromCut,
                       fmt::format("the cut plans hold {} stages, the uncut plan {}", stages, line.stages.size())));
    }
  }
  return out;
}

}  // namespace seam

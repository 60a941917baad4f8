// Checks across pipeline ranks: handoffs pair up (invariant 3), and stages
// away from a cut bind as they do uncut (invariant 4).
#include "seam/verify.h"

#include <fmt/format.h>

#include <algorithm>

#include "seam/pipeline.h"

namespace seam {
namespace {

Violation At(int pp_rank, Variant v, int stage, Side side, Invariant inv, std::string message) {
  return {pp_rank, v, stage, side, -1, inv, std::move(message)};
}

// Appends the steps of `kind` to `out` as transports; the run they fill.
RankEdges::Run TransportsOf(const std::vector<Step>& steps, StepKind kind, std::vector<Transport>& out) {
  const size_t at = out.size();
  for (const Step& s : steps) {
    if (s.kind == kind) out.push_back({s.operand, s.rows_in, s.width});
  }
  return {static_cast<uint32_t>(at), static_cast<uint32_t>(out.size() - at)};
}

std::string TransportText(std::span<const Transport> transports) {
  std::vector<std::string> parts;
  for (const Transport& t : transports)
    parts.push_back(fmt::format("{} on {} x{}", Name(t.operand), Name(t.rows), t.width));
  return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, ", "));
}

// The headers name one model and configuration and number the ranks in order.
void CheckOnePipeline(const Pipeline& ranks, std::vector<Violation>& out) {
  const PlanHeader& h0 = ranks.front().header();
  for (size_t r = 0; r < ranks.size(); ++r) {
    const PlanHeader& h = ranks[r].header();
    const int rank = static_cast<int>(r);
    if (h.pp_rank != rank || h.model != h0.model || !(h.config == h0.config) ||
        static_cast<int>(ranks.size()) != h.config.pp) {
      out.push_back(At(rank, Variant::kOrdinary, -1, Side::kHeader, Invariant::kHandoff,
                       "the ranks' plans are not one pipeline of the same model and configuration"));
    }
  }
}

// The ranks' layers run on from one to the next, as `split` gives them
// (unchecked against an empty split: the layers cannot be split so).
void CheckLayers(std::span<const RankEdges* const> ranks, std::span<const LayerRange> split,
                 std::vector<Violation>& out) {
  int next_layer = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const LayerRange& h = ranks[r]->layers;
    if (h.first != next_layer) {
      out.push_back(At(
          static_cast<int>(r), Variant::kOrdinary, -1, Side::kHeader, Invariant::kHandoff,
          fmt::format("the rank starts at layer {} but the previous one ended before layer {}", h.first, next_layer)));
    }
    next_layer = h.last;
  }
  if (split.size() != ranks.size()) return;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const LayerRange& h = ranks[r]->layers;
    if (!(h == split[r])) {
      out.push_back(At(static_cast<int>(r), Variant::kOrdinary, -1, Side::kHeader, Invariant::kWellFormed,
                       fmt::format("the rank holds layers {}..{} but the configuration's split of {} layers gives it "
                                   "{}..{}",
                                   h.first, h.last - 1, next_layer, split[r].first, split[r].last - 1)));
    }
  }
}

// Stage indices run on from one rank to the next.
void CheckStageIndices(std::span<const RankEdges* const> ranks, std::vector<Violation>& out) {
  for (size_t r = 0; r + 1 < ranks.size(); ++r) {
    for (const RankEdges::Line& line : ranks[r]->lines) {
      const RankEdges::Line* next = ranks[r + 1]->line(line.variant);
      if (next == nullptr || line.stages == 0 || next->stages == 0) continue;
      if (next->first_stage != line.last_stage + 1) {
        out.push_back(At(static_cast<int>(r + 1), line.variant, next->first_stage, Side::kHeader,
                         Invariant::kWellFormed,
                         fmt::format("the rank starts at stage {} but the previous rank ended with stage {}",
                                     next->first_stage, line.last_stage)));
      }
    }
  }
}

// Each handoff's sends and receives pair up slice for slice.
void CheckPairs(std::span<const RankEdges* const> ranks, std::vector<Violation>& out) {
  for (size_t r = 0; r + 1 < ranks.size(); ++r) {
    const int to = static_cast<int>(r + 1);
    for (const RankEdges::Line& line : ranks[r]->lines) {
      const RankEdges::Line* other = ranks[r + 1]->line(line.variant);
      if (other == nullptr) {
        out.push_back(At(to, line.variant, -1, Side::kStart, Invariant::kHandoff,
                         fmt::format("rank {} has no {} batches to receive", to, Name(line.variant))));
      } else if (const std::span<const Transport> sends = ranks[r]->Of(line.sends),
                 receives = ranks[r + 1]->Of(other->receives);
                 !std::ranges::equal(sends, receives)) {
        out.push_back(At(to, line.variant, -1, Side::kStart, Invariant::kHandoff,
                         fmt::format("rank {} sends {} but rank {} receives {}", r, TransportText(sends), to,
                                     TransportText(receives))));
      }
    }
  }
}

struct PipelineEdges {
  std::vector<RankEdges> edges;
  std::vector<const RankEdges*> ranks;
  std::vector<LayerRange> split;  // empty where the layers cannot be split so
};

// The edges of a pipeline's ranks.
PipelineEdges EdgesOf(const Pipeline& ranks) {
  PipelineEdges p;
  p.edges.reserve(ranks.size());
  for (const Plan& r : ranks) p.edges.push_back(EdgesOf(r));
  for (const RankEdges& e : p.edges) p.ranks.push_back(&e);
  return p;
}

// The edges of a pipeline's ranks, and the split its configuration gives
// them; a split that does not fit is reported.
PipelineEdges EdgesAndSplitOf(const Pipeline& ranks, std::vector<Violation>& out) {
  PipelineEdges p = EdgesOf(ranks);
  const ParallelConfig& cfg = ranks.front().config();
  const int layers = ranks.back().header().last_layer;
  if (static_cast<int>(ranks.size()) != cfg.pp || layers < 1) return p;  // reported as not one pipeline
  Expected<std::vector<LayerRange>> split = SplitLayers(cfg, layers);
  if (split) {
    p.split = *std::move(split);
  } else {
    out.push_back(At(0, Variant::kOrdinary, -1, Side::kHeader, Invariant::kWellFormed,
                     fmt::format("the {} layers cannot be split so: {}", layers, split.error().message)));
  }
  return p;
}

// Invariant 4, exactly. A stage binds as a function of what arrives, its
// declaration, the configuration and what lies after it on its rank. A cut
// changes only two of those, by definition: the receiver's first stage
// arrives with what from_pp gathers, and a stage on a sending rank that is
// the rank's last or is followed on the rank only by always-partial
// attentions has the handoff downstream. Those parts are "at the cut": they
// may differ, and replay, policy and bytes check them on the cut plan as on
// any plan. A difference may travel on only through what a stage hands on:
// an entry may differ only when its arrival does, an exit only when its
// downstream or the residual rows it runs with do; those further
// differences are "handed on", the exempt ones. Compute and the rows a stage
// computes on never differ. Every part is compared; equal parts count as
// compared whatever was allowed.
class CutComparer {
 public:
  CutComparer(const LinePlan& uncut, std::vector<Violation>& out, CutCoverage& coverage)
      : uncut_(uncut), out_(out), coverage_(coverage) {}

  void Rank(const Plan& plan, const LinePlan& line) {
    const int rank = plan.header().pp_rank;
    const bool sends = line.end.kind == EndKind::kSend;
    Difference arrival = rank > 0 ? Difference::kAtCut : Difference::kNone;  // what from_pp brings
    const std::vector<bool> looks_across = LooksAcross(line.stages, sends);
    for (size_t i = 0; i < line.stages.size(); ++i) {
      const StagePlan& s = line.stages[i];
      const StagePlan* u = UncutStage(s.index);
      if (u == nullptr) return Fail(rank, line.variant, s.index, "the uncut plan has no such stage");
      arrival = Stage(rank, line.variant, s, *u, arrival, looks_across[i]);
    }
  }

 private:
  // Why a part may differ from its uncut binding.
  enum class Difference { kNone, kAtCut, kHandedOn };

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

  // Compares one stage; returns why what it hands on may differ.
  Difference Stage(int rank, Variant v, const StagePlan& s, const StagePlan& u, Difference arrival, bool looks_across) {
    if (!(s.decl == u.decl) || s.layer != u.layer) Fail(rank, v, s.index, "declares another stage than uncut");
    if (!(s.compute == u.compute) || s.input != u.input) {
      Fail(rank, v, s.index,
           fmt::format("compute '{}' on {} vs uncut '{}' on {}", ShortString(s.compute), RowsText(s.input),
                       ShortString(u.compute), RowsText(u.input)));
    }
    const bool arrives_differs = !(s.arrives == u.arrives);
    if (arrives_differs && arrival == Difference::kNone) {
      Fail(rank, v, s.index, fmt::format("arrives {} vs uncut {}", ShortString(s.arrives), ShortString(u.arrives)));
    }
    const bool entry_differs = !(s.entry == u.entry) || s.residual != u.residual;
    if (entry_differs && !arrives_differs) {
      Fail(rank, v, s.index, fmt::format("entry '{}' vs uncut '{}'", ShortString(s.entry), ShortString(u.entry)));
    }
    const Difference entry = entry_differs && arrives_differs ? arrival : Difference::kNone;
    const Difference exit = ExitDifference(rank, v, s, u, arrives_differs ? arrival : Difference::kNone, looks_across);
    Count(entry, exit);
    return exit;
  }

  // Why the exit and what the stage hands on may differ, failing when they
  // differ for no reason. A no-op hands on what it was handed.
  Difference ExitDifference(int rank, Variant v, const StagePlan& s, const StagePlan& u, Difference arrival,
                            bool looks_across) {
    if (s.exit == u.exit && s.departs == u.departs) return Difference::kNone;
    if (s.decl.kind == StageKind::kNoOp && arrival != Difference::kNone) return arrival;
    if (looks_across) return Difference::kAtCut;
    if (s.residual != u.residual) return Difference::kHandedOn;
    Fail(rank, v, s.index,
         fmt::format("exit '{}' departing {} vs uncut '{}' departing {}", ShortString(s.exit), ShortString(s.departs),
                     ShortString(u.exit), ShortString(u.departs)));
    return Difference::kNone;
  }

  void Count(Difference entry, Difference exit) {
    const auto is = [&](Difference d) { return static_cast<int>(entry == d) + static_cast<int>(exit == d); };
    ++coverage_.stages;
    coverage_.parts += 3;
    coverage_.at_cut_parts += is(Difference::kAtCut);
    coverage_.handed_on_parts += is(Difference::kHandedOn);
    if (is(Difference::kAtCut) > 0) ++coverage_.at_cut_stages;
    if (is(Difference::kHandedOn) > 0) ++coverage_.handed_on_stages;
  }

  static std::string RowsText(const std::optional<Rows>& rows) { return rows ? std::string(Name(*rows)) : "nothing"; }

  void Fail(int rank, Variant v, int stage, std::string what) {
    out_.push_back(
        At(rank, v, stage, Side::kBinding, Invariant::kAwayFromCut, "binds differently than uncut: " + what));
  }

  const LinePlan& uncut_;
  std::vector<Violation>& out_;
  CutCoverage& coverage_;
};

}  // namespace

RankEdges EdgesOf(const Plan& plan) {
  RankEdges e{.layers = {plan.header().first_layer, plan.header().last_layer}};
  e.lines.reserve(plan.lines().size());
  for (const LinePlan& line : plan.lines()) {
    RankEdges::Line l{.variant = line.variant,
                      .stages = line.stages.size(),
                      .receives = TransportsOf(line.start, StepKind::kRecv, e.transports),
                      .sends = TransportsOf(line.end.steps, StepKind::kSend, e.transports)};
    if (!line.stages.empty()) {
      l.first_stage = line.stages.front().index;
      l.last_stage = line.stages.back().index;
    }
    e.lines.push_back(std::move(l));
  }
  return e;
}

std::vector<Violation> VerifyEdges(std::span<const RankEdges* const> ranks, std::span<const LayerRange> split) {
  std::vector<Violation> out;
  CheckLayers(ranks, split, out);
  CheckStageIndices(ranks, out);
  CheckPairs(ranks, out);
  return out;
}

std::vector<Violation> VerifyAcrossRanks(const Pipeline& ranks) {
  std::vector<Violation> out;
  if (ranks.empty()) return out;
  CheckOnePipeline(ranks, out);
  const PipelineEdges p = EdgesAndSplitOf(ranks, out);
  for (Violation& v : VerifyEdges(p.ranks, p.split)) out.push_back(std::move(v));
  return out;
}

std::vector<Violation> VerifyPipeline(const Pipeline& ranks) {
  std::vector<Violation> out;
  if (ranks.empty()) return out;
  CheckOnePipeline(ranks, out);
  const PipelineEdges p = EdgesAndSplitOf(ranks, out);
  CheckLayers(p.ranks, p.split, out);
  CheckStageIndices(p.ranks, out);
  for (const Plan& r : ranks) {
    for (Violation& v : Verify(r)) out.push_back(std::move(v));
  }
  CheckPairs(p.ranks, out);
  return out;
}

std::vector<Violation> CompareRankWithUncut(const Plan& uncut, const Plan& rank, CutCoverage* coverage) {
  std::vector<Violation> out;
  CutCoverage local;
  for (const LinePlan& line : uncut.lines()) {
    const LinePlan* l = rank.line(line.variant);
    if (l == nullptr) {
      out.push_back(At(rank.header().pp_rank, line.variant, -1, Side::kHeader, Invariant::kAwayFromCut,
                       fmt::format("the cut plan has no {} line", Name(line.variant))));
      continue;
    }
    CutComparer(line, out, coverage != nullptr ? *coverage : local).Rank(rank, *l);
  }
  return out;
}

std::vector<Violation> CompareStageCounts(const Plan& uncut, std::span<const RankEdges* const> ranks) {
  std::vector<Violation> out;
  for (const LinePlan& line : uncut.lines()) {
    size_t stages = 0;
    for (const RankEdges* r : ranks) {
      if (const RankEdges::Line* l = r->line(line.variant)) stages += l->stages;
    }
    if (stages != line.stages.size()) {
      out.push_back(At(0, line.variant, -1, Side::kHeader, Invariant::kAwayFromCut,
                       fmt::format("the cut plans hold {} stages, the uncut plan {}", stages, line.stages.size())));
    }
  }
  return out;
}

std::vector<Violation> CompareStageCounts(const Plan& uncut, const Pipeline& ranks) {
  return CompareStageCounts(uncut, EdgesOf(ranks).ranks);
}

std::vector<Violation> CompareWithUncut(const Plan& uncut, const Pipeline& ranks, CutCoverage* coverage) {
  std::vector<Violation> out;
  for (const Plan& p : ranks) {
    for (Violation& v : CompareRankWithUncut(uncut, p, coverage)) out.push_back(std::move(v));
  }
  for (Violation& v : CompareStageCounts(uncut, ranks)) out.push_back(std::move(v));
  return out;
}

}  // namespace seam

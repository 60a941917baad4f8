// Checks across pipeline ranks: handoffs pair up (invariant 3), and stages
// away from a cut bind as they do uncut (invariant 4).
#include <fmt/format.h>

#include <map>
#include <set>

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

// The first part in which two bindings of a stage differ.
std::string FirstDifference(const StagePlan& a, const StagePlan& b) {
  if (!(a.arrives == b.arrives)) return fmt::format("arrives {} vs uncut {}", ShortString(a.arrives), ShortString(b.arrives));
  if (!(a.entry == b.entry)) return fmt::format("entry '{}' vs uncut '{}'", ShortString(a.entry), ShortString(b.entry));
  if (!(a.compute == b.compute)) {
    return fmt::format("compute '{}' vs uncut '{}'", ShortString(a.compute), ShortString(b.compute));
  }
  if (!(a.exit == b.exit)) return fmt::format("exit '{}' vs uncut '{}'", ShortString(a.exit), ShortString(b.exit));
  if (!(a.departs == b.departs)) return fmt::format("departs {} vs uncut {}", ShortString(a.departs), ShortString(b.departs));
  return "its rows or declaration differ";
}

// Stage indices near a cut, where binding may differ from the uncut plan.
std::set<int> NearCuts(const Pipeline& ranks, Variant v) {
  std::set<int> near;
  for (size_t r = 0; r + 1 < ranks.size(); ++r) {
    const std::vector<StagePlan>& send = ranks[r].line(v)->stages;
    const std::vector<StagePlan>& recv = ranks[r + 1].line(v)->stages;
    int from = send.front().index;
    for (const StagePlan& s : send) {
      if (IsFfn(s.decl)) from = s.index;
    }
    int to = recv.back().index;
    for (auto it = recv.rbegin(); it != recv.rend(); ++it) {
      if (IsFfn(it->decl)) to = it->index;
    }
    for (int i = from; i <= to; ++i) near.insert(i);
  }
  return near;
}

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

std::vector<Violation> CompareWithUncut(const Plan& uncut, const Pipeline& ranks) {
  std::vector<Violation> out;
  for (const LinePlan& line : uncut.lines()) {
    std::map<int, std::pair<int, const StagePlan*>> cut;  // stage index -> (rank, its binding)
    bool complete = true;
    for (const Plan& p : ranks) {
      const LinePlan* l = p.line(line.variant);
      if (l == nullptr || l->stages.empty()) {
        complete = false;
        continue;
      }
      for (const StagePlan& s : l->stages) cut[s.index] = {p.header().pp_rank, &s};
    }
    if (!complete || cut.size() != line.stages.size()) {
      out.push_back(At(0, line.variant, -1, "header", Invariant::kAwayFromCut,
                       "the cut plans do not hold the uncut plan's stages"));
      continue;
    }
    const std::set<int> near = NearCuts(ranks, line.variant);
    for (const StagePlan& s : line.stages) {
      const auto it = cut.find(s.index);
      if (it == cut.end() || near.count(s.index) > 0 || *it->second.second == s) continue;
      out.push_back(At(it->second.first, line.variant, s.index, "binding", Invariant::kAwayFromCut,
                       "binds differently than uncut: " + FirstDifference(*it->second.second, s)));
    }
  }
  return out;
}

}  // namespace seam

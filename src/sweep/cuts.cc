#include "sweep/cuts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <optional>
#include <span>

#include "seam/bind.h"
#include "seam/pipeline.h"
#include "seam/verify.h"

namespace seam::sweep {
namespace {

std::string Where(std::span<const LayerRange> split) {
  std::vector<int> counts;
  for (const LayerRange& r : split) counts.push_back(r.last - r.first);
  return fmt::format("cut {}", fmt::join(counts, "+"));
}

constexpr int kMaxRanks = 64;

class Checker {
 public:
  Checker(const SweepConfig& c, const Subject& subject, bool recheck, size_t keep, SegmentTable& table,
          Resolved& resolved, Unit& out)
      : config_(c),
        subject_(subject),
        model_(subject.model),
        recheck_(recheck),
        keep_(keep),
        table_(table),
        out_(out),
        layers_(subject.model.num_layers),
        uncut_(Bind(model_, c.cfg, 0)),
        resolved_(resolved) {}

  void Run(int max_pp) {
    if (uncut_) {
      out_.counts.plans_verified += 1;
      out_.counts.steps_replayed += StepsOf(*uncut_);
      for (const Violation& v : Verify(*uncut_)) Violate("uncut", Describe(v));
    } else {
      ++out_.counts.rejected_uncut;
    }
    Inherit(NumberUncutStages());
    // A cut has at most one rank per layer.
    SEAM_CHECK(layers_ <= kMaxRanks, "the sweep cuts subjects of at most 64 layers");
    max_pp_ = max_pp;
    Cuts(0, 0, nullptr);
  }

 private:
  std::vector<std::vector<int>> NumberUncutStages() {
    std::vector<std::vector<int>> out;
    if (!uncut_) return out;
    for (const LinePlan& line : uncut_->lines()) {
      std::vector<int>& numbers = out.emplace_back();
      numbers.reserve(line.stages.size());
      for (size_t i = 0; i < line.stages.size(); ++i) {
        SEAM_CHECK(line.stages[i].index == static_cast<int>(i), "an uncut plan's stages are numbered from 0 in order");
        numbers.push_back(table_.uncut().Number(line.variant, line.stages[i]));
      }
    }
    return out;
  }

  // Keeps the last subject's ranks that resolve alike here (Resolved), and
  // makes this subject the last.
  void Inherit(std::vector<std::vector<int>> uncut) {
    Resolved& last = resolved_;
    const size_t slots = static_cast<size_t>(layers_ * layers_);
    const bool alike = !subject_.letters.empty() && last.letters.size() == subject_.letters.size() &&
                       last.uncut_binds == uncut_.ok() && last.uncut.size() == uncut.size();
    if (!alike) {
      last.ranks.assign(slots, std::nullopt);
    } else {
      const int letters = FirstDifference(last.letters, subject_.letters);
      int stages = INT_MAX;  // stages numbered alike on every line: those below this
      for (size_t l = 0; l < uncut.size(); ++l) stages = std::min(stages, FirstDifference(last.uncut[l], uncut[l]));
      for (int first = 0; first < layers_; ++first) {
        for (int last_layer = first + 1; last_layer <= layers_; ++last_layer) {
          std::optional<Rank>& r = last.ranks[static_cast<size_t>(first * layers_ + last_layer - 1)];
          if (r && !ResolvesAlike(last_layer, layers_, letters, stages, r->last_stage)) r.reset();
        }
      }
    }
    last.letters = subject_.letters;
    last.uncut_binds = uncut_.ok();
    last.uncut = std::move(uncut);
  }

  template <class T>
  static int FirstDifference(const std::vector<T>& a, const std::vector<T>& b) {
    return static_cast<int>(std::ranges::mismatch(a, b).in1 - a.begin());
  }

  // Every cut: each way to cover the layers from `first` on with at most
  // max_pp - depth more ranks, ranks_[0, depth) covering the ones before.
  // After a rank that rejects, the later ones are not bound (as BindPipeline).
  void Cuts(int first, int depth, const Error* rejected) {
    for (int last = first + 1; last <= layers_; ++last) {
      const bool ends = last == layers_;
      if (ends ? depth == 0 : depth + 2 > max_pp_) continue;  // the uncut stack is no cut; every rank holds a layer
      split_[static_cast<size_t>(depth)] = {first, last};
      const Error* why = rejected;
      if (why == nullptr) {
        const Rank& r = RankOf(first, last);
        ranks_[static_cast<size_t>(depth)] = &r;
        edges_[static_cast<size_t>(depth)] = r.edges;
        why = r.rejected;
      }
      if (ends) {
        Cut(depth + 1, why);
      } else {
        Cuts(last, depth + 1, why);
      }
    }
  }

  // Every node of the enumeration asks for its rank; most were resolved
  // before, so that check is kept apart from resolving one.
  const Rank& RankOf(int first, int last) {
    std::optional<Rank>& slot = resolved_.ranks[static_cast<size_t>(first * layers_ + last - 1)];
    if (slot) return *slot;
    return Resolve(slot, first, last);
  }

  [[gnu::noinline]] const Rank& Resolve(std::optional<Rank>& slot, int first, int last) {
    const SegmentKey key = KeyOf(subject_.letters, layers_, first, last);
    Segment* s = table_.Find(key);
    std::optional<Expected<Plan>> plan;
    if (s == nullptr) s = &NewSegment(key, first, last, plan);
    slot.emplace(Rank{.segment = s, .rejected = s->rejected.get(), .edges = &s->edges, .violations = s->violations});
    for (const RankEdges::Line& line : s->edges.lines) slot->last_stage = std::max(slot->last_stage, line.last_stage);
    if (!s->rejected && uncut_) {
      const Comparison& c = Compared(*s, plan, first, last);
      slot->violations += c.violations;
      slot->coverage = c.coverage;
    }
    return *slot;
  }

  // A segment not yet in the table: bound (into `plan`) and verified, or,
  // where one that binds lies alike elsewhere in a stack, refused as
  // CheckRank refuses it here (the stage after it may refuse it here and not
  // there) or moved from there. An alike one that was refused is no model:
  // this one is bound (Bind refuses as CheckRank would) and, where it binds,
  // stands for its key from then on.
  Segment& NewSegment(const SegmentKey& key, int first, int last, std::optional<Expected<Plan>>& plan) {
    if (subject_.letters.empty()) {  // a catalogue model's segments are its own
      plan.emplace(BindSegment(first, last));
      return table_.Insert(key, SegmentOf(*plan, recheck_));
    }
    const SegmentKey anywhere = KeyAnywhereOf(subject_.letters, layers_, first, last, BeforeWrites(first));
    Segment* alike = table_.FindAnywhere(anywhere);
    if (alike != nullptr && alike->rejected == nullptr) {
      if (Status refused = CheckRank(model_, SegmentConfig(first, last), SegmentRank(first)); !refused.ok()) {
        return Settled(key, first, last, SegmentOf(Expected<Plan>(refused.error()), false), plan);
      }
      SEAM_CHECK(alike->shape == nullptr, "a segment that stands for its key anywhere was bound, not moved");
      Segment& s = Settled(key, first, last, MovedTo(*alike, first), plan);
      s.shape = alike;
      return s;
    }
    plan.emplace(BindSegment(first, last));
    Segment& s = table_.Insert(key, SegmentOf(*plan, recheck_));
    if (alike == nullptr || s.rejected == nullptr) table_.IndexAnywhere(anywhere, s);
    return s;
  }

  // Whether the stage before layer `first` writes at the handoff: all a
  // segment's binding reads of it (the cut's split does not enter it, so the
  // configuration's own is asked). A stack's layers hold one stage each.
  bool BeforeWrites(int first) const {
    if (first == 0) return false;
    const std::vector<StageDecl> before = model_.layer(first - 1);
    SEAM_CHECK(before.size() == 1 && before.front().kind != StageKind::kNoOp, "a stack's layers hold one stage each");
    return WritesAtHandoff(before.front(), config_.cfg);
  }

  // `found`, a segment known without binding it. Under a recheck it is
  // bound as well, and what was found must be what binding finds.
  Segment& Settled(const SegmentKey& key, int first, int last, Segment found, std::optional<Expected<Plan>>& plan) {
    if (!recheck_) return table_.Insert(key, std::move(found));
    plan.emplace(BindSegment(first, last));
    Segment bound = SegmentOf(*plan, true);
    if (!SameSegment(bound, found)) {
      Violate(fmt::format("layers {}..{}", first, last - 1),
              "reuse: the segment found from one alike elsewhere in the stack differs from the segment bound here");
    }
    return table_.Insert(key, std::move(bound));
  }

  static bool SameSegment(const Segment& a, const Segment& b) {
    if ((a.rejected == nullptr) != (b.rejected == nullptr)) return false;
    if (a.rejected != nullptr) return SameRule(*a.rejected, *b.rejected) && a.rejected->message == b.rejected->message;
    return a.steps == b.steps && a.violations == b.violations && a.edges == b.edges;
  }

  // The segment as a rank of a cut that holds it: the layers before it on
  // one rank, the layers after it on another.
  ParallelConfig SegmentConfig(int first, int last) const {
    std::array<LayerRange, 3> around;
    size_t ranks = 0;
    if (first > 0) around[ranks++] = {0, first};
    around[ranks++] = {first, last};
    if (last < layers_) around[ranks++] = {last, layers_};
    return CutConfig({around.data(), ranks});
  }
  static int SegmentRank(int first) { return first > 0 ? 1 : 0; }

  Expected<Plan> BindSegment(int first, int last) const {
    return Bind(model_, SegmentConfig(first, last), SegmentRank(first));
  }

  // The segment against this subject's uncut binding of its stages, compared
  // once per segment and set of uncut stages; `plan` is the segment's, bound
  // here if not yet.
  const Comparison& Compared(Segment& s, std::optional<Expected<Plan>>& plan, int first, int last) {
    key_.clear();
    for (size_t l = 0; l < uncut_->lines().size(); ++l) {
      const RankEdges::Line* line = s.edges.line(uncut_->lines()[l].variant);
      if (line == nullptr) continue;  // CompareRankWithUncut reports it, the same in every subject
      const std::vector<int>& numbers = resolved_.uncut[l];
      for (size_t i = 0; i < line->stages; ++i) {
        const int64_t index = line->first_stage + static_cast<int64_t>(i);
        const bool known = index >= 0 && index < static_cast<int64_t>(numbers.size());
        key_.push_back(known ? numbers[static_cast<size_t>(index)] : -1);
      }
      key_.push_back(-2);  // the end of a line
    }
    if (const Comparison* c = table_.Compared(s, key_)) return *c;
    if (!plan) plan.emplace(BindSegment(first, last));
    SEAM_CHECK(plan->ok(), "a segment binds again as it bound");
    CutCoverage coverage;
    const auto violations = static_cast<int64_t>(CompareRankWithUncut(*uncut_, **plan, &coverage).size());
    return table_.AddComparison(s, key_, violations, coverage);
  }

  void Cut(int ranks, const Error* rejected) {
    ++out_.counts.cut_outcomes;
    const std::span<const LayerRange> split(split_.data(), static_cast<size_t>(ranks));
    if (recheck_) Recheck(split, rejected);
    if (uncut_.ok() == (rejected != nullptr)) {
      const Error& why = rejected != nullptr ? *rejected : uncut_.error();
      Violate(Where(split),
              fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): {}",
                          rejected != nullptr ? "the cut rejects: " + why.message
                                              : "the cut binds what the uncut stack rejects: " + why.message));
      return;
    }
    if (rejected != nullptr) return SameRejection(split, uncut_.error(), *rejected);
    ++out_.counts.cuts_bound;
    const int64_t found = Found(split, out_.counts.away_from_cut);
    out_.counts.plans_verified += ranks;
    for (int r = 0; r < ranks; ++r) out_.counts.steps_replayed += ranks_[static_cast<size_t>(r)]->segment->steps;
    out_.counts.violations += found;
    if (found > 0 && out_.violations.size() < keep_) KeepInFull(split);
  }

  // What the cut's checks find: what spans its ranks, read from their
  // edges, and what each rank's segment found; the segments' coverage is
  // added to `coverage`.
  int64_t Found(std::span<const LayerRange> split, CutCoverage& coverage) const {
    const std::span<const RankEdges* const> edges(edges_.data(), split.size());
    auto found = static_cast<int64_t>(CheckAcrossCut(*uncut_, edges, split).size());
    for (size_t r = 0; r < split.size(); ++r) {
      coverage += ranks_[r]->coverage;
      found += ranks_[r]->violations;
    }
    return found;
  }

  ParallelConfig CutConfig(std::span<const LayerRange> split) const {
    ParallelConfig cfg = config_.cfg;
    cfg.pp_split.reserve(split.size());
    for (const LayerRange& r : split) cfg.pp_split.push_back(r.last - r.first);
    cfg.pp = static_cast<int>(split.size());
    return cfg;
  }

  // The cut's pipeline: each rank's segment under the header it has in this
  // cut; as the table kept it (`reused`, which only a recheck keeps) or
  // bound again in this subject.
  Pipeline Assemble(std::span<const LayerRange> split, bool reused) const {
    const ParallelConfig cfg = CutConfig(split);
    Pipeline cut;
    cut.reserve(split.size());
    for (size_t r = 0; r < split.size(); ++r) {
      const Plan* kept = ranks_[r]->segment->kept.get();
      SEAM_CHECK(!reused || kept != nullptr, "a recheck keeps every segment's plan");
      const Expected<Plan> p = reused ? Expected<Plan>(*kept) : BindSegment(split[r].first, split[r].last);
      SEAM_CHECK(p.ok(), "a segment binds again as it bound");
      PlanHeader h = p->header();
      h.model = model_.name;  // a kept segment may have been bound in another stack
      h.config.pp = cfg.pp;
      h.config.pp_split = cfg.pp_split;
      h.pp_rank = static_cast<int>(r);
      cut.push_back(p->WithHeader(std::move(h)));
    }
    return cut;
  }

  // The cut's violations in full, as VerifyPipeline and CompareWithUncut word them.
  void KeepInFull(std::span<const LayerRange> split) {
    const Pipeline cut = Assemble(split, false);
    std::vector<Violation> all = VerifyPipeline(cut);
    for (Violation& v : CompareWithUncut(*uncut_, cut)) all.push_back(std::move(v));
    for (const Violation& v : all) Keep(Where(split), Describe(v));
  }

  // The cut bound whole and checked as it stands must find what reuse found.
  void Recheck(std::span<const LayerRange> split, const Error* rejected) {
    const Expected<Pipeline> whole = BindPipeline(model_, CutConfig(split));
    const std::string where = Where(split);
    if (whole.ok() != (rejected == nullptr)) {
      return Violate(where, fmt::format("reuse: the reused ranks {} but the cut bound whole {}",
                                        rejected == nullptr ? "bind" : "reject", whole.ok() ? "binds" : "rejects"));
    }
    if (!whole) {
      if (!SameRule(whole.error(), *rejected)) {
        Violate(where, "reuse: the reused ranks reject otherwise than the cut bound whole: " + whole.error().message);
      }
      return;
    }
    if (!(Assemble(split, true) == *whole))
      return Violate(where, "reuse: the reused ranks differ from the cut bound whole");
    if (!uncut_) return;
    CutCoverage direct;
    const int64_t found =
        static_cast<int64_t>(VerifyPipeline(*whole).size() + CompareWithUncut(*uncut_, *whole, &direct).size());
    CutCoverage summed;
    const int64_t reused_found = Found(split, summed);
    if (found != reused_found) {
      Violate(where, fmt::format("reuse: the cut checked whole finds {} violations, reused {}", found, reused_found));
    } else if (!(direct == summed)) {
      Violate(where, fmt::format("reuse: the cut checked whole compares {} stage bindings with {} parts at the cut "
                                 "and {} handed on, reused {} with {} and {}",
                                 direct.stages, direct.at_cut_parts, direct.handed_on_parts, summed.stages,
                                 summed.at_cut_parts, summed.handed_on_parts));
    }
  }

  // Invariant 5, exactly: both reject, naming the same stage and rule.
  void SameRejection(std::span<const LayerRange> split, const Error& uncut, const Error& cut) {
    ++out_.counts.rejections_compared;
    if (SameRule(uncut, cut)) return;
    Violate(Where(split),
            fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): the cut rejects stage {} "
                        "(rule: {}) but the uncut stack stage {} (rule: {})",
                        cut.stage, cut.rule, uncut.stage, uncut.rule));
  }

  void Violate(const std::string& where, const std::string& what) {
    ++out_.counts.violations;
    Keep(where, what);
  }

  void Keep(const std::string& where, const std::string& what) {
    if (out_.violations.size() < keep_) {
      out_.violations.push_back(fmt::format("{} under {} {}: {}", subject_.label, config_.name, where, what));
    }
  }

  const SweepConfig& config_;
  const Subject& subject_;
  const Model& model_;
  bool recheck_;
  size_t keep_;
  SegmentTable& table_;
  Unit& out_;
  int layers_;
  const Expected<Plan> uncut_;
  Resolved& resolved_;    // this subject's uncut numbers and ranks, the ranks resolved when first needed
  std::vector<int> key_;  // a comparison's key, reused
  int max_pp_ = 1;
  // The cut being checked, rank by rank.
  std::array<LayerRange, kMaxRanks> split_;
  std::array<const Rank*, kMaxRanks> ranks_{};
  std::array<const RankEdges*, kMaxRanks> edges_{};
};

}  // namespace

bool SameRule(const Error& a, const Error& b) { return a.code == b.code && a.stage == b.stage && a.rule == b.rule; }

std::vector<Violation> CheckAcrossCut(const Plan& uncut, std::span<const RankEdges* const> ranks,
                                      std::span<const LayerRange> split) {
  std::vector<Violation> out = VerifyEdges(ranks, split);
  for (Violation& v : CompareStageCounts(uncut, ranks)) out.push_back(std::move(v));
  return out;
}

bool ResolvesAlike(int last, int layers, int letters_alike, int stages_alike, int last_stage) {
  return std::min(last + 1, layers) <= letters_alike && last_stage < stages_alike;
}

void CheckCuts(const SweepConfig& config, const Subject& subject, int max_pp, bool recheck, size_t keep,
               SegmentTable& table, Resolved& resolved, Unit& out) {
  Checker(config, subject, recheck, keep, table, resolved, out).Run(max_pp);
}

}  // namespace seam::sweep

#include "sweep/cuts.h"

#include <fmt/format.h>

#include <optional>

#include "seam/bind.h"
#include "seam/pipeline.h"
#include "seam/verify.h"

namespace seam::sweep {
namespace {

int64_t StepsOf(const Plan& plan) {
  int64_t steps = 0;
  for (const LinePlan& line : plan.lines()) steps += static_cast<int64_t>(StepCount(line));
  return steps;
}

// Two rejections are the same when they name the same stage and rule.
bool SameRule(const Error& a, const Error& b) { return a.code == b.code && a.stage == b.stage && a.rule == b.rule; }

// What one rank segment's checks found: its lines are the same in every cut
// that holds it, and so is what its own Verify and its comparison with the
// uncut plan find (they read the header only for the rank's layers and
// whether it is first or last, which the segment fixes).
struct Segment {
  Expected<Plan> plan;
  int64_t steps = 0;
  int64_t violations = 0;
  CutCoverage coverage;
};

// The header the rank has in this cut: only the pipeline's shape differs.
PlanHeader HeaderIn(const Plan& plan, const ParallelConfig& cut, int rank) {
  PlanHeader h = plan.header();
  h.config.pp = cut.pp;
  h.config.pp_split = cut.pp_split;
  h.pp_rank = rank;
  return h;
}

std::string Where(const std::vector<int>& split) { return fmt::format("cut {}", fmt::join(split, "+")); }

class Checker {
 public:
  Checker(const SweepConfig& c, const Subject& subject, bool recheck, size_t keep, Unit& out)
      : config_(c), subject_(subject), model_(subject.model), recheck_(recheck), keep_(keep), out_(out),
        layers_(subject.model.num_layers), uncut_(Bind(model_, c.cfg, 0)),
        segments_(static_cast<size_t>(layers_ * layers_)) {}

  void Run(int max_pp) {
    if (uncut_) {
      out_.counts.plans_verified += 1;
      out_.counts.steps_replayed += StepsOf(*uncut_);
      for (const Violation& v : Verify(*uncut_)) Violate("uncut", Describe(v));
    } else {
      ++out_.counts.rejected_uncut;
    }
    for (const std::vector<int>& split : LayerSplits(layers_, max_pp)) {
      if (split.size() > 1) Cut(split);  // the first split is the uncut stack
    }
  }

 private:
  const Segment& SegmentOf(int first, int last, const ParallelConfig& cut, int rank) {
    std::optional<Segment>& slot = segments_[static_cast<size_t>(first * layers_ + last - 1)];
    if (slot) return *slot;
    slot.emplace(Segment{.plan = Bind(model_, cut, rank)});
    Segment& s = *slot;
    if (!s.plan) return s;
    s.steps = StepsOf(*s.plan);
    s.violations = static_cast<int64_t>(Verify(*s.plan).size());
    if (uncut_) s.violations += static_cast<int64_t>(CompareRankWithUncut(*uncut_, *s.plan, &s.coverage).size());
    return s;
  }

  void Cut(const std::vector<int>& split) {
    ParallelConfig cfg = config_.cfg;
    cfg.pp = static_cast<int>(split.size());
    cfg.pp_split = split;
    ++out_.counts.cut_outcomes;
    // Rank by rank, as BindPipeline: the first rank that rejects is the cut's rejection.
    ranks_.clear();
    const Error* rejected = nullptr;
    for (int r = 0, first = 0; r < cfg.pp && rejected == nullptr; first += split[static_cast<size_t>(r)], ++r) {
      const Segment& s = SegmentOf(first, first + split[static_cast<size_t>(r)], cfg, r);
      ranks_.push_back(&s);
      if (!s.plan) rejected = &s.plan.error();
    }
    if (recheck_) Recheck(split, cfg, rejected);
    if (uncut_.ok() == (rejected != nullptr)) {
      const Error& why = rejected != nullptr ? *rejected : uncut_.error();
      Violate(Where(split), fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): {}",
                                        rejected != nullptr ? "the cut rejects: " + why.message
                                                            : "the cut binds what the uncut stack rejects: " + why.message));
      return;
    }
    if (rejected != nullptr) return SameRejection(split, uncut_.error(), *rejected);
    ++out_.counts.cuts_bound;
    const Pipeline cut = Assemble(cfg);
    const int64_t found = Found(cut, out_.counts.away_from_cut);
    for (const Segment* s : ranks_) {
      out_.counts.plans_verified += 1;
      out_.counts.steps_replayed += s->steps;
    }
    out_.counts.violations += found;
    if (found > 0 && out_.violations.size() < keep_) KeepInFull(split, cut);
  }

  // What the cut's checks find: what spans its ranks, checked here, and what
  // each rank's segment found; the segments' coverage is added to `coverage`.
  int64_t Found(const Pipeline& cut, CutCoverage& coverage) const {
    int64_t found = static_cast<int64_t>(VerifyAcrossRanks(cut).size() + CompareStageCounts(*uncut_, cut).size());
    for (const Segment* s : ranks_) {
      coverage += s->coverage;
      found += s->violations;
    }
    return found;
  }

  // The cut's pipeline: each rank's lines under the header it has in this cut.
  Pipeline Assemble(const ParallelConfig& cfg) const {
    Pipeline cut;
    cut.reserve(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const Plan& p = *ranks_[r]->plan;
      cut.push_back(p.WithHeader(HeaderIn(p, cfg, static_cast<int>(r))));
    }
    return cut;
  }

  // The cut's violations in full, as VerifyPipeline and CompareWithUncut word them.
  void KeepInFull(const std::vector<int>& split, const Pipeline& cut) {
    std::vector<Violation> all = VerifyPipeline(cut);
    for (Violation& v : CompareWithUncut(*uncut_, cut)) all.push_back(std::move(v));
    for (const Violation& v : all) Keep(Where(split), Describe(v));
  }

  // The cut bound whole and checked as it stands must find what reuse found.
  void Recheck(const std::vector<int>& split, const ParallelConfig& cfg, const Error* rejected) {
    const Expected<Pipeline> whole = BindPipeline(model_, cfg);
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
    const Pipeline reused = Assemble(cfg);
    if (!(reused == *whole)) return Violate(where, "reuse: the reused ranks differ from the cut bound whole");
    if (!uncut_) return;
    CutCoverage direct;
    const int64_t found =
        static_cast<int64_t>(VerifyPipeline(*whole).size() + CompareWithUncut(*uncut_, *whole, &direct).size());
    CutCoverage summed;
    const int64_t reused_found = Found(reused, summed);
    if (found != reused_found || !(direct == summed)) {
      Violate(where, fmt::format("reuse: the cut checked whole finds {} violations, reused {}", found, reused_found));
    }
  }

  // Invariant 5, exactly: both reject, naming the same stage and rule.
  void SameRejection(const std::vector<int>& split, const Error& uncut, const Error& cut) {
    ++out_.counts.rejections_compared;
    if (SameRule(uncut, cut)) return;
    Violate(Where(split), fmt::format("invariant 5 (a cut rejects only what the uncut stack rejects): the cut rejects stage {} "
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
  Unit& out_;
  int layers_;
  const Expected<Plan> uncut_;
  std::vector<std::optional<Segment>> segments_;  // by first layer and last, bound when first needed
  std::vector<const Segment*> ranks_;             // the cut being checked, rank by rank
};

}  // namespace

void CheckCuts(const SweepConfig& config, const Subject& subject, int max_pp, bool recheck, size_t keep, Unit& out) {
  Checker(config, subject, recheck, keep, out).Run(max_pp);
}

}  // namespace seam::sweep

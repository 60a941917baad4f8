// A trace checked against the plan: the batch read from the trace's sizes
// where not given, then every rank aligned (run/trace_align.cc).
#include "seam/runtime/trace_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "run/trace_align.h"

namespace seam {
namespace {

// Rows a DP group may be read to hold; more must be given.
constexpr int kMostInferredRows = 1 << 16;
// Batches that fit a rank's first collectives, tried in full.
constexpr size_t kMostCandidates = 8;
// Forward passes a trace is read as, at most.
constexpr int kMostPasses = 100000;
// The planned collectives looked at for a candidate batch's first (an
// all-to-all's rows are routed: the first that is not one).
constexpr size_t kFirstCalls = 4;

// The configuration's own rank of a trace's rank, and the plan's collectives
// moved onto the replica that rank is in.
struct Placed {
  const RankTrace* trace;
  int local = 0;   // the rank within its replica
  int offset = 0;  // the replica's first rank
};

void Shift(std::vector<PlannedCollective>& plan, int offset) {
  if (offset == 0) return;
  for (PlannedCollective& p : plan) {
    for (int& r : p.event.group) r += offset;
    if (p.event.peer >= 0) p.event.peer += offset;
  }
}

class Checker {
 public:
  Checker(const Model& m, const Pipeline& plans, std::vector<Placed> ranks)
      : m_(m),
        plans_(plans),
        cfg_(plans.front().config()),
        stages_(StagesOf(m, 0, m.num_layers)),
        ranks_(std::move(ranks)) {}

  Aligned Check(const Placed& r, const std::vector<int>& rows) const {
    std::vector<PlannedCollective> plan = PlannedFor(m_, plans_, stages_, rows, r.local);
    Shift(plan, r.offset);
    return AlignRank(cfg_, plan, *r.trace);
  }

  // The rows of each DP group that the trace's first collectives fit.
  Expected<std::vector<int>> Infer() const {
    const int groups = cfg_.shards();  // DP groups, or under CP each group's CP ranks
    std::vector<std::vector<int>> candidates(static_cast<size_t>(groups));
    for (int g = 0; g < groups; ++g) {
      SEAM_ASSIGN_OR_RETURN(candidates[static_cast<size_t>(g)], Candidates(g));
    }
    // A group no traced rank is in: as the first group read (engines pad
    // every DP group to the largest).
    int fill = 0;
    for (const std::vector<int>& c : candidates) {
      if (!c.empty()) {
        fill = c.front();
        break;
      }
    }
    std::vector<int> rows;
    for (const std::vector<int>& c : candidates) rows.push_back(c.empty() ? fill : c.front());
    // Where the first collective leaves the batch open, the candidate the
    // group's traces follow furthest.
    for (int g = 0; g < groups; ++g) {
      const std::vector<int>& c = candidates[static_cast<size_t>(g)];
      if (!c.empty()) rows[static_cast<size_t>(g)] = Best(g, rows, c);
    }
    return rows;
  }

 private:
  // How far the group's ranks follow their plans at `rows`: all of it scores highest.
  int GroupScore(int g, const std::vector<int>& rows) const {
    int matched = 0;
    bool all = true;
    for (const Placed& r : ranks_) {
      if (ShardOf(cfg_, CoordOf(cfg_, r.local)) != g) continue;
      const RankCheck c = Check(r, rows).check;
      matched += c.matched;
      all = all && !c.divergence;
    }
    return all ? std::numeric_limits<int>::max() : matched;
  }

  int Best(int g, std::vector<int> rows, const std::vector<int>& c) const {
    int best = c.front(), best_score = -1;
    for (int rows_g : c) {
      rows[static_cast<size_t>(g)] = rows_g;
      const int score = GroupScore(g, rows);
      if (score > best_score) best = rows_g, best_score = score;
      if (score == std::numeric_limits<int>::max()) break;
    }
    return best;
  }

  // Rows of group g at which every traced rank of it starts as its plan does.
  Expected<std::vector<int>> Candidates(int g) const {
    std::vector<int> out;
    bool any = false;
    // Past the first that fits, others differ only in how rows split over
    // attention TP (a few rows each way), and the search stops.
    const int window = 2 * WorldSize(cfg_) + 8;
    for (int rows = Least(g); rows <= kMostInferredRows && out.size() < kMostCandidates; ++rows) {
      if (!out.empty() && rows > out.front() + window) break;
      bool fits = true;
      for (const Placed& r : ranks_) {
        if (ShardOf(cfg_, CoordOf(cfg_, r.local)) != g) continue;
        any = true;
        fits = fits && FirstFits(r, rows);
        if (!fits) break;
      }
      if (!any) return out;
      if (fits) out.push_back(rows);
    }
    if (out.empty()) {
      return InvalidArgument(fmt::format(
          "the batch cannot be read from the trace: no batch of up to {} rows in DP group {} starts its ranks' "
          "traces as their plans start; give each DP group's rows with --tokens (under --cp, each CP rank's of each)",
          kMostInferredRows, g));
    }
    return out;
  }

  // Rows of group g below which no traced rank of it can start as it does:
  // a rank's first collective holds at most every DP group's rows (each
  // group at the same count while the batch is read), so a call of E
  // elements on rows W wide needs E / W / attn_dp rows a group or more.
  int Least(int g) const {
    int least = kMostInferredRows;
    const std::vector<int> one(static_cast<size_t>(cfg_.shards()), 1);
    for (const Placed& r : ranks_) {
      if (ShardOf(cfg_, CoordOf(cfg_, r.local)) != g) continue;
      const std::vector<PlannedCollective> plan = PlannedFor(m_, plans_, stages_, one, r.local, kFirstCalls);
      const auto p = std::find_if(plan.begin(), plan.end(), [](const PlannedCollective& c) { return !c.routed; });
      const int64_t width = p == plan.end() ? 0 : p->event.shape.back();
      const size_t j = First(*r.trace, std::max<int64_t>(width, 1));
      if (width <= 0 || j >= r.trace->events.size() || r.trace->events[j].op != p->event.op) return 0;
      least = static_cast<int>(
          std::min<int64_t>(least, std::max<int64_t>(0, r.trace->events[j].elements / width / cfg_.shards() - 1)));
    }
    return least == kMostInferredRows ? 0 : least;
  }

  // The rank's first call that is not the engine's bookkeeping (a call of
  // no elements is kept: a DP group may hold no rows).
  static size_t First(const RankTrace& t, int64_t smallest_row) {
    size_t j = 0;
    while (j < t.events.size() && IsBookkeeping(t.events[j], smallest_row) && t.events[j].elements != 0) ++j;
    return j;
  }

  // Whether the rank's trace starts with its plan's first collective at
  // `rows_g` rows in every DP group, comparing only what the rank's own rows
  // decide: an all-gather's own part (or the broadcast from this rank), a
  // sum's whole input. (A rank's first collective may hold other groups'
  // rows too, which are not read yet.)
  bool FirstFits(const Placed& r, int rows_g) const {
    const std::vector<int> rows(static_cast<size_t>(cfg_.shards()), rows_g);
    const std::vector<PlannedCollective> plan = PlannedFor(m_, plans_, stages_, rows, r.local, kFirstCalls);
    const auto p = std::find_if(plan.begin(), plan.end(), [](const PlannedCollective& c) { return !c.routed; });
    if (p == plan.end()) return true;  // nothing to read the batch from
    const std::vector<TraceEvent>& seen = r.trace->events;
    const size_t j = First(*r.trace, std::max<int64_t>(p->event.shape.back(), 1));
    if (j >= seen.size()) return false;
    const TraceEvent& o = seen[j];
    const int64_t want = p->event.elements;
    const size_t n = p->event.group.size();
    if (o.op == p->event.op || (p->event.op == TraceOp::kReduceScatter && o.op == TraceOp::kAllReduce)) {
      return o.elements == want;
    }
    if (p->event.op == TraceOp::kAllGather && o.op == TraceOp::kBroadcast) {
      for (size_t k = j; k < std::min(seen.size(), j + n); ++k) {
        if (seen[k].op == TraceOp::kBroadcast && seen[k].peer == r.trace->rank) return seen[k].elements == want;
      }
    }
    if (p->event.op == TraceOp::kReduceScatter && o.op == TraceOp::kReduce && j + n <= seen.size()) {
      int64_t sum = 0;
      for (size_t k = j; k < j + n; ++k) sum += seen[k].elements;
      return sum == want;
    }
    return false;
  }

  const Model& m_;
  const Pipeline& plans_;
  const ParallelConfig& cfg_;
  std::vector<StageRef> stages_;
  std::vector<Placed> ranks_;
};

// What is left of each rank's trace after a pass, and whether any rank has
// more than bookkeeping left.
bool Leftover(std::vector<RankTrace>& rest, const std::vector<size_t>& consumed) {
  bool more = false;
  for (size_t r = 0; r < rest.size(); ++r) {
    std::vector<TraceEvent>& e = rest[r].events;
    e.erase(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(consumed[r]));
    more = more || !e.empty();
  }
  return more;
}

// Each pass in turn, at its own batch, until one diverges or every rank's
// trace is read: a pass's rank checks are added into `out`.
Status CheckPasses(const Model& m, const Pipeline& plans, const std::vector<Placed>& placed,
                   const TraceCheckOptions& options, TraceCheck& out) {
  std::vector<RankTrace> rest;
  for (const Placed& p : placed) rest.push_back(*p.trace);
  for (const Placed& p : placed) out.ranks.push_back({.rank = p.trace->rank});
  for (int pass = 1; pass <= kMostPasses; ++pass) {
    std::vector<Placed> now = placed;
    for (size_t r = 0; r < now.size(); ++r) now[r].trace = &rest[r];
    const Checker checker(m, plans, now);
    Expected<std::vector<int>> rows = options.group_rows.empty() ? checker.Infer() : options.group_rows;
    if (!rows) {
      if (pass == 1) return rows.error();
      // Calls past the last pass that no batch starts a pass with.
      for (size_t r = 0; r < rest.size(); ++r) {
        if (!rest[r].events.empty()) out.ranks[r].divergence = PastThePlan(rest[r].events.front(), 0);
        if (out.ranks[r].divergence) out.ranks[r].divergence->pass = pass;
      }
      break;
    }
    out.pass_rows.push_back(*rows);
    std::vector<size_t> consumed;
    bool diverged = false;
    for (size_t r = 0; r < now.size(); ++r) {
      Aligned a = checker.Check(now[r], *rows);
      RankCheck& total = out.ranks[r];
      total.planned += a.check.planned;
      total.matched += a.check.matched;
      total.skipped += a.check.skipped;
      for (const std::string& name : a.check.allowances) {
        if (std::find(total.allowances.begin(), total.allowances.end(), name) == total.allowances.end()) {
          total.allowances.push_back(name);
        }
      }
      if (a.check.divergence) {
        total.divergence = std::move(a.check.divergence);
        total.divergence->pass = pass;
        diverged = true;
      }
      consumed.push_back(a.consumed);
    }
    if (diverged || !Leftover(rest, consumed)) break;
  }
  out.group_rows = out.pass_rows.front();
  return Status::Ok();
}

}  // namespace

Expected<TraceCheck> CheckTraces(const Model& m, const Pipeline& plans, std::span<const RankTrace> traces,
                                 const TraceCheckOptions& options) {
  SEAM_CHECK(!plans.empty(), "no plans");
  const ParallelConfig& cfg = plans.front().config();
  const int world = WorldSize(cfg);
  if (options.replicas < 1) return InvalidArgument("a trace check needs at least one replica");
  const int64_t all = int64_t{world} * options.replicas;
  std::vector<Placed> ranks;
  std::set<int> seen;
  for (const RankTrace& t : traces) {
    if (t.rank < 0 || t.rank >= all) {
      return InvalidArgument(fmt::format("the trace holds rank {}; the configuration has {} ranks{}", t.rank, all,
                                         options.replicas > 1 ? fmt::format(" ({} replicas)", options.replicas) : ""));
    }
    if (!seen.insert(t.rank).second) return InvalidArgument(fmt::format("the trace holds rank {} twice", t.rank));
    ranks.push_back({&t, t.rank % world, t.rank / world * world});
  }
  if (ranks.empty()) return InvalidArgument("the trace holds no rank");
  std::sort(ranks.begin(), ranks.end(), [](const Placed& a, const Placed& b) { return a.trace->rank < b.trace->rank; });
  if (!options.group_rows.empty() && static_cast<int>(options.group_rows.size()) != cfg.shards()) {
    return InvalidArgument(BatchShapeError(options.group_rows.size(), cfg));
  }
  TraceCheck out{.inferred = options.group_rows.empty(), .replicas = options.replicas};
  SEAM_RETURN_IF_ERROR(CheckPasses(m, plans, ranks, options, out));
  for (int r = 0; r < all; ++r) {
    if (!seen.contains(r)) out.missing.push_back(r);
  }
  return out;
}

}  // namespace seam

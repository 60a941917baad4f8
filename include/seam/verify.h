// seam/verify.h — the invariants of a bound plan (docs/design.md §5), checked by
// running its steps symbolically: every step's rows, owed sums and groups are
// replayed from the stack entry, and each disagreement is reported with the
// stage, the side, the step and the invariant it breaks.
//
//   std::vector<Violation> v = Verify(plan);
//   if (!v.empty()) std::cerr << Describe(v);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seam/pipeline.h"
#include "seam/plan.h"
#include "seam/plan_walk.h"

namespace seam {

enum class Invariant {
  kResidualRowsAgree = 1,  // both sides of every boundary agree on the residual's rows
  kSumOnce = 2,            // every owed sum completes once, over its group, before any read
  kHandoff = 3,            // a handoff carries the attention rows with all sums complete
  kAwayFromCut = 4,        // stages away from a cut bind as they do uncut
  kCutRejects = 5,         // a cut rejects only what the uncut stack rejects
  kStageRows = 6,          // each stage receives the rows it declared
  kGroupFitsRows = 7,      // collectives name the right group for their rows
  // What a plan must be beyond the seven boundary invariants:
  kWellFormed = 8,    // its header, stages, steps and widths agree with its model and configuration
  kPolicy = 9,        // an FFN's sum completes only by collectives the boundary reduction allows
  kFewestBytes = 10,  // it moves no more bytes than its stages and configuration need
};
inline constexpr int kInvariantCount = 10;
std::string_view InvariantText(Invariant i);

// Where in a plan a violation sits.
enum class Side {
  kHeader,   // the plan's header, or the order of its stages
  kStart,    // from_pp
  kArrival,  // what a stage arrives with
  kEntry,
  kCompute,
  kExit,
  kFinal,    // the last rank's final norm
  kSend,     // to_pp
  kHead,     // the last rank's LM head
  kBinding,  // a stage's binding as a whole (compared with another plan)
  kSeam,     // a seam between two computes that holds no step
};
std::string_view Name(Side s);
Side SideOf(EndKind k);  // a rank's end: its final norm or its send
// The side a part of a line is (seam/plan_walk.h); its end by how the rank ends.
Side SideOf(LinePart part, EndKind end);

struct Violation {
  int pp_rank = 0;
  Variant variant = Variant::kOrdinary;
  int stage = -1;  // model-wide stage index; -1 for the final norm
  Side side = Side::kHeader;
  int step = -1;  // index within the side; -1 for a boundary fact
  Invariant invariant = Invariant::kResidualRowsAgree;
  std::string message;
};

// The invariants of one pipeline rank's plan (1, 2, 3 for its own receive
// and send, 6 to 10).
std::vector<Violation> Verify(const Plan& plan);

// Every rank's invariants, and that each handoff's sends and receives pair
// up slice for slice (invariant 3).
std::vector<Violation> VerifyPipeline(const Pipeline& ranks);
// VerifyPipeline less each rank's own Verify: that the headers make one
// pipeline tiling the layers, and that each handoff pairs up.
std::vector<Violation> VerifyAcrossRanks(const Pipeline& ranks);

// What the checks across ranks read of one rank: the layers it holds and,
// per line, its first and last stage, how many it holds, what its start
// receives and what its end sends. The sweep keeps one per rank segment and
// checks each cut from them without assembling the cut's plans.
struct Transport {
  Operand operand = Operand::kValue;
  Rows rows;
  int width = 0;
  bool operator==(const Transport&) const = default;
};
struct RankEdges {
  // A run of `transports`: one buffer for every line, as the sweep keeps
  // hundreds of thousands of these.
  struct Run {
    uint32_t at = 0;
    uint32_t size = 0;
    bool operator==(const Run&) const = default;
  };
  struct Line {
    Variant variant = Variant::kOrdinary;
    int first_stage = -1;  // -1: the line holds no stage
    int last_stage = -1;
    size_t stages = 0;
    Run receives;  // its start's receives, in order
    Run sends;     // its end's sends, in order
    bool operator==(const Line&) const = default;
  };
  LayerRange layers;
  std::vector<Line> lines;
  std::vector<Transport> transports;
  const Line* line(Variant v) const {  // in the header: the sweep asks it for every rank of every cut
    for (const Line& l : lines) {
      if (l.variant == v) return &l;
    }
    return nullptr;
  }
  std::span<const Transport> Of(Run r) const { return std::span(transports).subspan(r.at, r.size); }
  bool operator==(const RankEdges&) const = default;
};
RankEdges EdgesOf(const Plan& plan);
// VerifyAcrossRanks less the headers' agreement on each rank's number, the
// model and the configuration: that the ranks, in order, hold the layers
// `split` gives them, that stage indices run on, that each handoff pairs up.
std::vector<Violation> VerifyEdges(std::span<const RankEdges* const> ranks, std::span<const LayerRange> split);

// Invariant 4, exactly: every part of every stage binds as it does uncut.
// Two kinds of part may differ. "At the cut", by definition: the entry of a
// receiving rank's first stages (from_pp gathered what arrives) and the exit
// of a stage whose downstream is the handoff (a sending rank's last stage,
// or one followed on its rank only by always-partial attentions); replay,
// policy and bytes check those on the cut plan. "Handed on": an entry whose
// arrival differs, or an exit whose residual rows differ, because of a
// difference further up; these are the exempt parts. Compute and the rows a
// stage computes on are always equal.
struct CutCoverage {
  int64_t stages = 0;            // stage bindings compared
  int64_t parts = 0;             // their entries, computes and exits
  int64_t at_cut_stages = 0;     // stage bindings with a part that differs at the cut
  int64_t at_cut_parts = 0;      // parts that differ at the cut
  int64_t handed_on_stages = 0;  // stage bindings with a part that differs handed on (exempt)
  int64_t handed_on_parts = 0;   // parts that differ handed on (exempt)
  CutCoverage& operator+=(const CutCoverage& o) {
    stages += o.stages;
    parts += o.parts;
    at_cut_stages += o.at_cut_stages;
    at_cut_parts += o.at_cut_parts;
    handed_on_stages += o.handed_on_stages;
    handed_on_parts += o.handed_on_parts;
    return *this;
  }
  bool operator==(const CutCoverage&) const = default;
};
std::vector<Violation> CompareWithUncut(const Plan& uncut, const Pipeline& ranks, CutCoverage* coverage = nullptr);
// CompareWithUncut is these two: each rank's stages against their uncut
// binding, and that the ranks hold every stage of the uncut plan.
std::vector<Violation> CompareRankWithUncut(const Plan& uncut, const Plan& rank, CutCoverage* coverage = nullptr);
std::vector<Violation> CompareStageCounts(const Plan& uncut, const Pipeline& ranks);
std::vector<Violation> CompareStageCounts(const Plan& uncut, std::span<const RankEdges* const> ranks);

std::string Describe(const Violation& v);
std::string Describe(const std::vector<Violation>& violations);  // one per line

}  // namespace seam

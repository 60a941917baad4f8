// Checking one subject (a stack or a catalogue model) under one
// configuration: bound uncut and at every cut, each cut checked for the
// sweep's invariants.
//
// A cut is a list of rank segments, and a rank's lines depend only on its
// own layers, its neighbours and its place in the pipeline (first or not,
// last or not; seam/bind.h), so the same segment recurs across many cuts,
// and across stacks, with the same lines (sweep/segments.h). Each segment
// is bound, verified and compared with the uncut plan once; a cut adds what
// its segments found to what only it can show, read from its segments'
// edges (that its layers tile the stack as its split gives them, that its
// handoffs pair up, that its ranks hold every stage). With `recheck` every
// cut is also bound whole and checked as it stands, and any difference from
// the reused result is a violation: the tests run that to show reuse
// changes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/sweep.h"
#include "seam/verify.h"
#include "sweep/segments.h"

namespace seam::sweep {

struct Unit {
  SweepCounts counts;
  std::vector<std::string> violations;
};

struct Subject {
  std::string label;  // "stack AFE", "model llama"
  Model model;
  // A stack's letters as base-4 digits, which key its segments in a table
  // shared across the stacks of a configuration; empty for a catalogue
  // model, whose segments are its own.
  std::vector<uint8_t> letters;
};

// A segment as a rank of one subject's cuts: what it found alone and
// against the subject's uncut plan. It holds what the enumeration reads of
// its segment, so that a cut reads the subject's ranks, not the table.
struct Rank {
  const Segment* segment = nullptr;
  const Error* rejected = nullptr;  // the segment's rejection; null: it binds
  const RankEdges* edges = nullptr;
  int last_stage = -1;  // the highest stage index of any of its lines; -1: none
  int64_t violations = 0;
  CutCoverage coverage;
};

// The ranks one subject resolved, handed to the next subject checked under
// the same table. Stacks are checked in order, so consecutive ones share
// their first letters: a rank whose segment and neighbours lie within those
// is the same segment, and where the two uncut plans number its stages
// alike it is the same comparison too.
struct Resolved {
  std::vector<uint8_t> letters;  // the subject's; empty: nothing to hand on
  bool uncut_binds = false;
  std::vector<std::vector<int>> uncut;     // its uncut stages' numbers, line by line
  std::vector<std::optional<Rank>> ranks;  // by first layer and last
};

// Whether a rank whose layers end at `last`, of a stack of `layers`,
// resolves as it did in the stack checked before it, where the two stacks'
// letters agree before `letters_alike` and their uncut plans number their
// stages alike below `stages_alike`: its segment's letters and the ones
// beside them lie in the letters alike (it is the same segment; they start
// before its end), and its stages, the highest `last_stage`, in the stages
// alike (the same comparison).
bool ResolvesAlike(int last, int layers, int letters_alike, int stages_alike, int last_stage);

// Invariant 5's comparison of two rejections: the same when they name the
// same stage and rule (and so the same code), whatever else their messages say.
bool SameRule(const Error& a, const Error& b);

// What a cut's checks across its ranks find, read from the ranks' edges in
// order: that their layers tile the stack as `split` gives them, that stage
// indices run on, that each handoff's sends and receives pair up
// (VerifyEdges), and that the ranks hold every stage of the uncut plan
// (CompareStageCounts). Each rank's own checks are its segment's.
std::vector<Violation> CheckAcrossCut(const Plan& uncut, std::span<const RankEdges* const> ranks,
                                      std::span<const LayerRange> split);

// Adds what the checks found to `out`, keeping at most `keep` violations in
// full. `table` holds the segments of `config`: a stack's shared with the
// other stacks checked under it, a catalogue model's its own; `resolved`
// what the last subject checked under it resolved, and on return this
// subject's.
void CheckCuts(const SweepConfig& config, const Subject& subject, int max_pp, bool recheck, size_t keep,
               SegmentTable& table, Resolved& resolved, Unit& out);

}  // namespace seam::sweep

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
#include <string>
#include <vector>

#include "seam/model.h"
#include "seam/sweep.h"
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

// Adds what the checks found to `out`, keeping at most `keep` violations in
// full. `table` holds the segments of `config`: a stack's shared with the
// other stacks checked under it, a catalogue model's its own.
void CheckCuts(const SweepConfig& config, const Subject& subject, int max_pp, bool recheck, size_t keep,
               SegmentTable& table, Unit& out);

}  // namespace seam::sweep

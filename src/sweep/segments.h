// Rank segments bound once and shared: within one subject's cuts, and across
// the stacks of one configuration.
//
// The binder reads, for a pipeline rank, its own layers, the stage on either
// side of them and whether it is the first or the last rank (seam/bind.h).
// So a segment of a stack is the same plan in every cut and in every stack
// that has the same letters on it and beside it at the same layers: it is
// bound, verified and reduced to its edges once per configuration.
// Comparing it with an uncut plan reads the uncut binding of its own stages
// only; those are interned (equal bindings get one number), and each
// comparison is made once per segment and set of uncut stages it meets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "seam/verify.h"

namespace seam::sweep {

// One comparison of a segment with the uncut binding of its stages.
struct Comparison {
  std::vector<int> uncut;  // the uncut stages' numbers, line by line
  int64_t violations = 0;
  CutCoverage coverage;
};

// What a segment is in every cut that holds it. Its plan is not kept (a
// table holds tens of thousands of segments): what the cuts read of it is,
// and the plan is bound again where one is needed.
struct Segment {
  std::optional<Error> rejected;  // why the binder rejects it
  int64_t steps = 0;
  int64_t violations = 0;  // its own Verify
  RankEdges edges;
  struct Line {
    Variant variant = Variant::kOrdinary;
    std::vector<int> stages;  // the indices of its stages
  };
  std::vector<Line> lines;
  std::vector<Comparison> compared;
  std::optional<Plan> kept;  // the plan as bound, where asked for (the sweep's recheck)
};
// The steps a plan replays: what the sweep counts as checked.
int64_t StepsOf(const Plan& plan);
// The segment of a bound (or rejected) plan, keeping the plan if `keep`.
Segment SegmentOf(const Expected<Plan>& plan, bool keep);

// Numbers for uncut stage bindings: equal bindings, equal numbers.
class UncutStages {
 public:
  int Number(Variant v, const StagePlan& s);

 private:
  struct Known {
    StagePlan stage;
    int number;
  };
  std::unordered_map<uint64_t, std::vector<Known>> by_hash_;
  int next_ = 0;
};

// Where a segment is: its layers [first, last) of a subject of `layers`
// layers and, for a stack, the letters on it and beside it (`letters`
// holds the stack's base-4 digits; empty for a catalogue model, whose
// segments are its own).
struct SegmentKey {
  int place = 0;         // first, last, and whether last ends the subject
  uint32_t letters = 0;  // base-4 digits, as many as place implies
  int digits = 0;
};
SegmentKey KeyOf(const std::vector<uint8_t>& letters, int layers, int first, int last);

// The segments of one configuration, and the uncut stages they were
// compared with, by key: a table indexed by place, then letters.
class SegmentTable {
 public:
  Segment* Find(const SegmentKey& key);
  Segment& Insert(const SegmentKey& key, Segment segment);
  UncutStages& uncut() { return uncut_; }

 private:
  std::vector<std::vector<std::unique_ptr<Segment>>> by_place_;
  UncutStages uncut_;
};

}  // namespace seam::sweep

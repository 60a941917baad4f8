// Rank segments bound once and shared: within one subject's cuts, and across
// the stacks of one configuration.
//
// The binder reads, for a pipeline rank, its own layers, the stage on either
// side of them and whether it is the first or the last rank (seam/bind.h).
// So a segment of a stack is the same plan in every cut and in every stack
// that has the same letters on it and beside it at the same layers: it is
// bound, verified and reduced to its edges once per configuration. One with
// the same letters on it elsewhere in a stack, starting the stack or not and
// ending it or not alike, after a stage that writes at the handoff alike,
// binds alike but for the layer numbers, unless a stage beside it refuses it
// (the binder reads the stage after only to refuse, and of the stage before
// only whether it writes at the handoff: CheckRank tells the refusals): it
// is moved there instead (MovedTo).
// Comparing it with an uncut plan reads the uncut binding of its own stages
// only; those are interned (bindings equal but for where they lie get one
// number), and each comparison is made once per segment, or segment it was
// moved from, and set of uncut stages it meets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "seam/verify.h"

namespace seam::sweep {

// One comparison of a segment with the uncut binding of its stages.
struct Comparison {
  RankEdges::Run uncut;  // the uncut stages' numbers, line by line, in the table's keys
  int next = -1;         // the segment's next comparison in the table; -1: none
  int64_t violations = 0;
  CutCoverage coverage;
};

// What a segment is in every cut that holds it. Its plan is not kept (a
// table holds tens of thousands of segments): what the cuts read of it is,
// and the plan is bound again where one is needed. Its stages are those the
// edges name, numbered on from each line's first (the structure check holds
// a plan to that).
// A table holds tens of thousands: what is rare (a rejection, a kept plan)
// is held apart, so that the segments a configuration's cuts read fit in
// cache.
struct Segment {
  std::unique_ptr<const Error> rejected;  // why the binder rejects it; null: it binds
  int64_t steps = 0;
  int64_t violations = 0;  // its own Verify
  RankEdges edges;
  int compared = -1;  // its first comparison in the table; -1: none
  // The segment alike elsewhere in a stack whose comparisons it shares (a
  // comparison reads the uncut stages as numbered without their layers);
  // null: its own.
  Segment* shape = nullptr;
  std::unique_ptr<const Plan> kept;  // the plan as bound, where asked for (the sweep's recheck)
};
// The steps a plan replays: what the sweep counts as checked.
int64_t StepsOf(const Plan& plan);
// The segment of a bound (or rejected) plan, keeping the plan if `keep`.
Segment SegmentOf(const Expected<Plan>& plan, bool keep);

// Numbers for uncut stage bindings: bindings equal but for where they lie
// (stage index and layer), equal numbers. A segment's comparison with the
// uncut stages on its layers reads nothing else of them, so a segment alike
// elsewhere compares alike with stages numbered alike there.
class UncutStages {
 public:
  int Number(Variant v, const StagePlan& s);

 private:
  struct Known {
    Variant variant;
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
// What a stack's segment is wherever it lies: its length, whether it starts
// or ends the stack, the letters on it and, where a stage lies before it,
// whether that stage writes at the handoff (`before_writes`,
// WritesAtHandoff). The binder reads layer numbers only as names, of the
// stage before a rank only that, and of the stage after it nothing but to
// refuse it (CheckRank, which reads both neighbours), so segments with equal
// keys anywhere that CheckRank accepts bind alike but for their layers
// (sweep/cuts.cc checks that under a recheck).
SegmentKey KeyAnywhereOf(const std::vector<uint8_t>& letters, int layers, int first, int last, bool before_writes);
// `alike`, found elsewhere in a stack, as the segment on layers from
// `first`: its edges name its layers and stages there (a stack's layers
// hold one stage each). Not for a rejected segment, whose error names where.
Segment MovedTo(const Segment& alike, int first);

// The segments of one configuration, the uncut stages they were compared
// with and the comparisons made, by key: a table indexed by place, then
// letters. Segments, comparisons and their keys live in blocks the table
// owns, a few allocations for all of them rather than several per segment.
class SegmentTable {
 public:
  Segment* Find(const SegmentKey& key) { return Lookup(by_place_, key); }
  Segment& Insert(const SegmentKey& key, Segment segment);
  // A segment bound with this key anywhere (KeyAnywhereOf), if any; and
  // making `s` the one, in place of none or of one that was refused.
  Segment* FindAnywhere(const SegmentKey& key) { return Lookup(by_shape_, key); }
  void IndexAnywhere(const SegmentKey& key, Segment& s);
  // The comparison of `s` (or of the segment whose comparisons it shares)
  // with the uncut stages numbered `uncut`, if made.
  const Comparison* Compared(const Segment& s, std::span<const int> uncut) const;
  const Comparison& AddComparison(Segment& s, std::span<const int> uncut, int64_t violations,
                                  const CutCoverage& coverage);
  UncutStages& uncut() { return uncut_; }

 private:
  using Index = std::vector<std::vector<Segment*>>;  // by place, then letters
  static Segment* Lookup(const Index& index, const SegmentKey& key);
  // The segment that keeps the comparisons of `s`: itself, or the one it
  // was moved from.
  template <class S>
  static S& ComparedBy(S& s) {
    return s.shape != nullptr ? *s.shape : s;
  }
  static Segment*& Slot(Index& index, const SegmentKey& key);
  static constexpr size_t kBlock = 256;
  Index by_place_;
  Index by_shape_;
  std::vector<std::unique_ptr<Segment[]>> blocks_;
  size_t in_last_block_ = kBlock;
  std::vector<Comparison> comparisons_;
  std::vector<int> keys_;
  UncutStages uncut_;
};

}  // namespace seam::sweep

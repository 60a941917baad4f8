#include "sweep/segments.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <tuple>

#include "seam/error.h"

namespace seam::sweep {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

uint64_t RowsBits(Rows r) { return (r.dp() ? 1u : 0u) | (r.attn_tp() ? 2u : 0u); }

uint64_t Hash(uint64_t h, const std::optional<Rows>& r) { return Mix(h, r ? 4 + RowsBits(*r) : 0); }

uint64_t Hash(uint64_t h, const Boundary& b) {
  h = Hash(h, b.residual);
  if (!b.value) return Mix(h, 0);
  h = Mix(h, 1 + RowsBits(b.value->rows));
  h = Mix(h, static_cast<uint64_t>(b.value->owed));
  return Mix(h, static_cast<uint64_t>(b.value->update));
}

uint64_t Hash(uint64_t h, const std::vector<Step>& steps) {
  h = Mix(h, steps.size());
  for (const Step& s : steps) {
    h = Mix(h, static_cast<uint64_t>(s.kind) | static_cast<uint64_t>(s.operand) << 8 |
                   (s.group ? 1 + static_cast<uint64_t>(*s.group) : 0) << 16 | RowsBits(s.rows_in) << 24 |
                   RowsBits(s.rows_out) << 28 | static_cast<uint64_t>(s.owed_before) << 32 |
                   static_cast<uint64_t>(s.owed_after) << 36);
    h = Mix(h, static_cast<uint64_t>(s.width));
  }
  return h;
}

// What tells stage bindings apart but for where they lie and their line
// (which Number compares); bindings alike (AlikeButWhere) hash equal.
uint64_t Hash(const StagePlan& s) {
  uint64_t h = static_cast<uint64_t>(s.decl.kind);
  h = Hash(Hash(h, s.arrives), s.departs);
  h = Hash(Hash(h, s.input), s.residual);
  return Hash(Hash(Hash(h, s.entry), s.compute), s.exit);
}

// Equal but for the stage index and layer. The structured bindings name
// every field: one added to StagePlan stops this compiling until it is
// compared here.
bool AlikeButWhere(const StagePlan& a, const StagePlan& b) {
  [[maybe_unused]] const auto& [a_index, a_layer, a_decl, a_arrives, a_input, a_residual, a_entry, a_compute, a_exit,
                                a_departs] = a;
  [[maybe_unused]] const auto& [b_index, b_layer, b_decl, b_arrives, b_input, b_residual, b_entry, b_compute, b_exit,
                                b_departs] = b;
  return std::tie(a_decl, a_arrives, a_input, a_residual, a_entry, a_compute, a_exit, a_departs) ==
         std::tie(b_decl, b_arrives, b_input, b_residual, b_entry, b_compute, b_exit, b_departs);
}

}  // namespace

int64_t StepsOf(const Plan& plan) {
  int64_t steps = 0;
  for (const LinePlan& line : plan.lines()) steps += static_cast<int64_t>(StepCount(line));
  return steps;
}

Segment SegmentOf(const Expected<Plan>& plan, bool keep) {
  Segment s;
  if (!plan) {
    s.rejected = std::make_unique<const Error>(plan.error());
    return s;
  }
  s.steps = StepsOf(*plan);
  s.violations = static_cast<int64_t>(Verify(*plan).size());
  s.edges = EdgesOf(*plan);
  if (keep) s.kept = std::make_unique<const Plan>(*plan);
  return s;
}

int UncutStages::Number(Variant v, const StagePlan& s) {
  std::vector<Known>& bucket = by_hash_[Hash(s)];
  for (const Known& k : bucket) {
    if (k.variant == v && AlikeButWhere(k.stage, s)) return k.number;
  }
  bucket.push_back({v, s, next_});
  return next_++;
}

namespace {

// `place` and the letters on [from, to).
SegmentKey WithLetters(int place, const std::vector<uint8_t>& letters, int layers, int from, int to) {
  SegmentKey key{.place = place};
  if (letters.empty()) return key;
  SEAM_CHECK(static_cast<int>(letters.size()) == layers && layers <= 8, "a stack of at most 8 letters");
  // The last letter least significant: the stacks checked one after another
  // differ in their last letters, so their segments lie side by side.
  for (int i = from; i < to; ++i) key.letters = key.letters << 2 | letters[static_cast<size_t>(i)];
  key.digits = to - from;
  return key;
}

void CheckRange(int layers, int first, int last) {
  SEAM_CHECK(first >= 0 && first < last && last <= layers && layers < 64, "a segment of at most 63 layers");
}

}  // namespace

SegmentKey KeyOf(const std::vector<uint8_t>& letters, int layers, int first, int last) {
  CheckRange(layers, first, last);
  // The letters on it and on either side: how many follows from the place.
  return WithLetters(first | last << 6 | static_cast<int>(last == layers) << 12, letters, layers,
                     std::max(first - 1, 0), std::min(last + 1, layers));
}

SegmentKey KeyAnywhereOf(const std::vector<uint8_t>& letters, int layers, int first, int last, bool before_writes) {
  CheckRange(layers, first, last);
  SEAM_CHECK(!letters.empty(), "only a stack's segments are alike elsewhere");
  SEAM_CHECK(first > 0 || !before_writes, "a segment that starts the stack has no stage before it");
  const int place = (last - first) | static_cast<int>(first == 0) << 6 | static_cast<int>(last == layers) << 7 |
                    static_cast<int>(before_writes) << 8;
  // The letters on it; of the stage before it only what the binding reads,
  // and the stage after it not at all: the rejections, which read both,
  // CheckRank tells apart.
  return WithLetters(place, letters, layers, first, last);
}

Segment MovedTo(const Segment& alike, int first) {
  SEAM_CHECK(alike.rejected == nullptr, "a rejection names where it lies: it is bound where it is");
  Segment s{.steps = alike.steps, .violations = alike.violations, .edges = alike.edges};
  const LayerRange was = alike.edges.layers;
  const int by = first - was.first;
  s.edges.layers = {was.first + by, was.last + by};
  for (RankEdges::Line& line : s.edges.lines) {
    if (line.stages == 0) continue;
    SEAM_CHECK(line.first_stage == was.first && line.last_stage == was.last - 1,
               "a stack's layers hold one stage each");
    line.first_stage += by;
    line.last_stage += by;
  }
  return s;
}

Segment* SegmentTable::Lookup(const Index& index, const SegmentKey& key) {
  if (static_cast<size_t>(key.place) >= index.size()) return nullptr;
  const std::vector<Segment*>& slots = index[static_cast<size_t>(key.place)];
  return key.letters < slots.size() ? slots[key.letters] : nullptr;
}

Segment*& SegmentTable::Slot(Index& index, const SegmentKey& key) {
  if (static_cast<size_t>(key.place) >= index.size()) index.resize(static_cast<size_t>(key.place) + 1);
  std::vector<Segment*>& slots = index[static_cast<size_t>(key.place)];
  if (slots.empty()) slots.resize(size_t{1} << (2 * key.digits));
  SEAM_CHECK(slots.size() == size_t{1} << (2 * key.digits), "a place has one number of letters");
  return slots[key.letters];
}

Segment& SegmentTable::Insert(const SegmentKey& key, Segment segment) {
  Segment*& slot = Slot(by_place_, key);
  SEAM_CHECK(slot == nullptr, "a segment is bound once per table");
  if (in_last_block_ == kBlock) {
    blocks_.push_back(std::make_unique<Segment[]>(kBlock));
    in_last_block_ = 0;
  }
  slot = &blocks_.back()[in_last_block_++];
  *slot = std::move(segment);
  return *slot;
}

void SegmentTable::IndexAnywhere(const SegmentKey& key, Segment& s) {
  Segment*& slot = Slot(by_shape_, key);
  SEAM_CHECK(slot == nullptr || slot->rejected != nullptr, "one segment that binds stands for its key anywhere");
  slot = &s;
}

const Comparison* SegmentTable::Compared(const Segment& s, std::span<const int> uncut) const {
  for (int i = ComparedBy(s).compared; i >= 0;) {
    const Comparison& c = comparisons_[static_cast<size_t>(i)];
    if (std::ranges::equal(std::span(keys_).subspan(c.uncut.at, c.uncut.size), uncut)) return &c;
    i = c.next;
  }
  return nullptr;
}

const Comparison& SegmentTable::AddComparison(Segment& segment, std::span<const int> uncut, int64_t violations,
                                              const CutCoverage& coverage) {
  Segment& s = ComparedBy(segment);
  SEAM_CHECK(keys_.size() + uncut.size() <= UINT32_MAX && comparisons_.size() < INT32_MAX, "a table's comparisons fit");
  const RankEdges::Run key{static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(uncut.size())};
  keys_.insert(keys_.end(), uncut.begin(), uncut.end());
  comparisons_.push_back({.uncut = key, .next = s.compared, .violations = violations, .coverage = coverage});
  s.compared = static_cast<int>(comparisons_.size() - 1);
  return comparisons_.back();
}

}  // namespace seam::sweep

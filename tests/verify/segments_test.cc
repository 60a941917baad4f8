// The sweep's shared segments: a key names exactly what a segment's binding
// reads of its stack, interned uncut stage bindings are numbered by
// equality, and a rank is handed from one stack to the next exactly when
// its binding reads the same. (That reuse finds what binding every cut whole finds is
// sweep_test.cc's and sweep_recheck_test.cc's.)
#include "sweep/segments.h"

#include <algorithm>
#include <climits>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "seam/bind.h"
#include "sweep/cuts.h"
#include "testing.h"

namespace seam::sweep {
namespace {

// What a segment's binding reads of a stack: its first and last layer,
// whether it ends the stack, the letters on it and on either side of it.
using Reads = std::tuple<int, int, bool, std::vector<uint8_t>>;

Reads ReadsOf(const std::vector<uint8_t>& letters, int first, int last) {
  const int layers = static_cast<int>(letters.size());
  return {first, last, last == layers,
          std::vector<uint8_t>(letters.begin() + std::max(first - 1, 0), letters.begin() + std::min(last + 1, layers))};
}

std::vector<uint8_t> Letters(int index, int length) {
  std::vector<uint8_t> out(static_cast<size_t>(length));
  for (int i = length - 1; i >= 0; --i, index /= 4) out[static_cast<size_t>(i)] = static_cast<uint8_t>(index % 4);
  return out;
}

// Calls visit(letters, first, last, where) for every segment of every stack
// of up to five letters.
template <class Visit>
void ForEverySegment(Visit&& visit) {
  for (int length = 1; length <= 5; ++length) {
    for (int index = 0; index < 1 << (2 * length); ++index) {
      const std::vector<uint8_t> letters = Letters(index, length);
      for (int first = 0; first < length; ++first) {
        for (int last = first + 1; last <= length; ++last) {
          visit(letters, first, last,
                ::testing::Message() << "stack " << index << " of " << length << " layers " << first << ".." << last);
        }
      }
    }
  }
}

TEST(SegmentKey, IsEqualExactlyWhenTheLayersTheEndAndTheLettersOnAndBesideThemAre) {
  // The table finds a segment by place and letters; how many letters
  // follows from the place.
  std::map<std::pair<int, uint32_t>, Reads> seen;
  std::map<int, int> digits;
  int keys = 0;
  ForEverySegment([&](const std::vector<uint8_t>& letters, int first, int last, const ::testing::Message& where) {
    const SegmentKey k = KeyOf(letters, static_cast<int>(letters.size()), first, last);
    EXPECT_EQ(digits.emplace(k.place, k.digits).first->second, k.digits) << "place " << k.place;
    const auto [it, added] = seen.emplace(std::pair(k.place, k.letters), ReadsOf(letters, first, last));
    keys += added;
    EXPECT_EQ(it->second, ReadsOf(letters, first, last)) << where;
  });
  // Every distinct reading got its own key: as many keys as readings.
  std::set<Reads> readings;
  for (const auto& [key, reads] : seen) readings.insert(reads);
  EXPECT_EQ(readings.size(), seen.size());
  EXPECT_EQ(keys, static_cast<int>(seen.size()));
}

TEST(SegmentKey, AnywhereIsEqualExactlyWhenTheLengthTheEndsTheLettersOnItAndWhetherTheStageBeforeWritesAre) {
  // What a segment's binding reads but for where it lies, for the stage
  // before it but whether it writes at the handoff, and for the stage after
  // it, which only refuses (CheckRank, asked where one alike is found).
  using Anywhere = std::tuple<int, bool, bool, std::vector<uint8_t>, bool>;
  std::map<std::pair<int, uint32_t>, Anywhere> seen;
  ForEverySegment([&](const std::vector<uint8_t>& letters, int first, int last, const ::testing::Message& where) {
    const int length = static_cast<int>(letters.size());
    for (bool writes : {false, true}) {
      if (first == 0 && writes) continue;  // no stage before it
      const SegmentKey k = KeyAnywhereOf(letters, length, first, last, writes);
      const Anywhere reads{last - first, first == 0, last == length,
                           std::vector<uint8_t>(letters.begin() + first, letters.begin() + last), writes};
      EXPECT_EQ(seen.emplace(std::pair(k.place, k.letters), reads).first->second, reads) << where;
    }
  });
  std::set<Anywhere> readings;
  for (const auto& [key, reads] : seen) readings.insert(reads);
  EXPECT_EQ(readings.size(), seen.size());
}

// The segment on [first, last) as the sweep binds it: the middle rank of a
// cut with the layers before and after it on ranks of their own.
Segment SegmentAt(std::string_view stack, const ParallelConfig& base, int first, int last) {
  const Model m = testing::StackOf(stack);
  ParallelConfig cfg = base;
  cfg.pp_split.clear();
  if (first > 0) cfg.pp_split.push_back(first);
  cfg.pp_split.push_back(last - first);
  if (last < m.num_layers) cfg.pp_split.push_back(m.num_layers - last);
  cfg.pp = static_cast<int>(cfg.pp_split.size());
  return SegmentOf(Bind(m, cfg, first > 0 ? 1 : 0), false);
}

TEST(MovedTo, ASegmentMovedToWhereItLiesAlikeIsTheSegmentBoundThere) {
  const MoeMode a2a = MoeMode::kA2a;
  for (const ParallelConfig& cfg :
       {ParallelConfig{.tp = 4, .attn_dp = 2}, ParallelConfig{.tp = 2, .input_scattered = true},
        ParallelConfig{.tp = 8, .attn_dp = 2, .dense_tp = 1, .moe = a2a}}) {
    // "AF" after an E and before an A, at layers 1..2 and at 2..3.
    const Segment here = SegmentAt("EAFAF", cfg, 1, 3);
    const Segment there = SegmentAt("FEAFA", cfg, 2, 4);
    ASSERT_EQ(here.rejected, nullptr) << here.rejected->message;
    const Segment moved = MovedTo(here, 2);
    EXPECT_FALSE(here.edges == there.edges);  // they name other layers and stages
    EXPECT_TRUE(moved.edges == there.edges);
    EXPECT_EQ(moved.steps, there.steps);
    EXPECT_EQ(moved.violations, there.violations);
  }
}

TEST(MovedTo, RefusesARejectedSegment) {
  // Its error names the stage where it was bound.
  Segment s;
  s.rejected = std::make_unique<const Error>(InvalidArgument("no"));
  EXPECT_THROW(MovedTo(s, 2), InternalError);
}

TEST(SegmentKey, OfACatalogueModelIsItsLayersAndEndAlone) {
  const SegmentKey a = KeyOf({}, 10, 2, 5);
  const SegmentKey b = KeyOf({}, 10, 2, 10);
  EXPECT_EQ(a.digits, 0);
  EXPECT_NE(a.place, b.place);  // one ends the model, the other does not
  EXPECT_NE(a.place, KeyOf({}, 10, 3, 5).place);
}

TEST(UncutStages, NumbersBindingsAlikeButForWhereTheyLieEquallyAndEveryOtherDifferenceApart) {
  const Plan plan = testing::MustBind(testing::StackOf("AF"), {.tp = 2});
  const LinePlan& line = plan.lines().front();
  ASSERT_GE(line.stages.size(), 2u);
  UncutStages numbers;
  const int first = numbers.Number(Variant::kOrdinary, line.stages[0]);
  EXPECT_EQ(numbers.Number(Variant::kOrdinary, line.stages[0]), first);
  EXPECT_NE(numbers.Number(Variant::kOrdinary, line.stages[1]), first);
  EXPECT_NE(numbers.Number(Variant::kInputScattered, line.stages[0]), first);
  // Where it lies is no difference: a segment compares alike wherever it
  // lies with stages bound alike there.
  StagePlan elsewhere = line.stages[0];
  elsewhere.index += 3;
  elsewhere.layer += 3;
  EXPECT_EQ(numbers.Number(Variant::kOrdinary, elsewhere), first);
  // A difference anywhere in the binding: a step's width, the rows it
  // departs with, the rows it computes on.
  StagePlan wider = line.stages[0];
  ASSERT_FALSE(wider.exit.empty());
  wider.exit.back().width += 1;
  EXPECT_NE(numbers.Number(Variant::kOrdinary, wider), first);
  StagePlan departs = line.stages[0];
  departs.departs.residual = std::nullopt;
  EXPECT_NE(numbers.Number(Variant::kOrdinary, departs), first);
  StagePlan input = line.stages[0];
  input.input = Rows::FromAxes(true, true);
  EXPECT_NE(numbers.Number(Variant::kOrdinary, input), first);
  EXPECT_EQ(numbers.Number(Variant::kOrdinary, line.stages[0]), first);
}

// A rank refused only for the stage after it must not be moved from one
// alike that binds. The sweep's letters are never refused as a neighbour,
// so these stacks put X (a MoE without an all-to-all path, refused under
// --moe a2a wherever it is read) in E's place: every stack of up to four of
// A, M, F and X, each cut bound whole as well, finds what reuse finds.
TEST(Sweep, ARankRefusedForTheStageAfterItIsNotMovedFromOneAlikeThatBinds) {
  const SweepConfig config{"tp4 a2a", {.tp = 4, .moe = MoeMode::kA2a}};
  SegmentTable table;
  Resolved resolved;
  Unit unit;
  for (int length = 1; length <= 4; ++length) {
    for (int index = 0; index < 1 << (2 * length); ++index) {
      const std::vector<uint8_t> letters = Letters(index, length);
      std::string names;
      for (uint8_t l : letters) names += "AMFX"[l];
      CheckCuts(config, {"stack " + names, testing::StackOf(names), letters}, 4, true, 10, table, resolved, unit);
    }
  }
  for (const std::string& v : unit.violations) ADD_FAILURE() << v;
  EXPECT_EQ(unit.counts.violations, 0);
  EXPECT_GT(unit.counts.cuts_bound, 0);           // the stacks without X bind
  EXPECT_GT(unit.counts.rejections_compared, 0);  // the ones with X are refused, cut or not
}

TEST(Resolved, ARankIsHandedToTheNextStackExactlyWhenItsBindingReadsTheSameThere) {
  // The sweep checks the stacks of a length in order: the next one's letters
  // agree with this one's up to the last that changes, and differ from it on.
  for (int length = 1; length <= 5; ++length) {
    for (int index = 0; index + 1 < 1 << (2 * length); ++index) {
      const std::vector<uint8_t> a = Letters(index, length);
      const std::vector<uint8_t> b = Letters(index + 1, length);
      const int alike = static_cast<int>(std::ranges::mismatch(a, b).in1 - a.begin());
      for (int first = 0; first < length; ++first) {
        for (int last = first + 1; last <= length; ++last) {
          EXPECT_EQ(ResolvesAlike(last, length, alike, INT_MAX, -1), ReadsOf(a, first, last) == ReadsOf(b, first, last))
              << "layers [" << first << ", " << last << ") of " << length << ", stack " << index;
        }
      }
    }
  }
}

TEST(Resolved, ARankIsHandedOnOnlyIfTheUncutPlansNumberAllItsStagesAlike) {
  EXPECT_TRUE(ResolvesAlike(2, 4, 4, 2, 1));
  EXPECT_FALSE(ResolvesAlike(2, 4, 4, 1, 1));  // its stage 1 is numbered otherwise
  EXPECT_FALSE(ResolvesAlike(2, 4, 4, 0, 1));
  EXPECT_TRUE(ResolvesAlike(2, 4, 4, 0, -1));  // a rank without stages compares none
}

}  // namespace
}  // namespace seam::sweep

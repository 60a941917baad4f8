#include "seam/layout.h"

#include <gtest/gtest.h>

#include <string>

namespace seam {
namespace {

ParallelConfig Config(int tp, int attn_dp) { return {.tp = tp, .attn_dp = attn_dp}; }

constexpr Rows kFull = Rows::Full();
constexpr Rows kDpOnly = Rows::FromAxes(true, false);
constexpr Rows kAttnTpOnly = Rows::FromAxes(false, true);
constexpr Rows kBoth = Rows::FromAxes(true, true);

// ---------------------------------------------------------------------------
// Rows: construction and normalisation (a size-1 axis is dropped).

TEST(Rows, DefaultIsTheFullRows) { EXPECT_EQ(Rows(), kFull); }

TEST(Rows, FullRowsHaveNoAxes) {
  EXPECT_FALSE(kFull.dp());
  EXPECT_FALSE(kFull.attn_tp());
}

TEST(Rows, AttentionRowsAreShardedOverDp) {
  const Rows at = Rows::Attention(Config(8, 4));
  EXPECT_TRUE(at.dp());
  EXPECT_FALSE(at.attn_tp());
}

TEST(Rows, SliceIsShardedOverDpAndAttnTp) {
  const Rows s = Rows::Slice(Config(8, 4));
  EXPECT_TRUE(s.dp());
  EXPECT_TRUE(s.attn_tp());
}

TEST(Rows, AttentionRowsAreTheFullRowsWithoutAttnDp) { EXPECT_EQ(Rows::Attention(Config(4, 1)), kFull); }

TEST(Rows, SliceDropsTheDpAxisWithoutAttnDp) { EXPECT_EQ(Rows::Slice(Config(4, 1)), kAttnTpOnly); }

TEST(Rows, SliceIsTheAttentionRowsWhenAttnTpIsOne) {
  const ParallelConfig cfg = Config(4, 4);
  EXPECT_EQ(Rows::Slice(cfg), Rows::Attention(cfg));
  EXPECT_EQ(Rows::Slice(cfg), kDpOnly);
}

TEST(Rows, EveryLayoutIsTheFullRowsUnderTpOne) {
  const ParallelConfig cfg = Config(1, 1);
  EXPECT_EQ(Rows::Attention(cfg), kFull);
  EXPECT_EQ(Rows::Slice(cfg), kFull);
}

TEST(Rows, ThreeLayoutsAreDistinctWhenBothAxesExceedOne) {
  const ParallelConfig cfg = Config(6, 3);
  EXPECT_NE(Rows::Attention(cfg), kFull);
  EXPECT_NE(Rows::Slice(cfg), Rows::Attention(cfg));
  EXPECT_NE(Rows::Slice(cfg), kFull);
}

TEST(Rows, FromAxesKeepsEachAxis) {
  EXPECT_TRUE(kDpOnly.dp());
  EXPECT_FALSE(kDpOnly.attn_tp());
  EXPECT_FALSE(kAttnTpOnly.dp());
  EXPECT_TRUE(kAttnTpOnly.attn_tp());
}

// ---------------------------------------------------------------------------
// Rows: With / Without / Covers / Shares.

TEST(RowsWith, AddsTheAxes) {
  EXPECT_EQ(kFull.With(kDpOnly), kDpOnly);
  EXPECT_EQ(kDpOnly.With(kAttnTpOnly), kBoth);
  EXPECT_EQ(kFull.With(kBoth), kBoth);
}

TEST(RowsWith, IsIdempotent) {
  EXPECT_EQ(kBoth.With(kDpOnly), kBoth);
  EXPECT_EQ(kDpOnly.With(kDpOnly), kDpOnly);
}

TEST(RowsWith, AReduceScatterOverAttnTpTakesTheAttentionRowsToTheSlice) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(Rows::Attention(cfg).With(AxesOf(cfg, Group::kAttnTp)), Rows::Slice(cfg));
}

TEST(RowsWith, AReduceScatterOverTpTakesTheFullRowsToTheSlice) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(kFull.With(AxesOf(cfg, Group::kTp)), Rows::Slice(cfg));
}

TEST(RowsWithout, RemovesTheAxes) {
  EXPECT_EQ(kBoth.Without(kAttnTpOnly), kDpOnly);
  EXPECT_EQ(kBoth.Without(kDpOnly), kAttnTpOnly);
  EXPECT_EQ(kBoth.Without(kBoth), kFull);
}

TEST(RowsWithout, IgnoresAxesItDoesNotHave) {
  EXPECT_EQ(kDpOnly.Without(kAttnTpOnly), kDpOnly);
  EXPECT_EQ(kFull.Without(kBoth), kFull);
}

TEST(RowsWithout, AnAllGatherOverAttnTpTakesTheSliceToTheAttentionRows) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(Rows::Slice(cfg).Without(AxesOf(cfg, Group::kAttnTp)), Rows::Attention(cfg));
}

TEST(RowsWithout, ADpGatherTakesTheAttentionRowsToTheFullRows) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(Rows::Attention(cfg).Without(AxesOf(cfg, Group::kDp)), kFull);
}

TEST(RowsCovers, EveryLayoutCoversItself) {
  for (Rows r : {kFull, kDpOnly, kAttnTpOnly, kBoth}) EXPECT_TRUE(r.Covers(r));
}

TEST(RowsCovers, FullRowsCoverEverything) {
  for (Rows r : {kFull, kDpOnly, kAttnTpOnly, kBoth}) EXPECT_TRUE(kFull.Covers(r));
}

TEST(RowsCovers, ACoarserLayoutCoversAFinerOne) {
  EXPECT_TRUE(kDpOnly.Covers(kBoth));
  EXPECT_TRUE(kAttnTpOnly.Covers(kBoth));
}

TEST(RowsCovers, AFinerLayoutDoesNotCoverACoarserOne) {
  EXPECT_FALSE(kBoth.Covers(kDpOnly));
  EXPECT_FALSE(kDpOnly.Covers(kFull));
}

TEST(RowsCovers, DisjointAxesDoNotCoverEachOther) {
  EXPECT_FALSE(kDpOnly.Covers(kAttnTpOnly));
  EXPECT_FALSE(kAttnTpOnly.Covers(kDpOnly));
}

TEST(RowsShares, IsTrueWhenAnAxisIsCommon) {
  EXPECT_TRUE(kBoth.Shares(kDpOnly));
  EXPECT_TRUE(kAttnTpOnly.Shares(kBoth));
}

TEST(RowsShares, IsFalseWhenNoAxisIsCommon) {
  EXPECT_FALSE(kDpOnly.Shares(kAttnTpOnly));
  EXPECT_FALSE(kFull.Shares(kBoth));
  EXPECT_FALSE(kBoth.Shares(kFull));
}

// ---------------------------------------------------------------------------
// Names.

TEST(RowsText, NamesTheThreeLayouts) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(Name(kFull), "full");
  EXPECT_EQ(Name(Rows::Attention(cfg)), "attn");
  EXPECT_EQ(Name(Rows::Slice(cfg)), "slice");
}

TEST(RowsText, NamesTheSliceWithoutAttnDpAsSlice) { EXPECT_EQ(Name(Rows::Slice(Config(4, 1))), "slice"); }

TEST(RowsText, NamesTheSliceAsAttnWhenAttnTpIsOne) { EXPECT_EQ(Name(Rows::Slice(Config(4, 4))), "attn"); }

TEST(RowsText, ParsesEachNameIntoTheLayoutOfTheConfig) {
  for (const ParallelConfig& cfg : {Config(8, 4), Config(4, 1), Config(4, 4), Config(1, 1), Config(6, 3)}) {
    EXPECT_EQ(*ParseRows("full", cfg), kFull);
    EXPECT_EQ(*ParseRows("attn", cfg), Rows::Attention(cfg));
    EXPECT_EQ(*ParseRows("slice", cfg), Rows::Slice(cfg));
  }
}

TEST(RowsText, NameOfAConfigsLayoutParsesBackToIt) {
  for (const ParallelConfig& cfg : {Config(8, 4), Config(4, 1), Config(4, 4), Config(1, 1), Config(6, 3)}) {
    for (Rows r : {kFull, Rows::Attention(cfg), Rows::Slice(cfg)}) {
      Expected<Rows> parsed = ParseRows(Name(r), cfg);
      ASSERT_TRUE(parsed.ok()) << Name(r);
      EXPECT_EQ(*parsed, r) << Name(r) << " under " << Describe(cfg);
    }
  }
}

TEST(RowsText, RejectsAnUnknownLayout) {
  Expected<Rows> parsed = ParseRows("half", Config(4, 2));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message, "unknown row layout 'half'; expected one of: full, attn, slice");
}

TEST(RowsText, RejectsTheEmptyString) {
  Expected<Rows> parsed = ParseRows("", Config(4, 2));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unknown row layout ''; expected one of: full, attn, slice");
}

// ---------------------------------------------------------------------------
// AxesOf.

TEST(AxesOf, AttnTpGroupSpansTheAttnTpAxis) { EXPECT_EQ(AxesOf(Config(8, 4), Group::kAttnTp), kAttnTpOnly); }

TEST(AxesOf, DpGroupSpansTheDpAxis) { EXPECT_EQ(AxesOf(Config(8, 4), Group::kDp), kDpOnly); }

TEST(AxesOf, TpGroupSpansBothAxes) { EXPECT_EQ(AxesOf(Config(8, 4), Group::kTp), kBoth); }

TEST(AxesOf, TpGroupWithoutAttnDpSpansOnlyTheAttnTpAxis) {
  EXPECT_EQ(AxesOf(Config(4, 1), Group::kTp), kAttnTpOnly);
  EXPECT_EQ(AxesOf(Config(4, 1), Group::kDp), kFull);
}

TEST(AxesOf, TpGroupWithAttnTpOneSpansOnlyTheDpAxis) {
  EXPECT_EQ(AxesOf(Config(4, 4), Group::kTp), kDpOnly);
  EXPECT_EQ(AxesOf(Config(4, 4), Group::kAttnTp), kFull);
}

TEST(AxesOf, EveryGroupSpansNothingUnderTpOne) {
  for (Group g : {Group::kAttnTp, Group::kDp, Group::kTp}) {
    EXPECT_EQ(AxesOf(Config(1, 1), g), kFull) << Name(g);
  }
}

TEST(AxesOf, TpAxesAreTheFullRowsToTheSlice) {
  for (const ParallelConfig& cfg : {Config(8, 4), Config(4, 1), Config(4, 4), Config(6, 3)}) {
    EXPECT_EQ(AxesOf(cfg, Group::kTp), Rows::Slice(cfg)) << Describe(cfg);
  }
}

// ---------------------------------------------------------------------------
// GatherGroup.

TEST(GatherGroup, SliceToAttentionGathersOverAttnTp) { EXPECT_EQ(GatherGroup(kBoth, kDpOnly), Group::kAttnTp); }

TEST(GatherGroup, AttentionToFullGathersOverDp) { EXPECT_EQ(GatherGroup(kDpOnly, kFull), Group::kDp); }

TEST(GatherGroup, SliceToFullGathersOverTp) { EXPECT_EQ(GatherGroup(kBoth, kFull), Group::kTp); }

TEST(GatherGroup, SliceToFullWithoutAttnDpGathersOverAttnTp) {
  const ParallelConfig cfg = Config(4, 1);
  EXPECT_EQ(GatherGroup(Rows::Slice(cfg), kFull), Group::kAttnTp);
}

TEST(GatherGroup, RejectsAGatherThatDropsNoAxis) {
  EXPECT_THROW(GatherGroup(kBoth, kBoth), InternalError);
  EXPECT_THROW(GatherGroup(kFull, kFull), InternalError);
}

TEST(GatherGroup, RejectsAGatherToFinerRows) {
  EXPECT_THROW(GatherGroup(kFull, kBoth), InternalError);
  EXPECT_THROW(GatherGroup(kDpOnly, kAttnTpOnly), InternalError);
}

// ---------------------------------------------------------------------------
// RowFraction.

TEST(RowFraction, FullRowsAreTheWholeBatch) { EXPECT_DOUBLE_EQ(RowFraction(Config(8, 4), kFull), 1.0); }

TEST(RowFraction, AttentionRowsAreOneDpGroupsShare) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_DOUBLE_EQ(RowFraction(cfg, Rows::Attention(cfg)), 0.25);
}

TEST(RowFraction, SliceIsOneRanksShareOfTheTpGroup) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_DOUBLE_EQ(RowFraction(cfg, Rows::Slice(cfg)), 0.125);
}

TEST(RowFraction, SplitsOddSizes) {
  const ParallelConfig cfg = Config(6, 3);
  EXPECT_DOUBLE_EQ(RowFraction(cfg, Rows::Attention(cfg)), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(RowFraction(cfg, Rows::Slice(cfg)), 1.0 / 6.0);
}

TEST(RowFraction, SliceWithoutAttnDpIsOneOverTp) {
  const ParallelConfig cfg = Config(4, 1);
  EXPECT_DOUBLE_EQ(RowFraction(cfg, Rows::Slice(cfg)), 0.25);
}

// ---------------------------------------------------------------------------
// Owed sums.

TEST(Owe, KeepsASumOverAGroupOfSeveralRanks) {
  const ParallelConfig cfg = Config(8, 4);
  EXPECT_EQ(Owe(cfg, Owed::kAttnTp), Owed::kAttnTp);
  EXPECT_EQ(Owe(cfg, Owed::kTp), Owed::kTp);
}

TEST(Owe, ASumOverOneRankIsAlreadyComplete) {
  const ParallelConfig cfg = Config(4, 4);  // attn_tp = 1
  EXPECT_EQ(Owe(cfg, Owed::kAttnTp), Owed::kNothing);
  EXPECT_EQ(Owe(cfg, Owed::kTp), Owed::kTp);
}

TEST(Owe, EverySumIsCompleteUnderTpOne) {
  const ParallelConfig cfg = Config(1, 1);
  EXPECT_EQ(Owe(cfg, Owed::kAttnTp), Owed::kNothing);
  EXPECT_EQ(Owe(cfg, Owed::kTp), Owed::kNothing);
}

TEST(Owe, NothingStaysNothing) {
  for (const ParallelConfig& cfg : {Config(8, 4), Config(1, 1)}) {
    EXPECT_EQ(Owe(cfg, Owed::kNothing), Owed::kNothing);
  }
}

TEST(GroupOf, NamesTheGroupAnOwedSumRunsOver) {
  EXPECT_EQ(GroupOf(Owed::kAttnTp), Group::kAttnTp);
  EXPECT_EQ(GroupOf(Owed::kTp), Group::kTp);
}

TEST(GroupOf, RejectsACompleteValue) { EXPECT_THROW(GroupOf(Owed::kNothing), InternalError); }

TEST(OwedText, NamesEachSum) {
  EXPECT_EQ(Name(Owed::kNothing), "-");
  EXPECT_EQ(Name(Owed::kAttnTp), "attn_tp");
  EXPECT_EQ(Name(Owed::kTp), "tp");
}

TEST(OwedText, NamesRoundTrip) {
  for (Owed o : {Owed::kNothing, Owed::kAttnTp, Owed::kTp}) {
    Expected<Owed> parsed = ParseOwed(Name(o));
    ASSERT_TRUE(parsed.ok()) << Name(o);
    EXPECT_EQ(*parsed, o);
  }
}

TEST(OwedText, RejectsAnUnknownSumWithTheChoices) {
  Expected<Owed> parsed = ParseOwed("dp");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  // The article is the shared ParseEnum's ("a {what}"), not grammatical here.
  EXPECT_EQ(parsed.error().message, "unknown owed sum 'dp'; expected one of: -, attn_tp, tp");
}

}  // namespace
}  // namespace seam

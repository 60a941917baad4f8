#include "seam/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace seam {
namespace {

ParallelConfig Config(int tp, int attn_dp, int dense_tp = 0) {
  return {.tp = tp, .attn_dp = attn_dp, .dense_tp = dense_tp};
}

void ExpectInvalid(const ParallelConfig& cfg, const std::string& message) {
  const Status s = Validate(cfg);
  ASSERT_FALSE(s.ok()) << Describe(cfg);
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(s.error().message, message);
}

// ---------------------------------------------------------------------------
// Validate: accepted configurations.

TEST(Validate, AcceptsTheDefaultConfig) { EXPECT_TRUE(Validate(ParallelConfig{}).ok()); }

TEST(Validate, AcceptsEveryDivisorOfTpAsAttnDp) {
  for (int attn_dp : {1, 2, 4, 8}) {
    EXPECT_TRUE(Validate(Config(8, attn_dp)).ok()) << "attn_dp=" << attn_dp;
  }
}

TEST(Validate, AcceptsOddSizesWhereAttnDpDividesTp) {
  EXPECT_TRUE(Validate(Config(6, 3, 2)).ok());
  EXPECT_TRUE(Validate(Config(6, 2, 3)).ok());
  EXPECT_TRUE(Validate(Config(3, 1)).ok());
}

TEST(Validate, AcceptsEachOfTheThreeDenseWidths) {
  EXPECT_TRUE(Validate(Config(8, 2, 8)).ok());  // the TP group
  EXPECT_TRUE(Validate(Config(8, 2, 4)).ok());  // the attention-TP group
  EXPECT_TRUE(Validate(Config(8, 2, 1)).ok());  // one rank
}

TEST(Validate, AcceptsDenseTpZeroAsTheWholeTpGroup) { EXPECT_TRUE(Validate(Config(4, 2, 0)).ok()); }

TEST(Validate, AcceptsInputScatteredWithTpAboveOneAndNoAttnDp) {
  ParallelConfig cfg = Config(4, 1);
  cfg.input_scattered = true;
  EXPECT_TRUE(Validate(cfg).ok());
}

// Whether a2a MoE or a fully-DP dense FFN can serve input-scattered batches
// depends on the model's stages, so the binder decides it, not Validate.
TEST(Validate, LeavesStageDependentInputScatteredChecksToTheBinder) {
  ParallelConfig cfg = Config(4, 1, 1);
  cfg.input_scattered = true;
  cfg.moe = MoeMode::kA2a;
  EXPECT_TRUE(Validate(cfg).ok());
}

TEST(Validate, AcceptsEveryMoeModeAndReduction) {
  for (MoeMode m : {MoeMode::kTp, MoeMode::kA2a}) {
    for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
      ParallelConfig cfg = Config(4, 2, 1);
      cfg.moe = m;
      cfg.reduction = r;
      EXPECT_TRUE(Validate(cfg).ok()) << Describe(cfg);
    }
  }
}

// ---------------------------------------------------------------------------
// Validate: sizes.

TEST(Validate, RejectsZeroTp) { ExpectInvalid(Config(0, 1), "tp=0 must be at least 1"); }

TEST(Validate, RejectsNegativeTp) { ExpectInvalid(Config(-2, 1), "tp=-2 must be at least 1"); }

TEST(Validate, RejectsZeroAttnDp) { ExpectInvalid(Config(4, 0), "attn_dp=0 must be at least 1"); }

TEST(Validate, RejectsNegativeAttnDp) { ExpectInvalid(Config(4, -3), "attn_dp=-3 must be at least 1"); }

TEST(Validate, RejectsZeroPp) {
  ParallelConfig cfg = Config(4, 1);
  cfg.pp = 0;
  ExpectInvalid(cfg, "pp=0 must be at least 1");
}

TEST(Validate, RejectsNegativePp) {
  ParallelConfig cfg = Config(4, 1);
  cfg.pp = -5;
  ExpectInvalid(cfg, "pp=-5 must be at least 1");
}

TEST(Validate, RejectsNegativeDenseTp) {
  ExpectInvalid(Config(4, 1, -7), "dense_tp=-7 must be at least 1 (or 0 for the TP group's width)");
}

TEST(Validate, ReportsTpBeforeAttnDpWhenBothAreBad) { ExpectInvalid(Config(0, 0), "tp=0 must be at least 1"); }

// ---------------------------------------------------------------------------
// Validate: attn_dp must divide tp.

TEST(Validate, RejectsAttnDpThatDoesNotDivideTp) {
  ExpectInvalid(Config(6, 4), "tp=6 is not divisible by attn_dp=4; attn_dp must divide tp (divisors of 6: 1, 2, 3, 6)");
}

TEST(Validate, RejectsAttnDpLargerThanTp) {
  ExpectInvalid(Config(4, 8), "tp=4 is not divisible by attn_dp=8; attn_dp must divide tp (divisors of 4: 1, 2, 4)");
}

TEST(Validate, ListsTheDivisorsOfAPrimeTp) {
  ExpectInvalid(Config(7, 2), "tp=7 is not divisible by attn_dp=2; attn_dp must divide tp (divisors of 7: 1, 7)");
}

// ---------------------------------------------------------------------------
// Validate: dense_tp must be tp, attn_tp or 1.

TEST(Validate, RejectsDenseTpThatIsNoGroupWidth) {
  ExpectInvalid(Config(8, 2, 2),
                "dense_tp=2 is not a width a dense FFN can run at here; use tp=8 (the TP group), "
                "attn_tp=4 (the attention-TP group) or 1 (fully data-parallel)");
}

TEST(Validate, RejectsDenseTpWiderThanTp) {
  ExpectInvalid(Config(4, 1, 8),
                "dense_tp=8 is not a width a dense FFN can run at here; use tp=4 (the TP group) or 1 "
                "(fully data-parallel)");
}

TEST(Validate, RejectsDenseTpThatDividesTpButIsNotAttnTp) {
  ExpectInvalid(Config(6, 3, 3),
                "dense_tp=3 is not a width a dense FFN can run at here; use tp=6 (the TP group), "
                "attn_tp=2 (the attention-TP group) or 1 (fully data-parallel)");
}

// ---------------------------------------------------------------------------
// Validate: input-scattered batches.

TEST(Validate, RejectsInputScatteredWithTpOne) {
  ParallelConfig cfg = Config(1, 1);
  cfg.input_scattered = true;
  ExpectInvalid(cfg,
                "input-scattered batches need tp > 1 (tp=1 has no slice to scatter onto); "
                "raise --tp or drop --input-scattered");
}

TEST(Validate, RejectsInputScatteredWithAttnDp) {
  ParallelConfig cfg = Config(8, 2);
  cfg.input_scattered = true;
  ExpectInvalid(cfg,
                "input-scattered batches need attn_dp=1 (attn_dp=2): the reduce-scatter at each "
                "attention entry runs over the whole TP group, which spans other DP groups' requests; "
                "drop --attn-dp or --input-scattered");
}

// ---------------------------------------------------------------------------
// Validate: pipeline ranks and the layer split.

TEST(Validate, AcceptsSeveralPipelineRanks) {
  ParallelConfig cfg = Config(4, 1);
  cfg.pp = 2;
  EXPECT_TRUE(Validate(cfg).ok());
  cfg.pp_split = {1, 3};
  EXPECT_TRUE(Validate(cfg).ok());
}

TEST(Validate, RejectsASplitThatNamesAnotherNumberOfRanks) {
  ParallelConfig cfg = Config(4, 1);
  cfg.pp_split = {4};
  cfg.pp = 2;
  ExpectInvalid(cfg, "the layer split 4 names 1 pipeline ranks but pp=2; give one layer count per rank");
}

TEST(Validate, RejectsASplitThatGivesARankNoLayers) {
  ParallelConfig cfg = Config(4, 1);
  cfg.pp = 2;
  cfg.pp_split = {0, 4};
  ExpectInvalid(cfg, "the layer split 0+4 gives pipeline rank 0 0 layers; every rank needs at least one layer");
}

// ---------------------------------------------------------------------------
// DenseWidthOf and the derived sizes.

TEST(DenseWidthOf, DefaultIsTheWholeTpGroup) { EXPECT_EQ(DenseWidthOf(Config(8, 2)), DenseWidth::kTp); }

TEST(DenseWidthOf, DenseTpEqualToTpIsTheTpGroup) { EXPECT_EQ(DenseWidthOf(Config(8, 2, 8)), DenseWidth::kTp); }

TEST(DenseWidthOf, DenseTpEqualToAttnTpIsTheAttnTpGroup) {
  EXPECT_EQ(DenseWidthOf(Config(8, 2, 4)), DenseWidth::kAttnTp);
  EXPECT_EQ(DenseWidthOf(Config(6, 3, 2)), DenseWidth::kAttnTp);
}

TEST(DenseWidthOf, DenseTpOneIsOneRank) { EXPECT_EQ(DenseWidthOf(Config(8, 2, 1)), DenseWidth::kRank); }

TEST(DenseWidthOf, PrefersTheTpGroupWhenAttnTpEqualsTp) { EXPECT_EQ(DenseWidthOf(Config(4, 1, 4)), DenseWidth::kTp); }

TEST(DenseWidthOf, PrefersTheTpGroupWhenTpIsOne) { EXPECT_EQ(DenseWidthOf(Config(1, 1, 1)), DenseWidth::kTp); }

TEST(DenseWidthOf, PrefersOneRankWhenAttnTpIsOne) { EXPECT_EQ(DenseWidthOf(Config(4, 4, 1)), DenseWidth::kRank); }

TEST(ParallelConfig, AttnTpIsTpOverAttnDp) {
  EXPECT_EQ(Config(8, 4).attn_tp(), 2);
  EXPECT_EQ(Config(6, 3).attn_tp(), 2);
  EXPECT_EQ(Config(6, 1).attn_tp(), 6);
}

TEST(ParallelConfig, DenseTpSizeResolvesZeroToTp) {
  EXPECT_EQ(Config(8, 2, 0).dense_tp_size(), 8);
  EXPECT_EQ(Config(8, 2, 4).dense_tp_size(), 4);
}

TEST(ParallelConfig, ReductionAllowsTheCollectivesItNames) {
  ParallelConfig cfg;
  cfg.reduction = Reduction::kAr;
  EXPECT_FALSE(cfg.allows_reduce_scatter());
  EXPECT_FALSE(cfg.allows_reduce_scatterv());
  cfg.reduction = Reduction::kRs;
  EXPECT_TRUE(cfg.allows_reduce_scatter());
  EXPECT_FALSE(cfg.allows_reduce_scatterv());
  cfg.reduction = Reduction::kRsv;
  EXPECT_FALSE(cfg.allows_reduce_scatter());
  EXPECT_TRUE(cfg.allows_reduce_scatterv());
  cfg.reduction = Reduction::kRsRsv;
  EXPECT_TRUE(cfg.allows_reduce_scatter());
  EXPECT_TRUE(cfg.allows_reduce_scatterv());
}

// ---------------------------------------------------------------------------
// Describe.

TEST(Describe, SummarisesTheDefaultConfig) {
  EXPECT_EQ(Describe(ParallelConfig{}), "tp=1 attn_dp=1 (attn_tp=1) dense_tp=1 moe=tp reduction=ar pp=1");
}

TEST(Describe, ShowsAttnTpAndTheResolvedDenseWidth) {
  ParallelConfig cfg = Config(8, 4);
  cfg.moe = MoeMode::kA2a;
  cfg.reduction = Reduction::kRsv;
  EXPECT_EQ(Describe(cfg), "tp=8 attn_dp=4 (attn_tp=2) dense_tp=8 moe=a2a reduction=rsv pp=1");
}

TEST(Describe, ShowsAnExplicitDenseTp) {
  EXPECT_EQ(Describe(Config(6, 3, 2)), "tp=6 attn_dp=3 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=1");
}

TEST(Describe, MarksInputScatteredBatches) {
  ParallelConfig cfg = Config(4, 1);
  cfg.input_scattered = true;
  cfg.reduction = Reduction::kRsRsv;
  EXPECT_EQ(Describe(cfg), "tp=4 attn_dp=1 (attn_tp=4) dense_tp=4 moe=tp reduction=rs+rsv input-scattered pp=1");
}

TEST(Describe, NamesAnExpertGroupApartFromTp) {
  ParallelConfig cfg = Config(8, 2);
  cfg.moe = MoeMode::kA2a;
  cfg.ep = 4;
  EXPECT_EQ(Describe(cfg), "tp=8 attn_dp=2 (attn_tp=4) dense_tp=8 moe=a2a ep=4 reduction=ar pp=1");
  cfg.ep = 8;  // the TP group itself
  EXPECT_EQ(Describe(cfg), "tp=8 attn_dp=2 (attn_tp=4) dense_tp=8 moe=a2a reduction=ar pp=1");
}

// ---------------------------------------------------------------------------
// Expert groups.

TEST(ExpertGroup, DividesTheTpGroupOfAnAllToAllMoe) {
  const ParallelConfig ok{.tp = 8, .moe = MoeMode::kA2a, .ep = 2};
  EXPECT_TRUE(Validate(ok).ok());
  EXPECT_EQ(A2aGroup(ok), Group::kEp);
  EXPECT_EQ(A2aGroup({.tp = 8, .moe = MoeMode::kA2a}), Group::kTp);
  EXPECT_EQ(A2aGroup({.tp = 8, .moe = MoeMode::kA2a, .ep = 8}), Group::kTp);
  EXPECT_EQ(Validate({.tp = 8, .moe = MoeMode::kA2a, .ep = 3}).error().message,
            "ep=3 does not divide tp=8; the expert groups split the TP group (divisors of 8: 1, 2, 4, 8)");
  EXPECT_EQ(Validate({.tp = 8, .moe = MoeMode::kTp, .ep = 2}).error().message,
            "ep=2 needs --moe a2a: a TP MoE splits every expert over the whole TP group and completes its sum "
            "there, so no expert group of its own exists");
  EXPECT_EQ(Validate({.tp = 8, .moe = MoeMode::kA2a, .ep = -1}).error().message,
            "ep=-1 must be at least 1 (or 0 for the TP group)");
  // ep equal to tp is the default under either MoE mode.
  EXPECT_TRUE(Validate({.tp = 8, .moe = MoeMode::kTp, .ep = 8}).ok());
}

TEST(ExpertGroup, IsConsecutiveTpRanksAcrossAttentionDpGroups) {
  const ParallelConfig cfg{.tp = 8, .attn_dp = 4, .moe = MoeMode::kA2a, .ep = 4, .pp = 2};
  EXPECT_EQ(GroupRanks(cfg, Group::kEp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(GroupRanks(cfg, Group::kEp, 9), (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(GroupSize(cfg, Group::kEp), 4);
}

TEST(Describe, ShowsThePipelineSplit) {
  ParallelConfig cfg = Config(2, 1);
  cfg.pp = 2;
  cfg.pp_split = {1, 3};
  EXPECT_EQ(Describe(cfg), "tp=2 attn_dp=1 (attn_tp=2) dense_tp=2 moe=tp reduction=ar pp=2 pp_split=1+3");
}

// ---------------------------------------------------------------------------
// Names and parsing.

TEST(MoeModeText, NamesRoundTrip) {
  for (MoeMode m : {MoeMode::kTp, MoeMode::kA2a}) {
    Expected<MoeMode> parsed = ParseMoeMode(Name(m));
    ASSERT_TRUE(parsed.ok()) << Name(m);
    EXPECT_EQ(*parsed, m);
  }
}

TEST(MoeModeText, NamesAreTheFlagValues) {
  EXPECT_EQ(Name(MoeMode::kTp), "tp");
  EXPECT_EQ(Name(MoeMode::kA2a), "a2a");
}

TEST(MoeModeText, RejectsAnUnknownModeWithTheChoices) {
  Expected<MoeMode> parsed = ParseMoeMode("ep");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message, "unknown MoE mode 'ep'; expected one of: tp, a2a");
}

TEST(MoeModeText, IsCaseSensitive) { EXPECT_FALSE(ParseMoeMode("A2A").ok()); }

TEST(ReductionText, NamesRoundTrip) {
  for (Reduction r : {Reduction::kAr, Reduction::kRs, Reduction::kRsv, Reduction::kRsRsv}) {
    Expected<Reduction> parsed = ParseReduction(Name(r));
    ASSERT_TRUE(parsed.ok()) << Name(r);
    EXPECT_EQ(*parsed, r);
  }
}

TEST(ReductionText, NamesAreTheFlagValues) {
  EXPECT_EQ(Name(Reduction::kAr), "ar");
  EXPECT_EQ(Name(Reduction::kRs), "rs");
  EXPECT_EQ(Name(Reduction::kRsv), "rsv");
  EXPECT_EQ(Name(Reduction::kRsRsv), "rs+rsv");
}

TEST(ReductionText, RejectsAnUnknownReductionWithTheChoices) {
  Expected<Reduction> parsed = ParseReduction("rsv+rs");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message, "unknown boundary reduction 'rsv+rs'; expected one of: ar, rs, rsv, rs+rsv");
}

TEST(GroupText, NamesRoundTrip) {
  for (Group g : kEveryGroup) {
    Expected<Group> parsed = ParseGroup(Name(g));
    ASSERT_TRUE(parsed.ok()) << Name(g);
    EXPECT_EQ(*parsed, g);
  }
}

TEST(GroupText, NamesAreShort) {
  EXPECT_EQ(Name(Group::kAttnTp), "attn_tp");
  EXPECT_EQ(Name(Group::kDp), "dp");
  EXPECT_EQ(Name(Group::kTp), "tp");
}

TEST(GroupText, RejectsAnUnknownGroupWithTheChoices) {
  Expected<Group> parsed = ParseGroup("moe");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(parsed.error().message, "unknown group 'moe'; expected one of: attn_tp, dp, tp, pp, ep, cp, dcp");
}

TEST(GroupText, RejectsTheEmptyString) {
  Expected<Group> parsed = ParseGroup("");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unknown group ''; expected one of: attn_tp, dp, tp, pp, ep, cp, dcp");
}

// ---------------------------------------------------------------------------
// Rank geometry. The oracle below is written independently of the library:
// it enumerates coordinates and applies the Megatron-style formula
//   global rank = pp_rank * tp + dp_rank * attn_tp + attn_tp_rank.

struct OracleRank {
  int global = 0;
  RankCoord coord;
};

// SGLang's order, attention TP fastest: (pp, dp, cp, attn_tp).
std::vector<OracleRank> OracleRanks(int tp, int attn_dp, int pp, int cp = 1) {
  const int attn_tp = tp / attn_dp / cp;
  std::vector<OracleRank> out;
  int global = 0;
  for (int p = 0; p < pp; ++p) {
    for (int d = 0; d < attn_dp; ++d) {
      for (int c = 0; c < cp; ++c) {
        for (int a = 0; a < attn_tp; ++a) {
          out.push_back({global++, {.pp_rank = p, .dp_rank = d, .attn_tp_rank = a, .cp_rank = c}});
        }
      }
    }
  }
  return out;
}

// A rank's place among the TP group's, counted in the oracle's order.
int OracleTpIndex(const RankCoord& c, int attn_tp, int cp) {
  return (c.dp_rank * cp + c.cp_rank) * attn_tp + c.attn_tp_rank;
}

// An expert group is ep consecutive positions of the TP group.
// A DCP group is dcp consecutive positions of one attention-TP group.
bool OracleMember(Group g, const RankCoord& me, const RankCoord& other, int attn_tp, int ep, int cp, int dcp) {
  const bool same_shard = me.dp_rank == other.dp_rank && me.cp_rank == other.cp_rank;
  if (g == Group::kPp) return same_shard && me.attn_tp_rank == other.attn_tp_rank;
  if (me.pp_rank != other.pp_rank) return false;
  switch (g) {
    case Group::kAttnTp: return same_shard;
    case Group::kDp: return me.attn_tp_rank == other.attn_tp_rank;
    case Group::kCp: return me.dp_rank == other.dp_rank && me.attn_tp_rank == other.attn_tp_rank;
    case Group::kDcp: return same_shard && me.attn_tp_rank / dcp == other.attn_tp_rank / dcp;
    case Group::kTp: return true;
    case Group::kEp: return OracleTpIndex(me, attn_tp, cp) / ep == OracleTpIndex(other, attn_tp, cp) / ep;
    case Group::kPp: break;
  }
  return false;
}

// The position a rank holds inside its own group.
int OracleGroupIndex(Group g, const RankCoord& c, int attn_tp, int ep, int cp, int dcp) {
  switch (g) {
    case Group::kAttnTp: return c.attn_tp_rank;
    case Group::kDp: return c.dp_rank * cp + c.cp_rank;
    case Group::kCp: return c.cp_rank;
    case Group::kDcp: return c.attn_tp_rank % dcp;
    case Group::kTp: return OracleTpIndex(c, attn_tp, cp);
    case Group::kEp: return OracleTpIndex(c, attn_tp, cp) % ep;
    case Group::kPp: return c.pp_rank;
  }
  return -1;
}

std::vector<int> OracleGroup(int tp, int attn_dp, int pp, int ep, int cp, int dcp, Group g, const RankCoord& me) {
  std::vector<int> out;
  for (const OracleRank& r : OracleRanks(tp, attn_dp, pp, cp)) {
    if (OracleMember(g, me, r.coord, tp / attn_dp / cp, ep, cp, dcp)) out.push_back(r.global);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Geometry {
  int tp;
  int attn_dp;
  int pp;
  int ep = 0;  // 0: the TP group
  int cp = 1;
  int dcp = 1;
  int ep_size() const { return ep == 0 ? tp : ep; }
  int attn_tp() const { return tp / attn_dp / cp; }
};
void PrintTo(const Geometry& g, std::ostream* os) {
  *os << "tp" << g.tp << " attn_dp" << g.attn_dp << " pp" << g.pp << " ep" << g.ep_size() << " cp" << g.cp << " dcp"
      << g.dcp;
}

class RankGeometry : public ::testing::TestWithParam<Geometry> {
 protected:
  ParallelConfig cfg() const {
    ParallelConfig c = Config(GetParam().tp, GetParam().attn_dp);
    c.pp = GetParam().pp;
    c.ep = GetParam().ep;
    c.cp = GetParam().cp;
    c.dcp = GetParam().dcp;
    c.moe = MoeMode::kA2a;
    return c;
  }
  std::vector<OracleRank> ranks() const {
    return OracleRanks(GetParam().tp, GetParam().attn_dp, GetParam().pp, GetParam().cp);
  }
};

TEST_P(RankGeometry, WorldSizeIsTpTimesPp) {
  EXPECT_EQ(WorldSize(cfg()), GetParam().tp * GetParam().pp);
  EXPECT_EQ(static_cast<int>(ranks().size()), WorldSize(cfg()));
}

TEST_P(RankGeometry, GlobalRankFollowsTheMegatronFormula) {
  for (const OracleRank& r : ranks()) {
    EXPECT_EQ(GlobalRank(cfg(), r.coord), r.global)
        << "pp=" << r.coord.pp_rank << " dp=" << r.coord.dp_rank << " a=" << r.coord.attn_tp_rank;
  }
}

TEST_P(RankGeometry, TpRankIsThePositionInsideThePipelineRank) {
  for (const OracleRank& r : ranks()) {
    EXPECT_EQ(TpRank(cfg(), r.coord), OracleTpIndex(r.coord, GetParam().attn_tp(), GetParam().cp));
    EXPECT_EQ(TpRank(cfg(), r.coord), r.global % GetParam().tp);
  }
}

TEST_P(RankGeometry, CoordOfInvertsGlobalRank) {
  for (const OracleRank& r : ranks()) {
    EXPECT_EQ(CoordOf(cfg(), r.global), r.coord) << "rank " << r.global;
    EXPECT_EQ(GlobalRank(cfg(), CoordOf(cfg(), r.global)), r.global);
  }
}

TEST_P(RankGeometry, CoordOfRejectsRanksOutsideTheWorld) {
  EXPECT_THROW(CoordOf(cfg(), -1), InternalError);
  EXPECT_THROW(CoordOf(cfg(), WorldSize(cfg())), InternalError);
}

TEST_P(RankGeometry, GroupRanksMatchTheOracleForEveryRank) {
  for (Group g : kEveryGroup) {
    for (const OracleRank& r : ranks()) {
      EXPECT_EQ(GroupRanks(cfg(), g, r.global),
                OracleGroup(GetParam().tp, GetParam().attn_dp, GetParam().pp, GetParam().ep_size(), GetParam().cp,
                            GetParam().dcp, g, r.coord))
          << "group " << Name(g) << " rank " << r.global;
    }
  }
}

TEST_P(RankGeometry, GroupRanksHaveTheGroupSize) {
  for (Group g : kEveryGroup) {
    for (const OracleRank& r : ranks()) {
      EXPECT_EQ(static_cast<int>(GroupRanks(cfg(), g, r.global).size()), GroupSize(cfg(), g))
          << "group " << Name(g) << " rank " << r.global;
    }
  }
}

TEST_P(RankGeometry, EachRankSitsAtItsOwnIndexInItsGroup) {
  for (Group g : kEveryGroup) {
    for (const OracleRank& r : ranks()) {
      const std::vector<int> group = GroupRanks(cfg(), g, r.global);
      const int at =
          OracleGroupIndex(g, r.coord, GetParam().attn_tp(), GetParam().ep_size(), GetParam().cp, GetParam().dcp);
      ASSERT_GE(at, 0);
      ASSERT_LT(at, static_cast<int>(group.size()));
      EXPECT_EQ(group[static_cast<size_t>(at)], r.global) << "group " << Name(g) << " rank " << r.global;
    }
  }
}

TEST_P(RankGeometry, GroupsOfOneKindPartitionTheWorld) {
  for (Group g : kEveryGroup) {
    std::vector<int> seen(static_cast<size_t>(WorldSize(cfg())), 0);
    for (const OracleRank& r : ranks()) {
      const std::vector<int> group = GroupRanks(cfg(), g, r.global);
      if (group.front() != r.global) continue;  // count each group once, from its first rank
      for (int member : group) ++seen[static_cast<size_t>(member)];
    }
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "group " << Name(g) << " rank " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, RankGeometry,
                         ::testing::Values(Geometry{8, 4, 1}, Geometry{4, 2, 1}, Geometry{1, 1, 1}, Geometry{6, 3, 1},
                                           Geometry{8, 4, 2}, Geometry{4, 2, 2}, Geometry{1, 1, 2}, Geometry{6, 3, 2},
                                           Geometry{8, 1, 1}, Geometry{8, 8, 1}, Geometry{8, 2, 2, 2},
                                           Geometry{8, 4, 1, 4}, Geometry{4, 1, 2, 1}, Geometry{8, 1, 1, 0, 2},
                                           Geometry{8, 2, 2, 0, 2}, Geometry{8, 1, 2, 4, 4}, Geometry{4, 1, 1, 0, 4},
                                           Geometry{12, 2, 1, 0, 3}, Geometry{8, 1, 1, 0, 1, 2},
                                           Geometry{8, 2, 2, 0, 1, 4}, Geometry{8, 1, 1, 2, 2, 2},
                                           Geometry{8, 1, 2, 0, 1, 8}),
                         [](const ::testing::TestParamInfo<Geometry>& p) {
                           return "tp" + std::to_string(p.param.tp) + "_attn_dp" + std::to_string(p.param.attn_dp) +
                                  "_pp" + std::to_string(p.param.pp) + "_ep" + std::to_string(p.param.ep_size()) +
                                  "_cp" + std::to_string(p.param.cp) + "_dcp" + std::to_string(p.param.dcp);
                         });

// A few spot checks written out by hand, beside the oracle.

TEST(GroupRanks, AttnTpGroupOfRankFiveUnderTp8AttnDp4) {
  EXPECT_EQ(GroupRanks(Config(8, 4), Group::kAttnTp, 5), (std::vector<int>{4, 5}));
}

TEST(GroupRanks, DpGroupOfRankFiveUnderTp8AttnDp4) {
  EXPECT_EQ(GroupRanks(Config(8, 4), Group::kDp, 5), (std::vector<int>{1, 3, 5, 7}));
}

TEST(GroupRanks, TpGroupStaysInsideItsPipelineRank) {
  ParallelConfig cfg = Config(4, 2);
  cfg.pp = 2;
  EXPECT_EQ(GroupRanks(cfg, Group::kTp, 6), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(GroupRanks(cfg, Group::kDp, 6), (std::vector<int>{4, 6}));
  EXPECT_EQ(GroupRanks(cfg, Group::kAttnTp, 6), (std::vector<int>{6, 7}));
}

TEST(GroupRanks, EveryGroupIsTheRankItselfUnderTpOne) {
  ParallelConfig cfg = Config(1, 1);
  cfg.pp = 3;
  for (Group g : {Group::kAttnTp, Group::kDp, Group::kTp}) {
    EXPECT_EQ(GroupRanks(cfg, g, 2), (std::vector<int>{2})) << Name(g);
  }
  EXPECT_EQ(GroupRanks(cfg, Group::kPp, 2), (std::vector<int>{0, 1, 2}));
}

// SGLang's docstring example: tp 8 with attn_cp 2 gives attention-TP groups
// [0-3] [4-7] and CP groups [0,4] [1,5] [2,6] [3,7].
TEST(GroupRanks, CpPeersAreAttentionTpApartAsInSglang) {
  ParallelConfig cfg = Config(8, 1);
  cfg.cp = 2;
  EXPECT_EQ(GroupRanks(cfg, Group::kAttnTp, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(GroupRanks(cfg, Group::kCp, 1), (std::vector<int>{1, 5}));
  EXPECT_EQ(GroupRanks(cfg, Group::kCp, 7), (std::vector<int>{3, 7}));
  EXPECT_EQ(CoordOf(cfg, 6), (RankCoord{.pp_rank = 0, .dp_rank = 0, .attn_tp_rank = 2, .cp_rank = 1}));
}

// Under attention DP and CP, the CP group stays inside its DP group while the
// attention-row peers span every DP group's every CP rank.
TEST(GroupRanks, CpGroupsStayInsideTheirDpGroup) {
  ParallelConfig cfg = Config(8, 2);
  cfg.cp = 2;  // attn_tp 2: shards (dp0 cp0) (dp0 cp1) (dp1 cp0) (dp1 cp1)
  EXPECT_EQ(GroupRanks(cfg, Group::kCp, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(GroupRanks(cfg, Group::kDp, 5), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(GroupRanks(cfg, Group::kAttnTp, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(GroupSize(cfg, Group::kDp), 4);
}

TEST(CoordOf, SplitsAnOddTpGroup) {
  ParallelConfig cfg = Config(6, 3);
  cfg.pp = 2;
  EXPECT_EQ(CoordOf(cfg, 11), (RankCoord{1, 2, 1}));
  EXPECT_EQ(CoordOf(cfg, 4), (RankCoord{0, 2, 0}));
}

TEST(GroupSize, IsTheSizeOfEachRole) {
  const ParallelConfig cfg = Config(6, 3);
  EXPECT_EQ(GroupSize(cfg, Group::kAttnTp), 2);
  EXPECT_EQ(GroupSize(cfg, Group::kDp), 3);
  EXPECT_EQ(GroupSize(cfg, Group::kTp), 6);
}

}  // namespace
}  // namespace seam

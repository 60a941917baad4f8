// Every stage kind under every grid configuration, with `ar` and `rs`: the
// exact entry, compute and exit steps and the residual's rows.
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "testing.h"

namespace seam {
namespace {

using testing::MustBind;
using testing::StackOf;
using testing::StageOf;

const ParallelConfig kTp2{.tp = 2};
const ParallelConfig kTp4Dp2{.tp = 4, .attn_dp = 2};
const ParallelConfig kTp4Dp2Dense1A2a{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};
const ParallelConfig kTp4A2a{.tp = 4, .moe = MoeMode::kA2a};
const ParallelConfig kTp2Scattered{.tp = 2, .input_scattered = true};
constexpr Variant kOrd = Variant::kOrdinary;
constexpr Variant kScat = Variant::kInputScattered;

struct KindCase {
  const char* name;  // what the case guarantees
  const char* stack;
  int stage;
  ParallelConfig cfg;
  Variant variant;
  const char* entry;
  const char* compute;
  const char* exit_ar;
  const char* residual;
  const char* exit_rs = nullptr;   // null: as under ar
  const char* entry_rs = nullptr;  // null: as under ar
};

// Dense FFN: "A F A F", stage 1.
const char kTpFfnEntry[] = "ar+add+norm(attn_tp) full";
const char kTpFfnCompute[] = "compute full owes tp";
const char kDpFfnEntry[] = "ar+add+norm(attn_tp) attn; ag(dp) input attn->full";
const char kDpReturnAr[] = "ar(tp) value full; slice value full->attn";
const char kDpReturnRs[] = "rs(tp) value full->slice; ag(attn_tp) value slice->attn";
const char kSliceEntryDp[] = "rs(attn_tp) value attn->slice; slice residual attn->slice; add slice; norm slice";
const char kScatteredFfnEntry[] =
    "rs(attn_tp) value full->slice; add slice; ag(attn_tp) residual slice->full; norm full";
const char kA2aCompute[] = "a2a-dispatch(tp) input slice; compute slice; a2a-combine(tp) value slice";
// Attention after an FFN: "A F A F", stage 2.
const char kScatteredAttnEntryAr[] = "slice value full->slice; slice residual full->slice; add slice; norm slice";
const char kScatteredAttnEntryRs[] = "rs(tp) value full->slice; slice residual full->slice; add slice; norm slice";
const char kGatherInputEntry[] = "add slice; norm slice; ag(attn_tp) input slice->attn";

const KindCase kCases[] = {
    // ---- dense FFN ----
    {"TpDenseFfnFusesTheAttentionSumAndLeavesItsOwnToTheNextAttention", "A F A F", 1, kTp2, kOrd, kTpFfnEntry,
     kTpFfnCompute, "leave(tp) value full", "full"},
    {"TpDenseFfnUnderAttentionDpGathersOverDpAndReturnsOverDp", "A F A F", 1, kTp4Dp2, kOrd, kDpFfnEntry, kTpFfnCompute,
     kDpReturnAr, "attn", kDpReturnRs},
    {"FullyDataParallelDenseFfnRunsOnItsSliceAfterAReduceScatter", "A F A F", 1, kTp4Dp2Dense1A2a, kOrd, kSliceEntryDp,
     "compute slice", "", "slice"},
    {"TpDenseFfnBesideA2aMoeRunsOnTheFullRows", "A F A F", 1, kTp4A2a, kOrd, kTpFfnEntry, kTpFfnCompute,
     "leave(tp) value full", "full"},
    {"TpDenseFfnOnOrdinaryBatchesOfAnInputScatteredConfig", "A F A F", 1, kTp2Scattered, kOrd, kTpFfnEntry,
     kTpFfnCompute, "leave(tp) value full", "full"},
    {"TpDenseFfnOnInputScatteredBatchesAddsOnTheSliceAndGathersTheResidual", "A F A F", 1, kTp2Scattered, kScat,
     kScatteredFfnEntry, kTpFfnCompute, "ar(tp) value full", "full", "leave(tp) value full"},
    // ---- sparse FFN ----
    {"TpMoeFusesTheAttentionSumAndLeavesItsOwn", "A E A F", 1, kTp2, kOrd, kTpFfnEntry, kTpFfnCompute,
     "leave(tp) value full", "full"},
    {"TpMoeUnderAttentionDpReturnsOverDp", "A E A F", 1, kTp4Dp2, kOrd, kDpFfnEntry, kTpFfnCompute, kDpReturnAr, "attn",
     kDpReturnRs},
    {"A2aMoeDispatchesFromItsSliceAndHandsItOnComplete", "A E A F", 1, kTp4Dp2Dense1A2a, kOrd, kSliceEntryDp,
     kA2aCompute, "", "slice"},
    {"A2aMoeWithoutAttentionDpSlicesTheFullRows", "A E A F", 1, kTp4A2a, kOrd,
     "rs(attn_tp) value full->slice; slice residual full->slice; add slice; norm slice", kA2aCompute, "", "slice"},
    {"TpMoeOnOrdinaryBatchesOfAnInputScatteredConfig", "A E A F", 1, kTp2Scattered, kOrd, kTpFfnEntry, kTpFfnCompute,
     "leave(tp) value full", "full"},
    {"TpMoeOnInputScatteredBatchesAddsOnTheSliceAndGathersTheResidual", "A E A F", 1, kTp2Scattered, kScat,
     kScatteredFfnEntry, kTpFfnCompute, "ar(tp) value full", "full", "leave(tp) value full"},
    // ---- always-partial attention ----
    {"AttentionFusesTheTpFfnSumAndLeavesItsOwn", "A F A F", 2, kTp2, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp", "leave(attn_tp) value full", "full"},
    {"AttentionUnderAttentionDpAddsTheReturnedRowsAndLeavesItsSum", "A F A F", 2, kTp4Dp2, kOrd, "add attn; norm attn",
     "compute attn owes attn_tp", "leave(attn_tp) value attn", "attn"},
    {"AttentionAfterAnFfnOnItsSliceKeepsTheResidualThereAndGathersItsInput", "A F A F", 2, kTp4Dp2Dense1A2a, kOrd,
     kGatherInputEntry, "compute attn owes attn_tp", "leave(attn_tp) value attn", "slice"},
    {"AttentionBesideA2aMoeFusesTheTpFfnSum", "A F A F", 2, kTp4A2a, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp", "leave(attn_tp) value full", "full"},
    {"AttentionOnOrdinaryBatchesOfAnInputScatteredConfig", "A F A F", 2, kTp2Scattered, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp", "leave(attn_tp) value full", "full"},
    {"InputScatteredAttentionTakesItsSliceAndGathersItsQkv", "A F A F", 2, kTp2Scattered, kScat, kScatteredAttnEntryAr,
     "ag(attn_tp) input slice->full; compute full owes attn_tp", "leave(attn_tp) value full", "slice", nullptr,
     kScatteredAttnEntryRs},
    // ---- attention that reduces itself ----
    {"SelfReducingAttentionCompletesItsSumInsideCompute", "A F R F", 2, kTp2, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp; ar(attn_tp) value full", "", "full"},
    {"SelfReducingAttentionUnderAttentionDpReducesOverAttentionTp", "A F R F", 2, kTp4Dp2, kOrd, "add attn; norm attn",
     "compute attn owes attn_tp; ar(attn_tp) value attn", "", "attn"},
    {"SelfReducingAttentionAfterAnFfnOnItsSliceGathersItsInput", "A F R F", 2, kTp4Dp2Dense1A2a, kOrd,
     kGatherInputEntry, "compute attn owes attn_tp; ar(attn_tp) value attn", "", "slice"},
    {"SelfReducingAttentionBesideA2aMoe", "A F R F", 2, kTp4A2a, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp; ar(attn_tp) value full", "", "full"},
    {"SelfReducingAttentionOnOrdinaryBatchesOfAnInputScatteredConfig", "A F R F", 2, kTp2Scattered, kOrd,
     "ar+add+norm(tp) full", "compute full owes attn_tp; ar(attn_tp) value full", "", "full"},
    {"SelfReducingAttentionOnInputScatteredBatchesGathersItsQkv", "A F R F", 2, kTp2Scattered, kScat,
     kScatteredAttnEntryAr, "ag(attn_tp) input slice->full; compute full owes attn_tp; ar(attn_tp) value full", "",
     "slice", nullptr, kScatteredAttnEntryRs},
    // ---- mixer (before an attention) ----
    {"MixerBeforeAnAttentionCarriesItsSumWithoutAttentionDp", "A F M A F", 2, kTp2, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp", "leave(attn_tp) value full", "full"},
    {"MixerBeforeAnAttentionUnderAttentionDpCompletesAtItsExit", "A F M A F", 2, kTp4Dp2, kOrd, "add attn; norm attn",
     "compute attn owes attn_tp", "ar(attn_tp) value attn", "attn"},
    {"MixerWithTheResidualOnTheSliceCompletesOntoTheSlice", "A F M A F", 2, kTp4Dp2Dense1A2a, kOrd, kGatherInputEntry,
     "compute attn owes attn_tp", "rs(attn_tp) value attn->slice", "slice"},
    {"MixerBesideA2aMoeCarriesItsSum", "A F M A F", 2, kTp4A2a, kOrd, "ar+add+norm(tp) full",
     "compute full owes attn_tp", "leave(attn_tp) value full", "full"},
    // ---- no-op ----
    {"NoOpPassesThePendingAddOn", "A F N A F", 2, kTp2, kOrd, "", "", "", ""},
    {"NoOpUnderAttentionDpPassesThePendingAddOn", "A F N A F", 2, kTp4Dp2, kOrd, "", "", "", ""},
    {"NoOpBesideAnFfnOnItsSlicePassesThePendingAddOn", "A F N A F", 2, kTp4Dp2Dense1A2a, kOrd, "", "", "", ""},
    {"NoOpBesideA2aMoePassesThePendingAddOn", "A F N A F", 2, kTp4A2a, kOrd, "", "", "", ""},
    {"NoOpOnOrdinaryBatchesOfAnInputScatteredConfig", "A F N A F", 2, kTp2Scattered, kOrd, "", "", "", ""},
    {"NoOpOnInputScatteredBatchesPassesTheOwedSumOn", "A F N A F", 2, kTp2Scattered, kScat, "", "", "", ""},
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.name; }

class StageKindBinding : public ::testing::TestWithParam<KindCase> {};

TEST_P(StageKindBinding, BindsTheExactStepsUnderArAndRs) {
  const KindCase& c = GetParam();
  for (Reduction r : {Reduction::kAr, Reduction::kRs}) {
    SCOPED_TRACE(std::string("reduction ") + std::string(Name(r)));
    const Plan plan = MustBind(StackOf(c.stack), testing::WithReduction(c.cfg, r));
    const StagePlan& s = StageOf(plan, c.variant, c.stage);
    const bool rs = r == Reduction::kRs;
    EXPECT_EQ(ShortString(s.entry), rs && c.entry_rs ? c.entry_rs : c.entry);
    EXPECT_EQ(ShortString(s.compute), c.compute);
    EXPECT_EQ(ShortString(s.exit), rs && c.exit_rs ? c.exit_rs : c.exit_ar);
    EXPECT_EQ(s.residual ? std::string(Name(*s.residual)) : "", c.residual);
    if (s.decl.kind == StageKind::kNoOp) {
      EXPECT_EQ(s.departs, s.arrives);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, StageKindBinding, ::testing::ValuesIn(kCases),
                         [](const auto& i) { return std::string(i.param.name); });

TEST(StageKindBinding, MixerIsRejectedOnInputScatteredBatches) {
  for (Reduction r : {Reduction::kAr, Reduction::kRs}) {
    const Expected<Plan> p = Bind(StackOf("A F M A F"), testing::WithReduction(kTp2Scattered, r));
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message,
              "stage 2 (mixer, layer 2): a mixer cannot gather its own input from the slice on input-scattered "
              "batches (rule: input-scattered eligibility); drop --input-scattered");
  }
}

}  // namespace
}  // namespace seam

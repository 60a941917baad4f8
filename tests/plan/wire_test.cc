// The wire dtypes: what a row costs in each, and that every byte count of a
// plan (the binder's, the table's and the verifier's independent count)
// follows them.
#include <gtest/gtest.h>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/plan_io.h"
#include "seam/verify.h"
#include "seam/wire.h"
#include "testing.h"

namespace seam {
namespace {

using testing::kFp32Wire;

constexpr WireDtypes kBf16Wire{};
constexpr WireDtypes kFp8Dispatch{.act = WireDtype::kBf16, .dispatch = WireDtype::kFp8};

TEST(Wire, AnFp8RowCarriesOneFp32ScalePerStartedBlockOf128) {
  EXPECT_EQ(RowBytes(WireDtype::kFp8, 7168), 7168 + 4 * 56);  // DeepSeek-V3's hidden: 7392
  EXPECT_EQ(RowBytes(WireDtype::kFp8, 128), 128 + 4);
  EXPECT_EQ(RowBytes(WireDtype::kFp8, 129), 129 + 8);
  EXPECT_EQ(RowBytes(WireDtype::kFp8, 64), 64 + 4);
  EXPECT_EQ(RowBytes(WireDtype::kBf16, 64), 128);
  EXPECT_EQ(RowBytes(WireDtype::kFp16, 64), 128);
  EXPECT_EQ(RowBytes(WireDtype::kFp32, 64), 256);
}

TEST(Wire, ActivationsAreNeverFp8) {
  EXPECT_EQ(Validate(WireDtypes{.act = WireDtype::kFp8, .dispatch = WireDtype::kFp8}).error().message,
            "the activation dtype is bf16, fp16 or fp32: fp8 applies only to the all-to-all dispatch (as DeepEP "
            "sends it)");
  const Expected<Plan> p = Bind(LlamaModel(2), {.tp = 2}, 0, {.wire = {.act = WireDtype::kFp8}});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
}

// Every catalogue model at a config with every kind of collective: a bf16
// plan's every step moves exactly half the fp32 plan's bytes.
TEST(Wire, Bf16HalvesEveryStepOfEveryCatalogueModel) {
  int steps = 0;
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    const ParallelConfig cfg{
        .tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeDispatchesA2a(m) ? MoeMode::kA2a : MoeMode::kTp, .pp = 2};
    const Expected<Pipeline> a = BindPipelineChecked(m, cfg, {.wire = kFp32Wire});
    const Expected<Pipeline> b = BindPipelineChecked(m, cfg, {.wire = kBf16Wire});
    ASSERT_TRUE(a.ok() && b.ok()) << e.name << ": " << (a.ok() ? b.error().message : a.error().message);
    for (size_t r = 0; r < a->size(); ++r) {
      const Plan& x = (*a)[r];
      const Plan& y = (*b)[r];
      ASSERT_EQ(x.lines(), y.lines()) << e.name << ": the steps do not depend on the dtype";
      for (const StagePlan& s : x.lines().front().stages) {
        for (const auto* list : {&s.entry, &s.compute, &s.exit}) {
          for (const Step& step : *list) {
            EXPECT_EQ(BytesPerToken(step, y.header()) * 2, BytesPerToken(step, x.header())) << e.name;
            steps += IsCollective(step.kind) ? 1 : 0;
          }
        }
      }
    }
  }
  EXPECT_GT(steps, 100);
}

// DeepSeek-V2-Lite's tiny shape (hidden 64, top 3) at tp 4,
// attn_dp 2: each rank dispatches its quarter of the rows, three copies each,
// 3/4 of them to other ranks; an fp8 copy is 64 bytes and one 4-byte scale.
TEST(Wire, AnFp8DispatchCountsAScalePerExpertCopyAndTheCombineStaysBf16) {
  const ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a};
  const Plan p = testing::MustBind(DeepseekModel(4, 64, 3), cfg, {.wire = kFp8Dispatch});
  int dispatches = 0;
  for (const StagePlan& s : p.lines().front().stages) {
    for (const Step& step : s.compute) {
      if (step.kind == StepKind::kDispatch) {
        EXPECT_EQ(BytesPerToken(step, p.header()), 0.75 * 0.25 * 3 * (64 + 4));
        ++dispatches;
      }
      if (step.kind == StepKind::kCombine) {
        EXPECT_EQ(BytesPerToken(step, p.header()), 0.75 * 0.25 * 3 * 128);
      }
    }
  }
  EXPECT_EQ(dispatches, 3);
  EXPECT_NE(ToTable(p).find("wire: bf16 activations, fp8 all-to-all dispatch, with an fp32 scale per 128 elements\n"),
            std::string::npos);
}

// The verifier counts the dispatch apart from the binder: a plan whose
// dispatch claims the bf16 bytes while the header says fp8 is caught, and
// the checked binder accepts the fp8 plan of every a2a catalogue model.
TEST(Wire, TheIndependentCountFollowsTheDispatchDtype) {
  for (const CatalogueEntry& e : Catalogue()) {
    const Model m = e.make();
    if (!HasStageKind(m, StageKind::kSparseFfn) || !MoeDispatchesA2a(m)) continue;
    const Expected<Pipeline> p =
        BindPipelineChecked(m, {.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = MoeMode::kA2a}, {.wire = kFp8Dispatch});
    if (!p.ok()) ADD_FAILURE() << e.name << ": " << p.error().message;
  }
  const Plan p = testing::MustBind(DeepseekModel(4, 64, 3), {.tp = 4, .moe = MoeMode::kA2a}, {.wire = kFp8Dispatch});
  // The same steps under a header that moves the dispatch in fp8 but a
  // dispatch width the count does not expect (one row short of top_k).
  std::vector<LinePlan> lines = p.lines();
  for (StagePlan& s : lines.front().stages) {
    for (Step& step : s.compute) {
      if (step.kind == StepKind::kDispatch) step.width -= 64;
    }
  }
  const Plan broken(p.header(), lines);
  EXPECT_NE(Describe(Verify(broken)).find("invariant 10"), std::string::npos) << Describe(Verify(broken));
}

TEST(Wire, TheDtypesSurviveJsonAndText) {
  const Plan p = testing::MustBind(DeepseekModel(4, 64, 3), {.tp = 4, .moe = MoeMode::kA2a}, {.wire = kFp8Dispatch});
  const Expected<Plan> j = PlanFromJson(ToJson(p));
  ASSERT_TRUE(j.ok()) << j.error().message;
  EXPECT_EQ(j->header().wire, kFp8Dispatch);
  const Expected<Plan> t = PlanFromText(ToText(p));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header().wire, kFp8Dispatch);
  EXPECT_EQ(ToText(p).rfind("plan deepseek-v2-lite hidden=64 streams=1 vocab=256 act=bf16 dispatch=fp8 tp=4", 0), 0U);
}

}  // namespace
}  // namespace seam

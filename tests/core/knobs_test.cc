// The knob table (seam/knobs.h): each name once in each form, and the forms
// derived from it writing what they wrote before it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "seam/knobs.h"

namespace seam {
namespace {

TEST(KnobTable, EachNameIsOnceInEachForm) {
  const auto unique = [](auto key) {
    std::set<std::string_view> seen;
    for (const Knob& k : Knobs()) {
      if (!seen.insert(key(k)).second) return false;
    }
    return true;
  };
  EXPECT_TRUE(unique([](const Knob& k) { return k.json; }));
  EXPECT_TRUE(unique([](const Knob& k) { return k.text; }));
  EXPECT_TRUE(unique([](const Knob& k) { return k.python; }));
  EXPECT_TRUE(unique([](const Knob& k) { return k.flag; }));
  for (const Knob& k : Knobs()) {
    EXPECT_TRUE(k.flag.starts_with("--")) << k.flag;
    EXPECT_EQ(k.value_name.empty(), KindOf(k) == KnobKind::kBool) << k.flag << ": a switch alone takes no value";
    EXPECT_EQ(!ChoicesOf(k).empty(), KindOf(k) == KnobKind::kEnum) << k.flag;
    EXPECT_FALSE(k.help.empty()) << k.flag;
  }
}

TEST(KnobTable, SeamsFlagsNameTheTpSizeThenWhatDiffersFromTheDefaultsInTableOrder) {
  EXPECT_EQ(KnobFlags({}), "--tp 1");
  const ParallelConfig widths{.tp = 4, .dense_tp = 4, .moe = MoeMode::kA2a, .ep = 4};  // the TP group's, spelled out
  EXPECT_EQ(KnobFlags(widths), "--tp 4 --moe a2a");
  const ParallelConfig all{.tp = 8,
                           .attn_dp = 2,
                           .dense_tp = 1,
                           .moe = MoeMode::kA2a,
                           .ep = 4,
                           .dp_lm_head = true,
                           .reduction = Reduction::kRsv,
                           .pp = 2,
                           .pp_split = {1, 3}};
  EXPECT_EQ(KnobFlags(all),
            "--tp 8 --attn-dp 2 --dense-tp 1 --moe a2a --ep 4 --dp-lm-head --reduction rsv --pp 2 --pp-split 1+3");
  EXPECT_EQ(Describe(all),
            "tp=8 attn_dp=2 (attn_tp=4) dense_tp=1 moe=a2a ep=4 reduction=rsv dp-lm-head pp=2 pp_split=1+3");
}

TEST(KnobTable, AKnobNotGivenWhoseDefaultFollowsOthersTakesItFromThem) {
  ParallelConfig c{.pp_split = {1, 3}};
  const std::vector<bool> none(Knobs().size(), false);
  Expected<ParallelConfig> completed = CompleteConfig(c, none);
  ASSERT_TRUE(completed.ok()) << completed.error().message;
  EXPECT_EQ(completed->pp, 2);
  std::vector<bool> pp_given = none;
  for (size_t i = 0; i < Knobs().size(); ++i) pp_given[i] = Knobs()[i].json == "pp";
  Expected<ParallelConfig> kept = CompleteConfig(c, pp_given);
  ASSERT_FALSE(kept.ok());
  EXPECT_EQ(kept.error().message, "the layer split 1+3 names 2 pipeline ranks but pp=1; give one layer count per rank");
}

}  // namespace
}  // namespace seam

// Reusing rank segments across a subject's cuts finds what binding every
// cut whole finds: every stack of up to four stages under the sweep's 52
// configurations, and every catalogue model cut into up to four ranks. (The
// release suite runs these; under the sanitizers they are left out with the
// grid, and sweep_test.cc rechecks stacks of up to three stages.)
#include <gtest/gtest.h>

#include <string>

#include "seam/sweep.h"

namespace seam {
namespace {

void ExpectSameCounts(const SweepCounts& a, const SweepCounts& b, const std::string& name) {
  EXPECT_EQ(a.stacks, b.stacks) << name;
  EXPECT_EQ(a.cuts_bound, b.cuts_bound) << name;
  EXPECT_EQ(a.rejected_uncut, b.rejected_uncut) << name;
  EXPECT_EQ(a.violations, b.violations) << name;
  EXPECT_EQ(a.plans_verified, b.plans_verified) << name;
  EXPECT_EQ(a.steps_replayed, b.steps_replayed) << name;
  EXPECT_EQ(a.cut_outcomes, b.cut_outcomes) << name;
  EXPECT_EQ(a.rejections_compared, b.rejections_compared) << name;
  EXPECT_EQ(a.away_from_cut.stages, b.away_from_cut.stages) << name;
  EXPECT_EQ(a.away_from_cut.parts, b.away_from_cut.parts) << name;
  EXPECT_EQ(a.away_from_cut.at_cut_stages, b.away_from_cut.at_cut_stages) << name;
  EXPECT_EQ(a.away_from_cut.at_cut_parts, b.away_from_cut.at_cut_parts) << name;
  EXPECT_EQ(a.away_from_cut.handed_on_stages, b.away_from_cut.handed_on_stages) << name;
  EXPECT_EQ(a.away_from_cut.handed_on_parts, b.away_from_cut.handed_on_parts) << name;
}

TEST(Sweep, ReusingRankSegmentsFindsWhatBindingEveryCutWholeFinds) {
  const SweepOptions reuse{.max_stages = 4, .max_pp = 4, .jobs = 2, .catalogue = false};
  SweepOptions recheck = reuse;
  recheck.recheck = true;
  const Expected<SweepReport> a = Sweep(reuse);
  const Expected<SweepReport> b = Sweep(recheck);
  ASSERT_TRUE(a.ok() && b.ok());
  for (const std::string& v : b->violations) ADD_FAILURE() << v;
  ExpectSameCounts(a->totals, b->totals, "totals");
  ASSERT_EQ(a->per_config.size(), b->per_config.size());
  for (size_t i = 0; i < a->per_config.size(); ++i) {
    ExpectSameCounts(a->per_config[i].second, b->per_config[i].second, a->per_config[i].first);
  }
}

TEST(Sweep, ReusingRankSegmentsOfCatalogueModelsFindsWhatBindingEveryCutWholeFinds) {
  const Expected<SweepReport> r = Sweep({.max_stages = 1, .max_pp = 4, .jobs = 2, .recheck = true});
  ASSERT_TRUE(r.ok());
  for (const std::string& v : r->violations) ADD_FAILURE() << v;
  EXPECT_EQ(r->model_totals.violations, 0);
  EXPECT_GT(r->model_totals.cuts_bound, 0);
}

}  // namespace
}  // namespace seam

// Reusing rank segments across a subject's cuts finds what binding every
// cut whole finds: every stack of up to five stages under the sweep's 52
// configurations, and every catalogue model cut into up to four ranks. (The
// release suite runs these; under the sanitizers they are left out with the
// grid, and sweep_test.cc rechecks stacks of up to three stages.)
#include <gtest/gtest.h>

#include "seam/sweep.h"
#include "verify/sweep_testing.h"

namespace seam {
namespace {

TEST(Sweep, ReusingRankSegmentsFindsWhatBindingEveryCutWholeFinds) {
  testing::ExpectReuseFindsWhatBindingWholeFinds({.max_stages = 5, .max_pp = 4, .jobs = 2, .catalogue = false});
}

TEST(Sweep, ReusingRankSegmentsOfCatalogueModelsFindsWhatBindingEveryCutWholeFinds) {
  const SweepReport r = testing::ExpectReuseFindsWhatBindingWholeFinds({.max_stages = 1, .max_pp = 4, .jobs = 2});
  EXPECT_EQ(r.model_totals.violations, 0);
  EXPECT_GT(r.model_totals.cuts_bound, 0);
}

}  // namespace
}  // namespace seam

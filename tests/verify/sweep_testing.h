// The sweep with segment reuse against the sweep that also binds every cut
// whole (SweepOptions::recheck): no violation, and every count equal, in
// total, per configuration and per catalogue model.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "seam/sweep.h"

namespace seam::testing {

inline void ExpectSameCounts(const SweepCounts& a, const SweepCounts& b, const std::string& name) {
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

// Returns the rechecked report for further checks.
inline SweepReport ExpectReuseFindsWhatBindingWholeFinds(SweepOptions reuse) {
  SweepOptions recheck = reuse;
  recheck.recheck = true;
  const Expected<SweepReport> a = Sweep(reuse);
  const Expected<SweepReport> b = Sweep(recheck);
  EXPECT_TRUE(a.ok() && b.ok());
  if (!a.ok() || !b.ok()) return {};
  for (const std::string& v : b->violations) ADD_FAILURE() << v;
  EXPECT_EQ(b->totals.violations + b->model_totals.violations, 0);
  ExpectSameCounts(a->totals, b->totals, "totals");
  ExpectSameCounts(a->model_totals, b->model_totals, "model totals");
  EXPECT_EQ(a->per_config.size(), b->per_config.size());
  for (size_t i = 0; i < a->per_config.size() && i < b->per_config.size(); ++i) {
    ExpectSameCounts(a->per_config[i].second, b->per_config[i].second, a->per_config[i].first);
  }
  EXPECT_EQ(a->per_model.size(), b->per_model.size());
  for (size_t i = 0; i < a->per_model.size() && i < b->per_model.size(); ++i) {
    ExpectSameCounts(a->per_model[i].second, b->per_model[i].second, a->per_model[i].first);
  }
  return *b;
}

}  // namespace seam::testing

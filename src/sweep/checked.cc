// Binding, then verifying: a violation is a failed check naming every one.
#include "seam/checked.h"

#include "seam/verify.h"

namespace seam {

Expected<Plan> BindChecked(const Model& model, const ParallelConfig& cfg, int pp_rank, const BindOptions& options) {
  Expected<Plan> plan = Bind(model, cfg, pp_rank, options);
  if (!plan) return plan.error();
  const std::vector<Violation> violations = Verify(*plan);
  if (!violations.empty()) return FailedCheck("the bound plan breaks its invariants:\n" + Describe(violations));
  return plan;
}

Expected<Pipeline> BindPipelineChecked(const Model& model, const ParallelConfig& cfg, const BindOptions& options) {
  Expected<Pipeline> ranks = BindPipeline(model, cfg, options);
  if (!ranks) return ranks.error();
  const std::vector<Violation> violations = VerifyPipeline(*ranks);
  if (!violations.empty()) return FailedCheck("the bound pipeline breaks its invariants:\n" + Describe(violations));
  return ranks;
}

}  // namespace seam

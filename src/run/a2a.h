// An a2a MoE's rows on their way to their experts and back: routed and
// packed per TP member (each row with its expert's id), run through this
// rank's experts as they arrive, and folded back into each row's output
// with its routing weights. One exchange per a2a stage, from its dispatch
// to its combine.
#pragma once

#include <utility>
#include <vector>

#include "numerics/stages.h"

namespace seam::exec {

class A2aExchange {
 public:
  // Routes `input`'s rows and packs, per member of `members`, the rows its
  // experts take (a skipped expert passes its row through, here).
  std::vector<Tensor> Pack(const MoeKernel& moe, Tensor input, int members);
  // Runs this rank's experts on the rows it received, per member.
  std::vector<Tensor> RunExperts(const MoeKernel& moe, const std::vector<Tensor>& received) const;
  // Each row's output from the experts' outputs that came `back` (per
  // member, in the order they were sent); with no data (a recording
  // backend) the outputs read as zeros.
  Tensor Fold(const MoeKernel& moe, const std::vector<Tensor>& back, bool has_data, int experts) const;

 private:
  Tensor input_;
  std::vector<Routing> routes_;
  std::vector<std::vector<std::pair<int, int>>> sent_;  // per member: (row, slot) in send order
};

}  // namespace seam::exec

// The seed PR's five defects as plans: each case holds a model, a
// configuration, the plan seam binds for it, and that plan rewritten with the
// old behaviour. Plan-level tests show the verifier catches the old plan;
// value-level tests show running it fails where the bound plan is
// bit-identical to the reference.
#pragma once

#include <functional>
#include <string>

#include "exec/exec_testing.h"

namespace seam::testing {

struct DefectCase {
  std::string name;
  Model model;
  ParallelConfig cfg;
  Variant variant = Variant::kOrdinary;
  Pipeline fixed;
  Pipeline old;
};

// A copy of rank `rank` of `p` with the line of variant `v` edited.
inline Pipeline EditedRank(const Pipeline& p, int rank, Variant v, const std::function<void(LinePlan&)>& edit) {
  Pipeline out = p;
  std::vector<LinePlan> lines = p[static_cast<size_t>(rank)].lines();
  for (LinePlan& l : lines) {
    if (l.variant == v) edit(l);
  }
  out[static_cast<size_t>(rank)] = Plan(p[static_cast<size_t>(rank)].header(), lines);
  return out;
}

inline Step LocalSlice(Operand op, Rows from, Rows to, int width) {
  return {StepKind::kSlice, op, std::nullopt, from, to, Owed::kNothing, Owed::kNothing, width};
}

// (1) ZAYA1's single-stage appends with an a2a MoE: the MoE after the second
// attention rebuilt that attention's edge as a stack entry, assumed the
// residual on the attention rows and sliced it a second time.
inline DefectCase Defect1() {
  DefectCase c{"defect 1", Zaya1Model(6), {.tp = 2, .moe = MoeMode::kA2a}};
  c.fixed = MustBindPipeline(c.model, c.cfg);
  c.old = EditedRank(c.fixed, 0, c.variant, [&](LinePlan& l) {
    l.stages[3].arrives.residual = Rows::Full();
    l.stages[3].entry.insert(l.stages[3].entry.begin() + 1,
                             LocalSlice(Operand::kResidual, Rows::Full(), Rows::Slice(c.cfg), 64));
  });
  return c;
}

// (2) A stack ending on an always-partial attention after an a2a MoE: the
// MoE left the residual on the slice while the final norm read attention rows.
inline DefectCase Defect2() {
  DefectCase c{"defect 2", RunnableStack("AEA"), {.tp = 2, .moe = MoeMode::kA2a}};
  c.fixed = MustBindPipeline(c.model, c.cfg);
  c.old = EditedRank(c.fixed, 0, c.variant, [](LinePlan& l) { l.stages[1].exit.pop_back(); });
  return c;
}

// (3) A later rank on an input-scattered batch: the receiver re-declared the
// sender's sum on what it received (and read the batch off that handle).
inline DefectCase Defect3() {
  DefectCase c{"defect 3", LlamaModel(4), Cut({.tp = 2, .input_scattered = true}, {2, 2}), Variant::kInputScattered};
  c.fixed = MustBindPipeline(c.model, c.cfg);
  c.old = EditedRank(c.fixed, 1, c.variant, [](LinePlan& l) {
    l.start[0].owed_after = Owed::kTp;
    l.start[2].owed_before = l.start[2].owed_after = Owed::kTp;
    // The first entry completes the re-declared sum again.
    l.stages[0].entry.insert(l.stages[0].entry.begin(),
                             Step{StepKind::kAllReduce, Operand::kValue, Group::kTp, Rows::Full(), Rows::Full(),
                                  Owed::kTp, Owed::kNothing, 64});
  });
  return c;
}

// (4) The FFN before a handoff under attention DP with a fully data-parallel
// dense FFN: its exit resolved the residual's rows by another rule than its
// entry, and sliced a residual already on the slice.
inline DefectCase Defect4() {
  DefectCase c{"defect 4", DeepseekModel(4, 64, 3), Cut({.tp = 4, .attn_dp = 2, .dense_tp = 1}, {1, 3})};
  c.fixed = MustBindPipeline(c.model, c.cfg);
  c.old = EditedRank(c.fixed, 0, c.variant, [&](LinePlan& l) {
    l.stages[1].exit.insert(l.stages[1].exit.begin(),
                            LocalSlice(Operand::kResidual, Rows::Attention(c.cfg), Rows::Slice(c.cfg), 64));
  });
  return c;
}

// (5) Nemotron-H cut between a mixer and the FFN after it: to_pp sent the
// mixer's declared sum unreduced.
inline DefectCase Defect5() {
  DefectCase c{"defect 5", NemotronHModel("M-M*M-", 128).value(), Cut({.tp = 2}, {3, 3})};
  c.fixed = MustBindPipeline(c.model, c.cfg);
  c.old = EditedRank(c.fixed, 0, c.variant, [](LinePlan& l) {
    std::vector<Step>& s = l.end.steps;
    s.erase(s.begin());  // no reduce-scatter
    s.insert(s.begin(), Step{StepKind::kSlice, Operand::kValue, std::nullopt, Rows::Full(), s[0].rows_out,
                             Owed::kAttnTp, Owed::kAttnTp, 128});
    s[2].owed_before = s[2].owed_after = Owed::kAttnTp;
  });
  return c;
}

}  // namespace seam::testing

// seam/step_rules.h — what each step kind does to its operand's rows and
// owed sum, stated once beside the step-kind table.
//
// The binder asserts it for every step it emits, the verifier reports it as
// a malformed plan (invariant 8) and the interpreter checks it before it runs
// a step. The verifier's symbolic replay states the invariants apart from this
// (rows agree, sums complete once), so a wrong rule here is still caught.
//
//   if (std::string why = StepRuleError(step, cfg); !why.empty()) ...
#pragma once

#include <string>

#include "seam/plan.h"
#include "seam/topology.h"

namespace seam {

// Empty when the step's own operand, group, rows and owed sums fit its kind;
// otherwise why not, in a sentence.
std::string StepRuleError(const Step& s, const ParallelConfig& cfg);

}  // namespace seam

// Symbolic replay of steps: the state a rank's boundary is in, and the checks
// each step kind makes against it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "seam/verify.h"

namespace seam::verify {

struct State {
  std::optional<ValueFacts> value;
  std::optional<Rows> residual;
  std::optional<Rows> input;
  std::optional<Rows> logits;  // the LM head's output
  Boundary boundary() const { return {value, residual}; }
};

using Report = std::function<void(Invariant, std::string)>;

// Rows a stage's compute reads and the sum its output owes, from its
// declaration alone (independent of how the binder got there).
Rows NeedOf(const StageDecl& d, const ParallelConfig& cfg);
Owed OwesOf(const StageDecl& d, const ParallelConfig& cfg);

// Applies `s` to `state`, reporting each check it fails. The state always
// moves on to what the step claims, so one wrong step is reported once.
// `decl` is the stage the step belongs to (null for the final norm).
void Apply(const ParallelConfig& cfg, const StageDecl* decl, const Step& s, State& state, const Report& report);

}  // namespace seam::verify

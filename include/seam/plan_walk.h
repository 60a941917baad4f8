// seam/plan_walk.h — one walk over a line of a plan, in the order a rank
// runs its steps.
//
// A line is its start (the embedding, or from_pp), each stage's entry,
// compute and exit, its end (the final norm, or to_pp) and the last rank's
// LM head. Every reader that goes through a line part by part or step by
// step walks it here: the interpreter, the record backend's planned calls,
// the verifier's replay, structure check and byte count, the cost model and
// the plan printers. So the parts, their order and how a step is placed are
// stated once, and a new part of a line is a change here.
//
//   WalkLine(line, [&](const LinePlace& at, const std::vector<Step>& steps) { ... });
//   WalkSteps(line, [&](const StepPlace& at, const Step& s) { ... });
#pragma once

#include <vector>

#include "seam/plan.h"

namespace seam {

// A part of a line.
enum class LinePart { kStart, kEntry, kCompute, kExit, kEnd, kHead };

// Where a part sits: its kind and, for entry, compute and exit, its stage.
struct LinePlace {
  LinePart part = LinePart::kStart;
  const StagePlan* stage = nullptr;  // null outside a stage
  int stage_at = -1;                 // the stage's index into the line's stages, -1 outside one
  bool in_stage() const { return stage != nullptr; }
  bool operator==(const LinePlace&) const = default;
};

// Where a step sits: its part and its index among the part's steps.
struct StepPlace {
  LinePlace line;
  int step = 0;
  bool operator==(const StepPlace&) const = default;
};

// Calls f(place, steps) for each part of the line, in run order; a part
// with no steps is visited too (a reader may check it is empty).
template <class F>
void WalkLine(const LinePlan& line, F&& f) {
  f(LinePlace{LinePart::kStart}, line.start);
  for (size_t i = 0; i < line.stages.size(); ++i) {
    const StagePlan& s = line.stages[i];
    const int at = static_cast<int>(i);
    f(LinePlace{LinePart::kEntry, &s, at}, s.entry);
    f(LinePlace{LinePart::kCompute, &s, at}, s.compute);
    f(LinePlace{LinePart::kExit, &s, at}, s.exit);
  }
  f(LinePlace{LinePart::kEnd}, line.end.steps);
  f(LinePlace{LinePart::kHead}, line.end.head);
}

// Calls f(place, step) for each step of the line, in run order.
template <class F>
void WalkSteps(const LinePlan& line, F&& f) {
  WalkLine(line, [&f](const LinePlace& at, const std::vector<Step>& steps) {
    for (size_t i = 0; i < steps.size(); ++i) f(StepPlace{at, static_cast<int>(i)}, steps[i]);
  });
}

// Calls f(step) for each step of the line, in run order.
template <class F>
void ForEachStep(const LinePlan& line, F&& f) {
  WalkSteps(line, [&f](const StepPlace&, const Step& s) { f(s); });
}

}  // namespace seam

// Cursor: the state of one rank's boundary while the binder emits steps.
//
// Every emitting call reads the current state (rows, owed sum) into the step
// it records and moves the state on, so a step can never disagree with the
// steps before it. Calls that would do nothing on this configuration (a
// slice onto the same rows, a sum over a group of one rank) emit nothing.
#pragma once

#include <optional>
#include <vector>

#include "seam/plan.h"

namespace seam::bind {

struct Widths {
  int value = 0;     // a stage output / normed input: hidden
  int residual = 0;  // hidden x residual streams
  int vocab = 0;     // the LM head's logits (0: a stack without a vocabulary)
};

class Cursor {
 public:
  Cursor(const ParallelConfig& cfg, Widths widths, Boundary start);

  const ParallelConfig& config() const { return cfg_; }
  const std::optional<ValueFacts>& value() const { return value_; }
  const std::optional<Rows>& residual() const { return residual_; }
  const std::optional<Rows>& input() const { return input_; }
  Boundary boundary() const { return {value_, residual_}; }

  // Sums: complete the owed sum in place, or onto finer rows.
  void AllReduce();
  void ReduceScatterOnto(Rows target);
  void ReduceScatterV(Rows target);
  void Leave();  // records that the owed sum goes on to the next reader
  // Row moves of one operand: local slice to finer rows, gather to coarser.
  void MoveTo(Operand op, Rows target);
  // The residual stream.
  void StartResidual();
  void Add();
  void Norm();
  void FusedAllReduceAddNorm();
  // The stage itself, and the collectives inside it.
  void GatherInputInside(Rows target, int width);
  // Context parallelism: the keys and values of the CP peers' rows, `width`
  // elements a token, gathered beside this rank's own (no rows move).
  void GatherKeys(int width);
  // Decode context parallelism: the DCP peers' queries gathered, then each
  // rank's partial outputs exchanged, both beside the attention rows.
  void SplitCache(int query_width, int partial_width);
  void Dispatch(int width);
  void Compute(Rows output, Owed owes, UpdateKind update);
  void Embed(Rows output, Owed owes);
  void LmHead(int vocab);
  void Combine(int width);
  // The pipeline transport: one slice per attention-TP rank.
  void Send(Operand op);
  void Recv(Operand op, Rows rows);

  // The steps emitted since the last call.
  std::vector<Step> TakeSteps();

 private:
  Rows RowsOf(Operand op) const;
  void SetRows(Operand op, Rows r);
  int WidthOf(Operand op) const;
  void Emit(Step s);

  const ParallelConfig& cfg_;  // Bind's, which outlives the cursor
  Widths widths_;
  std::optional<ValueFacts> value_;
  std::optional<Rows> residual_;
  std::optional<Rows> input_;
  std::vector<Step> steps_;
};

}  // namespace seam::bind

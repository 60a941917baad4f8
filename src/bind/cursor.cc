#include "bind/cursor.h"

#include "seam/stage_shape.h"
#include "seam/step_rules.h"

namespace seam::bind {

Cursor::Cursor(const ParallelConfig& cfg, Widths widths, Boundary start)
    : cfg_(cfg), widths_(widths), value_(start.value), residual_(start.residual) {
  steps_.reserve(8);  // room for a part's few steps: the cursor allocates once per line
}

// Every step the binder emits fits its kind's rule; a rule broken here is a
// binder bug, not a plan to report.
void Cursor::Emit(Step s) {
  SEAM_CHECK(StepRuleError(s, cfg_).empty(), StepRuleError(s, cfg_));
  steps_.push_back(s);
}

// An exact copy, keeping steps_'s storage for the next part: a plan holds
// one allocation per part that has steps, and the cursor grows once.
std::vector<Step> Cursor::TakeSteps() {
  std::vector<Step> out(steps_.begin(), steps_.end());
  steps_.clear();
  return out;
}

Rows Cursor::RowsOf(Operand op) const {
  std::optional<Rows> rows = op == Operand::kResidual ? residual_ : input_;
  if (op == Operand::kValue) rows = value_ ? std::optional(value_->rows) : std::nullopt;
  SEAM_CHECK(rows.has_value(), std::string("no ") + std::string(Name(op)) + " to move");
  return *rows;
}

void Cursor::SetRows(Operand op, Rows r) {
  if (op == Operand::kValue) value_->rows = r;
  if (op == Operand::kResidual) residual_ = r;
  if (op == Operand::kInput) input_ = r;
}

int Cursor::WidthOf(Operand op) const { return op == Operand::kResidual ? widths_.residual : widths_.value; }

void Cursor::AllReduce() {
  SEAM_CHECK(value_ && value_->owed != Owed::kNothing, "all-reduce of a complete value");
  Emit({StepKind::kAllReduce, Operand::kValue, GroupOf(value_->owed), value_->rows, value_->rows, value_->owed,
        Owed::kNothing, widths_.value});
  value_->owed = Owed::kNothing;
}

void Cursor::ReduceScatterOnto(Rows target) {
  SEAM_CHECK(value_ && value_->owed != Owed::kNothing, "reduce-scatter of a complete value");
  const Group g = GroupOf(value_->owed);
  SEAM_CHECK(value_->rows.With(AxesOf(cfg_, g)) == target, "reduce-scatter cannot reach those rows");
  Emit({StepKind::kReduceScatter, Operand::kValue, g, value_->rows, target, value_->owed, Owed::kNothing,
        widths_.value});
  value_->rows = target;
  value_->owed = Owed::kNothing;
}

void Cursor::ReduceScatterV(Rows target) {
  SEAM_CHECK(value_ && value_->owed == Owed::kTp, "reduce-scatterv completes a TP sum");
  Emit({StepKind::kReduceScatterV, Operand::kValue, Group::kTp, value_->rows, target, value_->owed, Owed::kNothing,
        widths_.value});
  value_->rows = target;
  value_->owed = Owed::kNothing;
}

void Cursor::Leave() {
  SEAM_CHECK(value_ && value_->owed != Owed::kNothing, "only an owed sum can be left");
  Emit({StepKind::kLeave, Operand::kValue, GroupOf(value_->owed), value_->rows, value_->rows, value_->owed,
        value_->owed, widths_.value});
}

void Cursor::MoveTo(Operand op, Rows target) {
  const Rows from = RowsOf(op);
  if (from == target) return;
  const Owed owed = op == Operand::kValue ? value_->owed : Owed::kNothing;
  if (from.Covers(target)) {
    Emit({StepKind::kSlice, op, std::nullopt, from, target, owed, owed, WidthOf(op)});
  } else {
    SEAM_CHECK(target.Covers(from), "rows neither finer nor coarser");
    SEAM_CHECK(owed == Owed::kNothing, "gathering a value that still owes a sum");
    Emit({StepKind::kAllGather, op, GatherGroup(from, target), from, target, owed, owed, WidthOf(op)});
  }
  SetRows(op, target);
}

void Cursor::StartResidual() {
  SEAM_CHECK(value_ && !residual_ && value_->owed == Owed::kNothing, "the stack entry needs a complete input");
  Emit({StepKind::kStartResidual, Operand::kValue, std::nullopt, value_->rows, value_->rows, Owed::kNothing,
        Owed::kNothing, widths_.residual});
  residual_ = value_->rows;
  value_.reset();
}

void Cursor::Add() {
  SEAM_CHECK(value_ && residual_ && value_->rows == *residual_ && value_->owed == Owed::kNothing,
             "add needs a complete value on the residual's rows");
  Emit({StepKind::kAdd, Operand::kResidual, std::nullopt, value_->rows, *residual_, Owed::kNothing, Owed::kNothing,
        widths_.residual});
  value_.reset();
}

void Cursor::Norm() {
  SEAM_CHECK(residual_ && !value_, "norm reads a residual with nothing pending");
  Emit({StepKind::kNorm, Operand::kResidual, std::nullopt, *residual_, *residual_, Owed::kNothing, Owed::kNothing,
        widths_.value});
  input_ = residual_;
}

void Cursor::FusedAllReduceAddNorm() {
  SEAM_CHECK(value_ && residual_ && value_->rows == *residual_ && value_->owed != Owed::kNothing,
             "fused all-reduce+add+norm needs an owed value on the residual's rows");
  Emit({StepKind::kAllReduceAddNorm, Operand::kValue, GroupOf(value_->owed), value_->rows, *residual_, value_->owed,
        Owed::kNothing, widths_.value});
  value_.reset();
  input_ = residual_;
}

void Cursor::GatherInputInside(Rows target, int width) {
  SEAM_CHECK(input_ && target.Covers(*input_), "the compute gathers to coarser rows");
  if (*input_ == target) return;
  Emit({StepKind::kAllGather, Operand::kInput, GatherGroup(*input_, target), *input_, target, Owed::kNothing,
        Owed::kNothing, width});
  input_ = target;
}

void Cursor::GatherKeys(int width) {
  SEAM_CHECK(input_.has_value(), "the keys are gathered from an input's projection");
  if (cfg_.cp == 1) return;  // every token of each request is on this rank's rows
  Emit({StepKind::kGatherKeys, Operand::kKeys, Group::kCp, *input_, *input_, Owed::kNothing, Owed::kNothing, width});
}

void Cursor::SplitCache(int query_width, int partial_width) {
  SEAM_CHECK(input_.has_value(), "the queries are gathered from an input's projection");
  if (cfg_.dcp == 1) return;  // every cached token of each request is on this rank
  Emit({StepKind::kGatherQueries, Operand::kQueries, Group::kDcp, *input_, *input_, Owed::kNothing, Owed::kNothing,
        query_width});
  Emit({StepKind::kExchangePartials, Operand::kPartials, Group::kDcp, *input_, *input_, Owed::kNothing, Owed::kNothing,
        partial_width});
}

void Cursor::Dispatch(int width) {
  SEAM_CHECK(input_.has_value(), "dispatch needs an input");
  if (cfg_.ep_size() == 1) return;  // every expert is on this rank
  Emit({StepKind::kDispatch, Operand::kInput, A2aGroup(cfg_), *input_, *input_, Owed::kNothing, Owed::kNothing, width});
}

void Cursor::Compute(Rows output, Owed owes, UpdateKind update) {
  SEAM_CHECK(input_ && !value_, "compute needs an input and no pending value");
  const Owed owed = Owe(cfg_, owes);
  Emit({StepKind::kCompute, Operand::kInput, std::nullopt, *input_, output, Owed::kNothing, owed, widths_.value});
  input_.reset();
  value_ = ValueFacts{output, owed, update};
}

void Cursor::Embed(Rows output, Owed owes) {
  SEAM_CHECK(!value_ && !residual_ && !input_, "the embedding starts the line");
  const Owed owed = Owe(cfg_, owes);
  Emit({StepKind::kEmbed, Operand::kValue, std::nullopt, output, output, Owed::kNothing, owed, widths_.value});
  value_ = ValueFacts{output, owed, UpdateKind::kPlainAdd};
}

// From the final norm's input on the attention rows to each row's logits
// over the whole vocabulary there (seam/stage_shape.h says where it runs).
void Cursor::LmHead(int vocab) {
  SEAM_CHECK(input_.has_value() && !value_, "the LM head reads the final norm's output");
  const StageShape shape = LmHeadShape(cfg_);
  const Rows attn = *input_;
  if (!(shape.rows == attn)) {
    Emit({StepKind::kAllGather, Operand::kInput, GatherGroup(attn, shape.rows), attn, shape.rows, Owed::kNothing,
          Owed::kNothing, widths_.value});
  }
  Emit({StepKind::kLmHead, Operand::kInput, std::nullopt, shape.rows, shape.rows, Owed::kNothing, Owed::kNothing,
        vocab});
  if (GroupSize(cfg_, *shape.shard) > 1) {
    Emit({StepKind::kGatherVocab, Operand::kLogits, shape.shard, shape.rows, shape.rows, Owed::kNothing, Owed::kNothing,
          vocab});
  }
  if (!(shape.rows == attn)) {
    Emit({StepKind::kSlice, Operand::kLogits, std::nullopt, shape.rows, attn, Owed::kNothing, Owed::kNothing, vocab});
  }
  input_ = attn;
}

void Cursor::Combine(int width) {
  SEAM_CHECK(value_.has_value(), "combine needs the experts' output");
  if (cfg_.ep_size() == 1) return;
  Emit({StepKind::kCombine, Operand::kValue, A2aGroup(cfg_), value_->rows, value_->rows, Owed::kNothing, Owed::kNothing,
        width});
}

void Cursor::Send(Operand op) {
  const Rows rows = RowsOf(op);
  const Owed owed = op == Operand::kValue ? value_->owed : Owed::kNothing;
  SEAM_CHECK(owed == Owed::kNothing, "the handoff sends complete values only");
  Emit({StepKind::kSend, op, Group::kPp, rows, rows, owed, owed, WidthOf(op)});
  if (op == Operand::kValue) value_.reset();
  if (op == Operand::kResidual) residual_.reset();
}

void Cursor::Recv(Operand op, Rows rows) {
  SEAM_CHECK(op != Operand::kInput, "the handoff carries the value and the residual");
  Emit({StepKind::kRecv, op, Group::kPp, rows, rows, Owed::kNothing, Owed::kNothing, WidthOf(op)});
  if (op == Operand::kValue) value_ = ValueFacts{rows, Owed::kNothing, UpdateKind::kPlainAdd};
  if (op == Operand::kResidual) residual_ = rows;
}

}  // namespace seam::bind

// seam/plan.h — a bound plan: for every stage of one pipeline rank and every
// batch variant, the steps its entry, compute and exit run, and the state of
// the boundary on each side (which rows the value and the residual are on and
// which sum the value still owes).
//
// A Plan is an immutable value: Bind() makes one, the verifier, printers,
// JSON writer and diff read it. Rewriting one means building a new Plan from
// edited copies of its parts (tests do this to break invariants on purpose).
//
//   Expected<Plan> p = Bind(model, cfg);
//   for (const LinePlan& line : p->lines())
//     for (const StagePlan& s : line.stages) ... s.entry ...
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seam/layout.h"
#include "seam/stage.h"
#include "seam/step_kind.h"
#include "seam/wire.h"

namespace seam {

// Batches a stage binds a path for; a batch picks its variant when it runs.
enum class Variant {
  kOrdinary,
  kInputScattered,  // each layer's input is a TP partial sum; attention gathers its slice
};

struct Step {
  StepKind kind = StepKind::kCompute;
  Operand operand = Operand::kValue;
  std::optional<Group> group;  // collectives only
  Rows rows_in;
  Rows rows_out;
  Owed owed_before = Owed::kNothing;
  Owed owed_after = Owed::kNothing;
  int width = 0;  // elements per token of the buffer the step acts on
  bool operator==(const Step&) const = default;
};

// The value in flight at a boundary: a stage's output not yet added.
struct ValueFacts {
  Rows rows;
  Owed owed = Owed::kNothing;
  UpdateKind update = UpdateKind::kPlainAdd;
  bool operator==(const ValueFacts&) const = default;
};

// The state between two stages. No value = a written stream (nothing
// pending); no residual = the stack entry (nothing to add to yet).
struct Boundary {
  std::optional<ValueFacts> value;
  std::optional<Rows> residual;
  bool operator==(const Boundary&) const = default;
};

struct StagePlan {
  int index = 0;
  int layer = 0;
  StageDecl decl;
  Boundary arrives;              // what the entry was bound for
  std::optional<Rows> input;     // rows the entry hands to compute (none: no-op)
  std::optional<Rows> residual;  // the residual's rows while the stage runs
  std::vector<Step> entry;
  std::vector<Step> compute;
  std::vector<Step> exit;
  Boundary departs;  // what the exit hands on
  bool operator==(const StagePlan&) const = default;
};

// How a pipeline rank's stages end.
enum class EndKind {
  kFinalNorm,  // the last rank: complete, add, final norm on the attention rows
  kSend,       // to_pp: complete every owed sum onto the slice, send the slices
};

struct EndPlan {
  EndKind kind = EndKind::kFinalNorm;
  Boundary arrives;
  std::vector<Step> steps;
  // The last rank's LM head, from the final norm's output to every row's
  // logits over the whole vocabulary on the attention rows: empty on a rank
  // that sends, and for a stack without a vocabulary (a binding-only stack).
  std::vector<Step> head;
  bool operator==(const EndPlan&) const = default;
};

struct LinePlan {
  Variant variant = Variant::kOrdinary;
  // What starts the line. On the first pipeline rank, the embedding: each
  // rank looks up its tokens in its vocabulary rows of the table, leaving a
  // TP sum for the first entry where the table is split (attn_dp = 1, as
  // SGLang's VocabParallelEmbedding); under attention DP the table is whole
  // on every rank and the lookup is complete on the attention rows. On a
  // later rank, from_pp: receive the slices and gather them back.
  std::vector<Step> start;
  std::vector<StagePlan> stages;
  EndPlan end;
  bool operator==(const LinePlan&) const = default;
};

struct PlanHeader {
  std::string model;
  int hidden = 0;
  int residual_streams = 1;
  int vocab = 0;    // the LM head's width on the last rank; 0: a stack bound without a vocabulary
  WireDtypes wire;  // the dtypes activations cross the wire in
  ParallelConfig config;
  int pp_rank = 0;
  int first_layer = 0;
  int last_layer = 0;  // exclusive
  bool operator==(const PlanHeader&) const = default;
};

class Plan {
 public:
  Plan(PlanHeader header, std::vector<LinePlan> lines);
  const PlanHeader& header() const { return header_; }
  const ParallelConfig& config() const { return header_.config; }
  const std::vector<LinePlan>& lines() const { return *lines_; }
  const LinePlan* line(Variant v) const;
  // The same lines under another header, sharing them: a rank's lines
  // depend on its layers and its place in the pipeline, not on how the
  // other ranks are cut, so the sweep reuses one rank's lines across cuts.
  Plan WithHeader(PlanHeader header) const;
  bool operator==(const Plan& o) const { return header_ == o.header_ && (lines_ == o.lines_ || *lines_ == *o.lines_); }

 private:
  PlanHeader header_;
  std::shared_ptr<const std::vector<LinePlan>> lines_;  // never null; immutable, so shared
};

// Bytes one rank moves for the step, per token of the whole batch (DP groups
// assumed balanced). Local steps move nothing.
double BytesPerToken(const Step& s, const PlanHeader& h);
double BytesPerToken(const StagePlan& s, const PlanHeader& h);
double BytesPerToken(const LinePlan& line, const PlanHeader& h);
// The steps of a line: its start, every stage's entry, compute and exit, its
// end and head (seam/plan_walk.h walks them).
size_t StepCount(const LinePlan& line);
// Bytes as a person reads them: whole numbers in full (never 1.6e+06), a
// fraction (a share of rows that does not divide evenly) to two places.
std::string BytesText(double bytes);

// One plan per pipeline rank, in rank order.
using Pipeline = std::vector<Plan>;

std::string_view Name(Variant v);
std::string_view Name(EndKind k);
Expected<EndKind> ParseEndKind(std::string_view text);
std::string_view Name(Operand o);
Expected<Variant> ParseVariant(std::string_view text);
Expected<Operand> ParseOperand(std::string_view text);
Expected<StepKind> ParseStepKind(std::string_view text);

// One line per step, e.g. "rs(attn_tp) value attn->slice"; tests and the
// diff use it.
std::string ShortString(const Step& s);
std::string ShortString(const std::vector<Step>& steps);  // joined by "; "
std::string ShortString(const Boundary& b);

}  // namespace seam

// The binder's rules, one function each; bind.cc strings them together.
#pragma once

#include <span>
#include <vector>

#include "bind/cursor.h"
#include "seam/model.h"

namespace seam::bind {

// Bind's arguments outlive every Context and Cursor: they refer to its
// configuration instead of copying it (and its split) once a line.
struct Context {
  const ParallelConfig& cfg;
  Variant variant = Variant::kOrdinary;
  Widths widths;
  bool fuse = true;
  const ModelDims* dims = nullptr;  // none: a stack bound for its boundaries alone
  Rows attn() const { return Rows::Attention(cfg); }
  Rows slice() const { return Rows::Slice(cfg); }
};

// What a stage needs and produces on this configuration and batch variant.
struct Contract {
  Rows need;                   // rows its compute reads (after any gather of its own)
  Rows input;                  // rows its entry hands to compute
  Rows residual_to;            // the residual's rows while it runs
  Rows output;                 // rows of its output
  Owed owes = Owed::kNothing;  // the sum its compute leaves (before normalising)
  bool gathers_itself = false;
  ReadKind read = ReadKind::kPlainNorm;
};

// `residual` is where the residual arrives (none at the stack entry).
Contract ContractOf(const StageDecl& d, const Context& ctx, std::optional<Rows> residual);
// The final norm on the last pipeline rank reads the attention rows.
Contract FinalContract(const Context& ctx);
// The rows an entry adds on: the slice when the residual is there, or the
// stage keeps the residual or its input there; else the attention rows.
Rows AddRows(const Context& ctx, const Contract& c, std::optional<Rows> residual);

// An FFN that runs on this rank's own slice of rows (a2a MoE, fully
// data-parallel dense) and hands on its output complete there.
bool RunsOnItsSlice(const StageDecl& d, const ParallelConfig& cfg);

// What lies after a stage on this rank (no-op stages skipped).
struct Downstream {
  const StageDecl* next = nullptr;       // null: the rank's stages end here
  bool only_partial_attentions = false;  // >= 1 stages follow, all always-partial attentions
  EndKind end = EndKind::kFinalNorm;     // how the rank ends
};
// A stage never looks past the handoff: what the next rank's first stage
// needs is from_pp's to provide, so both ranks bind as if cut anywhere.
std::vector<Downstream> DownstreamOf(std::span<const StageRef> stages, EndKind end);

// The embedding starts the first pipeline rank's line (seam/stage_shape.h).
void BindEmbedding(Cursor& cur, const Context& ctx);
// from_pp: receive the slices the previous rank sent (the residual alone
// after a stage that writes at the handoff) and gather them to the attention
// rows. Nothing received owes a sum.
void BindReceive(Cursor& cur, const Context& ctx, const StageDecl& sender_last);
// to_pp: complete every owed sum onto the slice, slice the residual, send.
void BindSend(Cursor& cur, const Context& ctx);

// Entry: complete what is owed, add, move the residual, read, move the input.
void BindEntry(Cursor& cur, const Context& ctx, const Contract& c);
// Compute, with the collectives inside it (QKV gather, a2a dispatch/combine).
void BindCompute(Cursor& cur, const Context& ctx, const StageDecl& d, const Contract& c);
// Exit: what the stage hands on (leave, complete now, return over DP, write).
void BindExit(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down);

// Rejections, stage by stage in stack order so that every pipeline rank and
// the uncut stack name the same first rejected stage: the rules of every
// batch variant over `stages` (the rank's own with its neighbours), then
// those of input-scattered batches over its own stages (indices first_own
// to last_own). Each names the stage, the rule and what to do instead.
Status CheckStages(const std::vector<StageRef>& stages, int first_own, int last_own, const ParallelConfig& cfg);

}  // namespace seam::bind

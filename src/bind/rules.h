// The binder's rules, one function each; bind.cc strings them together.
#pragma once

#include <vector>

#include "bind/cursor.h"
#include "seam/model.h"

namespace seam::bind {

struct Context {
  ParallelConfig cfg;
  Variant variant = Variant::kOrdinary;
  Widths widths;
  Rows attn() const { return Rows::Attention(cfg); }
  Rows slice() const { return Rows::Slice(cfg); }
};

// What a stage needs and produces on this configuration and batch variant.
struct Contract {
  Rows need;            // rows its compute reads (after any gather of its own)
  Rows input;           // rows its entry hands to compute
  Rows residual_to;     // the residual's rows while it runs
  Rows output;          // rows of its output
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

// What lies after a stage on this rank (no-op stages skipped).
struct Downstream {
  const StageDecl* next = nullptr;         // null: the rank's stages end here
  bool only_partial_attentions = false;    // >= 1 stages follow, all always-partial attentions
};
std::vector<Downstream> DownstreamOf(const std::vector<StageRef>& stages);

// The arrival at the stack entry for this batch variant.
Boundary StackArrival(const Context& ctx);

// Entry: complete what is owed, add, move the residual, read, move the input.
void BindEntry(Cursor& cur, const Context& ctx, const Contract& c);
// Compute, with the collectives inside it (QKV gather, a2a dispatch/combine).
void BindCompute(Cursor& cur, const Context& ctx, const StageDecl& d, const Contract& c);
// Exit: what the stage hands on (leave, complete now, return over DP, write).
void BindExit(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down);

// Rejections that hold for every batch variant, then those of input-scattered
// batches. Each names the stage, the rule and what to do instead.
Status CheckStack(const std::vector<StageRef>& stages, const ParallelConfig& cfg);
Status CheckInputScattered(const std::vector<StageRef>& stages, const ParallelConfig& cfg);

}  // namespace seam::bind

// Compute and exit selection (docs/binding.md §3): what a stage hands on.
#include "bind/rules.h"
#include "seam/stage_shape.h"

namespace seam::bind {
namespace {

bool Hyper(const StageDecl& d) { return d.update == UpdateKind::kHyperConnection; }

// The rows the next reader adds on, if the residual is on `residual`; a
// send completes onto the slice it sends.
Rows NextAddRows(const Context& ctx, const Downstream& down, Rows residual) {
  if (down.next != nullptr) return AddRows(ctx, ContractOf(*down.next, ctx, residual), residual);
  if (down.end == EndKind::kSend) return ctx.slice();
  return AddRows(ctx, FinalContract(ctx), residual);
}

// Writes the complete value into the residual on the residual's rows: a
// non-additive update runs at its producer, once its sum is complete.
void Write(Cursor& cur) {
  cur.MoveTo(Operand::kValue, *cur.residual());
  cur.Add();
}

// Completes the owed sum now, onto the residual's rows when that is finer.
void CompleteNow(Cursor& cur) {
  if (cur.value()->owed == Owed::kNothing) return;
  if (*cur.residual() != cur.value()->rows &&
      cur.value()->rows.With(AxesOf(cur.config(), GroupOf(cur.value()->owed))) == *cur.residual()) {
    cur.ReduceScatterOnto(*cur.residual());
  } else {
    cur.AllReduce();
  }
}

// A sum over `owed`'s group on this rank's rows (the attention group's, or
// the full rows with attn_dp = 1): the next entry may complete it, by an
// all-reduce, or by a reduce-scatter where the policy allows one.
void LeaveOrComplete(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  if (cur.value()->owed == Owed::kNothing) {
    if (Hyper(d)) Write(cur);
    return;
  }
  if (Hyper(d)) {
    CompleteNow(cur);
    Write(cur);
    return;
  }
  const bool next_all_reduces = NextAddRows(ctx, down, *cur.residual()) != ctx.slice();
  if (next_all_reduces || ctx.cfg.allows_reduce_scatter()) {
    cur.Leave();
  } else {
    cur.AllReduce();
  }
}

// A TP FFN under attention DP returns its rows to the DP groups at its exit.
void ReturnOverDp(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  const Rows s = ctx.slice();
  if (ctx.cfg.allows_reduce_scatterv() && ctx.cfg.attn_tp() == 1) {
    cur.ReduceScatterV(ctx.attn());
  } else if (ctx.cfg.allows_reduce_scatter()) {
    cur.ReduceScatterOnto(s);
    // Stay on the slice when the next entry adds there anyway.
    if (Hyper(d) || NextAddRows(ctx, down, *cur.residual()) != s) cur.MoveTo(Operand::kValue, ctx.attn());
  } else {
    cur.AllReduce();
    cur.MoveTo(Operand::kValue, ctx.attn());
  }
  if (Hyper(d)) Write(cur);
}

// An FFN on its own rows (fully DP dense, a2a MoE) hands on the slice,
// complete. Before the stack end, trailing always-partial attentions or a
// read of every row it writes the residual and gathers it to the attention
// rows; before a handoff it writes on the slice it will send.
void ExitFromSlice(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  const bool stack_end = down.next == nullptr && down.end == EndKind::kFinalNorm;
  const bool returns =
      stack_end || down.only_partial_attentions || (down.next != nullptr && down.next->read == ReadKind::kAllRows);
  if (returns || Hyper(d) || down.next == nullptr) Write(cur);
  if (returns) cur.MoveTo(Operand::kResidual, ctx.attn());
}

void ExitFfn(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  if (RunsOnItsSlice(d, ctx.cfg)) {
    ExitFromSlice(cur, ctx, d, down);
  } else if (cur.value()->owed == Owed::kTp && ctx.cfg.shards() > 1) {
    ReturnOverDp(cur, ctx, d, down);
  } else {
    LeaveOrComplete(cur, ctx, d, down);
  }
}

// A mixer is exit-scoped: before an FFN it hands its sum on as declared;
// before an attention it carries it when the attention rows are whole
// (attn_dp = cp = 1) on ordinary batches;
// before a handoff it leaves it to to_pp, whose reduce-scatter onto the
// slice it sends moves half the bytes of an all-reduce here; otherwise (and
// for a non-additive update) it completes it at its exit.
void ExitMixer(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  const StageDecl* reader = down.next;
  if (cur.value()->owed != Owed::kNothing && !Hyper(d)) {
    const bool handoff = down.next == nullptr && down.end == EndKind::kSend;
    const bool carries =
        reader != nullptr && IsAttentionLike(*reader) && ctx.cfg.shards() == 1 && ctx.variant == Variant::kOrdinary;
    if (handoff || (reader != nullptr && IsFfn(*reader)) || carries) {
      cur.Leave();
      return;
    }
  }
  CompleteNow(cur);
  if (Hyper(d)) Write(cur);
}

}  // namespace

void BindCompute(Cursor& cur, const Context& ctx, const StageDecl& d, const Contract& c) {
  const int dispatched = d.top_k * ctx.widths.value;
  if (c.gathers_itself) cur.GatherInputInside(c.need, d.gather_width > 0 ? d.gather_width : ctx.widths.value);
  if (d.kind == StageKind::kAttention) {
    cur.GatherKeys(CacheWidth(d, ctx.dims, ctx.widths.value, ctx.cfg));
    cur.SplitCache(QueryWidth(d, ctx.dims, ctx.widths.value, ctx.cfg),
                   PartialWidth(d, ctx.dims, ctx.widths.value, ctx.cfg));
  }
  const bool a2a = d.kind == StageKind::kSparseFfn && ctx.cfg.moe == MoeMode::kA2a;
  if (a2a) cur.Dispatch(dispatched);
  cur.Compute(c.output, c.owes, d.update);
  if (a2a) cur.Combine(dispatched);
  const bool reduces_itself = d.kind == StageKind::kAttention && d.attention_sum == AttentionSum::kReducesItself;
  if (reduces_itself && cur.value()->owed != Owed::kNothing) cur.AllReduce();
}

void BindExit(Cursor& cur, const Context& ctx, const StageDecl& d, const Downstream& down) {
  switch (d.kind) {
    case StageKind::kAttention:
      // An always-partial attention has no exit: its sum goes to the next entry.
      if (cur.value()->owed != Owed::kNothing) {
        cur.Leave();
      } else if (Hyper(d)) {
        Write(cur);
      }
      return;
    case StageKind::kMixer: return ExitMixer(cur, ctx, d, down);
    case StageKind::kDenseFfn:
    case StageKind::kSparseFfn: return ExitFfn(cur, ctx, d, down);
    case StageKind::kLinear:
      if (Hyper(d)) Write(cur);
      return;
    case StageKind::kNoOp: return;
  }
}

}  // namespace seam::bind

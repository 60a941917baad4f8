// The pipeline handoff (docs/binding.md §4): to_pp completes every owed sum on the
// sender and sends one slice per attention-TP rank; from_pp receives the
// slices and gathers them to the attention rows, declaring no sum.
#include "bind/rules.h"
#include "seam/bind.h"

namespace seam::bind {

void BindSend(Cursor& cur, const Context& ctx) {
  const Rows s = ctx.slice();
  if (cur.value()) {
    if (cur.value()->owed != Owed::kNothing) {
      cur.ReduceScatterOnto(s);
    } else {
      cur.MoveTo(Operand::kValue, s);
    }
  }
  cur.MoveTo(Operand::kResidual, s);
  if (cur.value()) cur.Send(Operand::kValue);
  cur.Send(Operand::kResidual);
}

void BindReceive(Cursor& cur, const Context& ctx, const StageDecl& sender_last) {
  const bool written = WritesAtHandoff(sender_last, ctx.cfg);
  if (!written) cur.Recv(Operand::kValue, ctx.slice());
  cur.Recv(Operand::kResidual, ctx.slice());
  if (!written) cur.MoveTo(Operand::kValue, ctx.attn());
  cur.MoveTo(Operand::kResidual, ctx.attn());
}

}  // namespace seam::bind

namespace seam {

// A stage that runs on its own slice of rows, or updates hyper-connection
// streams, writes the residual on the slice it sends.
bool WritesAtHandoff(const StageDecl& d, const ParallelConfig& cfg) {
  return bind::RunsOnItsSlice(d, cfg) || d.update == UpdateKind::kHyperConnection;
}

}  // namespace seam

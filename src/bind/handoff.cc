// The pipeline handoff (docs/binding.md §4): to_pp completes every owed sum on the
// sender and sends one slice per attention-TP rank; from_pp receives the
// slices and gathers them to the attention rows, declaring no sum.
#include "bind/rules.h"

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

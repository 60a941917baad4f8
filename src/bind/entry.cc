// Entry selection (docs/binding.md §2): from what arrives to what the stage reads.
//
// Canonical completion: an owed sum completes before anything is added to
// it. The entry picks the rows to add on (the slice whenever the residual is
// there or the stage keeps it or its input there, else the attention rows),
// completes the arriving sum onto them (reduce-scatter when that slices,
// all-reduce when it does not), adds, moves the residual to where the stage
// keeps it, reads, and moves the read input to the rows the stage takes.
#include "bind/rules.h"

namespace seam::bind {
namespace {

// A fused all-reduce+add+norm applies when nothing moves between the three
// and both the update and the read are the plain kinds.
bool CanFuse(const Cursor& cur, const Context& ctx, const Contract& c, Rows add_rows) {
  const auto& v = cur.value();
  return ctx.fuse && v && v->owed != Owed::kNothing && v->rows == add_rows && cur.residual() == add_rows &&
         c.residual_to == add_rows && v->update == UpdateKind::kPlainAdd && c.read == ReadKind::kPlainNorm;
}

// Completes the arriving value and brings it onto `add_rows`.
void BringValue(Cursor& cur, Rows add_rows) {
  if (!cur.value()) return;  // a written stream: nothing pending
  SEAM_CHECK(cur.value()->update == UpdateKind::kPlainAdd || cur.value()->owed == Owed::kNothing,
             "a non-additive update arrives only after its sum completed");
  if (cur.value()->owed == Owed::kNothing) {
    cur.MoveTo(Operand::kValue, add_rows);
  } else if (cur.value()->rows == add_rows) {
    cur.AllReduce();
  } else {
    cur.ReduceScatterOnto(add_rows);
  }
}

// Adds the value into the residual on `add_rows` (or starts the residual).
void UpdateResidual(Cursor& cur, Rows add_rows) {
  if (!cur.residual()) {
    cur.StartResidual();
    return;
  }
  cur.MoveTo(Operand::kResidual, add_rows);
  if (cur.value()) cur.Add();
}

}  // namespace

void BindEntry(Cursor& cur, const Context& ctx, const Contract& c) {
  const Rows add_rows = AddRows(ctx, c, cur.residual());
  if (CanFuse(cur, ctx, c, add_rows)) {
    cur.FusedAllReduceAddNorm();
  } else {
    BringValue(cur, add_rows);
    UpdateResidual(cur, add_rows);
    cur.MoveTo(Operand::kResidual, c.residual_to);
    cur.Norm();
  }
  cur.MoveTo(Operand::kInput, c.input);
}

}  // namespace seam::bind

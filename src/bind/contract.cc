// Contracts per stage kind (docs/binding.md §1) on this configuration.
#include "bind/rules.h"

#include "seam/stage_shape.h"

namespace seam::bind {
namespace {

Contract AttentionLike(const StageDecl& d, const Context& ctx, std::optional<Rows> residual) {
  const StageShape shape = ShapeOf(d, ctx.cfg);
  Contract c{.need = shape.rows,
             .input = shape.rows,
             .residual_to = residual.value_or(ctx.attn()),
             .output = shape.rows,
             .owes = shape.sum,
             .read = d.read};
  if (ctx.variant == Variant::kInputScattered) {
    // Input-scattered: the attention takes its slice of the completed input
    // and gathers its projected QKV itself; the residual stays on the slice.
    c.input = ctx.slice();
    c.residual_to = ctx.slice();
    c.gathers_itself = true;
  } else if (d.read == ReadKind::kAllRows) {
    c.residual_to = ctx.attn();  // a read of every row reads the attention rows
  }
  return c;
}

// An FFN keeps the residual on the attention rows, or on its own slice
// when it runs on the slice.
Contract Ffn(const StageDecl& d, const Context& ctx) {
  const StageShape s = ShapeOf(d, ctx.cfg);
  const Rows residual = RunsOnItsSlice(d, ctx.cfg) ? ctx.slice() : ctx.attn();
  return {.need = s.rows, .input = s.rows, .residual_to = residual, .output = s.rows, .owes = s.sum, .read = d.read};
}

}  // namespace

Contract ContractOf(const StageDecl& d, const Context& ctx, std::optional<Rows> residual) {
  switch (d.kind) {
    case StageKind::kAttention:
    case StageKind::kMixer: return AttentionLike(d, ctx, residual);
    case StageKind::kDenseFfn:
    case StageKind::kSparseFfn: return Ffn(d, ctx);
    case StageKind::kLinear: return AttentionLike(d, ctx, residual);  // replicated: its output is complete
    case StageKind::kNoOp: break;
  }
  SEAM_CHECK(false, "no contract for a no-op stage");
}

Contract FinalContract(const Context& ctx) {
  return {.need = ctx.attn(), .input = ctx.attn(), .residual_to = ctx.attn(), .output = ctx.attn()};
}

Rows AddRows(const Context& ctx, const Contract& c, std::optional<Rows> residual) {
  const Rows s = ctx.slice();
  const bool on_slice = residual == s || c.residual_to == s || c.input == s;
  return on_slice ? s : ctx.attn();
}

void BindEmbedding(Cursor& cur, const Context& ctx) {
  const StageShape e = EmbeddingShape(ctx.cfg);
  cur.Embed(e.rows, e.sum);
}

bool RunsOnItsSlice(const StageDecl& d, const ParallelConfig& cfg) {
  if (d.kind == StageKind::kSparseFfn) return cfg.moe == MoeMode::kA2a;
  return d.kind == StageKind::kDenseFfn && DenseWidthOf(cfg) == DenseWidth::kRank;
}

std::vector<Downstream> DownstreamOf(std::span<const StageRef> stages, EndKind end) {
  std::vector<Downstream> out(stages.size());
  // What follows the stage being visited, scanning backwards.
  Downstream after{.end = end};
  for (size_t i = stages.size(); i-- > 0;) {
    out[i] = after;
    const StageDecl& d = stages[i].decl;
    if (d.kind == StageKind::kNoOp) continue;
    const bool tail = after.next == nullptr || after.only_partial_attentions;
    after.next = &d;
    after.only_partial_attentions = IsAlwaysPartialAttention(d) && tail;
  }
  return out;
}

}  // namespace seam::bind

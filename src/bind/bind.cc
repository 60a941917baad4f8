// Bind: one pass over a pipeline rank's stages per batch variant.
#include "seam/bind.h"

#include <fmt/format.h>

#include "bind/rules.h"
#include "seam/verify.h"

namespace seam {
namespace {

using bind::Context;
using bind::Cursor;

std::vector<Variant> VariantsOf(const ParallelConfig& cfg) {
  if (cfg.input_scattered) return {Variant::kOrdinary, Variant::kInputScattered};
  return {Variant::kOrdinary};
}

StagePlan BindStage(Cursor& cur, const Context& ctx, const StageRef& s, const bind::Downstream& down) {
  StagePlan p{.index = s.index, .layer = s.layer, .decl = s.decl, .arrives = cur.boundary()};
  if (s.decl.kind == StageKind::kNoOp) {
    p.departs = p.arrives;  // passes the pending add on
    return p;
  }
  const bind::Contract c = bind::ContractOf(s.decl, ctx, cur.residual());
  bind::BindEntry(cur, ctx, c);
  p.entry = cur.TakeSteps();
  p.input = cur.input();
  p.residual = cur.residual();
  bind::BindCompute(cur, ctx, s.decl, c);
  p.compute = cur.TakeSteps();
  bind::BindExit(cur, ctx, s.decl, down);
  p.exit = cur.TakeSteps();
  p.departs = cur.boundary();
  return p;
}

LinePlan BindLine(const std::vector<StageRef>& stages, const Context& ctx) {
  const std::vector<bind::Downstream> down = bind::DownstreamOf(stages);
  Cursor cur(ctx.cfg, ctx.widths, bind::StackArrival(ctx));
  LinePlan line{.variant = ctx.variant};
  line.stages.reserve(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) line.stages.push_back(BindStage(cur, ctx, stages[i], down[i]));
  line.final.arrives = cur.boundary();
  bind::BindEntry(cur, ctx, bind::FinalContract(ctx));
  line.final.steps = cur.TakeSteps();
  return line;
}

Status CheckModel(const Model& m) {
  if (m.num_layers < 1) return InvalidArgument(fmt::format("model '{}' has no layers", m.name));
  if (m.hidden < 1) return InvalidArgument(fmt::format("model '{}' has hidden size {}", m.name, m.hidden));
  if (m.residual_streams < 1) {
    return InvalidArgument(fmt::format("model '{}' has {} residual streams", m.name, m.residual_streams));
  }
  return Status::Ok();
}

}  // namespace

Expected<Plan> Bind(const Model& model, const ParallelConfig& cfg, int pp_rank, const BindOptions& options) {
  if (Status s = Validate(cfg); !s.ok()) return s.error();
  if (Status s = CheckModel(model); !s.ok()) return s.error();
  if (pp_rank != 0) return InvalidArgument(fmt::format("pp_rank={} is outside pp={}", pp_rank, cfg.pp));
  const std::vector<StageRef> stages = StagesOf(model, 0, model.num_layers);
  if (Status s = bind::CheckStack(stages, cfg); !s.ok()) return s.error();
  if (cfg.input_scattered) {
    if (Status s = bind::CheckInputScattered(stages, cfg); !s.ok()) return s.error();
  }
  const bind::Widths widths{model.hidden, model.hidden * model.residual_streams};
  std::vector<LinePlan> lines;
  for (Variant v : VariantsOf(cfg)) lines.push_back(BindLine(stages, {cfg, v, widths}));
  ParallelConfig resolved = cfg;
  resolved.dense_tp = cfg.dense_tp_size();  // a plan states its widths, never "the default"
  Plan plan({.model = model.name, .hidden = model.hidden, .residual_streams = model.residual_streams,
             .config = resolved, .pp_rank = pp_rank, .first_layer = 0, .last_layer = model.num_layers},
            std::move(lines));
  if (options.verify) {
    const std::vector<Violation> violations = Verify(plan);
    if (!violations.empty()) return FailedCheck("the bound plan breaks its invariants:\n" + Describe(violations));
  }
  return plan;
}

}  // namespace seam

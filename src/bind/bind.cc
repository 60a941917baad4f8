// Bind: one pass over a pipeline rank's stages per batch variant.
#include "seam/bind.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "bind/rank.h"
#include "bind/rules.h"
#include "seam/knobs.h"
#include "seam/pipeline.h"
#include "seam/sharding.h"

namespace seam {
namespace {

using bind::Context;
using bind::Cursor;

std::span<const Variant> VariantsOf(const ParallelConfig& cfg) {
  static constexpr Variant kBoth[] = {Variant::kOrdinary, Variant::kInputScattered};
  return std::span(kBoth).first(cfg.input_scattered ? 2 : 1);
}

// A rank's place in the pipeline.
struct RankSpan {
  bool first = true;
  EndKind end = EndKind::kFinalNorm;
  bind::Neighbours neighbours;
};

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

// `down`: what follows each stage, the same on every line.
LinePlan BindLine(std::span<const StageRef> stages, std::span<const bind::Downstream> down, const Context& ctx,
                  const RankSpan& span) {
  LinePlan line{.variant = ctx.variant};
  Cursor cur(ctx.cfg, ctx.widths, Boundary{});
  if (span.first) {
    bind::BindEmbedding(cur, ctx);
  } else {
    bind::BindReceive(cur, ctx, span.neighbours.before->decl);
  }
  line.start = cur.TakeSteps();
  line.stages.reserve(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) line.stages.push_back(BindStage(cur, ctx, stages[i], down[i]));
  line.end = {.kind = span.end, .arrives = cur.boundary()};
  if (span.end == EndKind::kSend) {
    bind::BindSend(cur, ctx);
  } else {
    bind::BindEntry(cur, ctx, bind::FinalContract(ctx));
  }
  line.end.steps = cur.TakeSteps();
  if (span.end == EndKind::kFinalNorm && ctx.widths.vocab > 0) {
    cur.LmHead(ctx.widths.vocab);
    line.end.head = cur.TakeSteps();
  }
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

// Where a rank sits and what it sees of its neighbours, once every refusal
// is ruled out: the binding that follows refuses nothing.
struct Placement {
  LayerRange range;
  bind::RankStages around;
};

Expected<Placement> Place(const Model& model, const ParallelConfig& cfg, int pp_rank, const BindOptions& options) {
  SEAM_RETURN_IF_ERROR(CheckModel(model));
  SEAM_RETURN_IF_ERROR(Validate(options.wire));
  Expected<std::vector<LayerRange>> ranges = SplitLayers(cfg, model.num_layers);
  if (!ranges) return ranges.error();
  if (pp_rank < 0 || pp_rank >= cfg.pp) {
    return InvalidArgument(fmt::format("pp_rank={} is outside pp={}", pp_rank, cfg.pp));
  }
  // What `seam run` can execute is what seam binds: the library refuses a
  // sharding the model or the canonical reduction cannot take.
  SEAM_RETURN_IF_ERROR(CheckSharding(model, cfg));
  const LayerRange range = (*ranges)[static_cast<size_t>(pp_rank)];
  if (options.built) {
    SEAM_RETURN_IF_ERROR(bind::CheckBuiltStages(model, range, *options.built, pp_rank));
  }
  bind::RankStages around = bind::StagesAround(model, range);
  const std::span<const StageRef> stages = around.own();
  const int first_own = stages.empty() ? 0 : stages.front().index;
  const int last_own = stages.empty() ? -1 : stages.back().index;
  // The stack-wide rejections look at the neighbours too, so both ranks at a
  // cut agree on them.
  if (Status s = bind::CheckStages(around.around, first_own, last_own, cfg); !s.ok()) return s.error();
  return Placement{range, std::move(around)};
}

}  // namespace

Status CheckRank(const Model& model, const ParallelConfig& cfg, int pp_rank, const BindOptions& options) {
  return Place(model, cfg, pp_rank, options).status();
}

Expected<Plan> Bind(const Model& model, const ParallelConfig& cfg, int pp_rank, const BindOptions& options) {
  Expected<Placement> placed = Place(model, cfg, pp_rank, options);
  if (!placed) return placed.error();
  const LayerRange range = placed->range;
  const bind::RankStages& around = placed->around;
  const std::span<const StageRef> stages = around.own();
  const RankSpan span{.first = pp_rank == 0,
                      .end = pp_rank + 1 == cfg.pp ? EndKind::kFinalNorm : EndKind::kSend,
                      .neighbours = around.neighbours};
  const bind::Widths widths{model.hidden, model.hidden * model.residual_streams,
                            options.vocab.value_or(model.dims ? model.dims->vocab : 0)};
  const std::span<const Variant> variants = VariantsOf(cfg);
  std::vector<LinePlan> lines;
  lines.reserve(variants.size());
  const std::vector<bind::Downstream> down = bind::DownstreamOf(stages, span.end);
  const ModelDims* dims = model.dims ? &*model.dims : nullptr;
  for (Variant v : variants) lines.push_back(BindLine(stages, down, {cfg, v, widths, options.fuse, dims}, span));
  const ParallelConfig resolved = ResolvedConfig(cfg);  // a plan states its widths, never "the default"
  Plan plan({.model = model.name,
             .hidden = model.hidden,
             .residual_streams = model.residual_streams,
             .vocab = widths.vocab,
             .wire = options.wire,
             .config = resolved,
             .pp_rank = pp_rank,
             .first_layer = range.first,
             .last_layer = range.last},
            std::move(lines));
  return plan;
}

Expected<Pipeline> BindPipeline(const Model& model, const ParallelConfig& cfg, const BindOptions& options) {
  Pipeline ranks;
  for (int r = 0; r < cfg.pp; ++r) {
    Expected<Plan> plan = Bind(model, cfg, r, options);
    if (!plan) return plan.error();
    ranks.push_back(*std::move(plan));
  }
  return ranks;
}

}  // namespace seam

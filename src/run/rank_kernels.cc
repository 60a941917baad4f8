#include "run/rank_kernels.h"

#include <fmt/format.h>

#include "seam/stage_shape.h"

namespace seam::exec {
namespace {

// This rank's share of the stage's weights: its position in the group
// they are split over (seam/stage_shape.h), or all of them.
Shard ShardOf(const StageDecl& d, const ParallelConfig& cfg, RankCoord me) {
  const std::optional<Group> g = ShapeOf(d, cfg).shard;
  if (g == Group::kAttnTp) return {me.attn_tp_rank, cfg.attn_tp()};
  if (g == Group::kTp) return {TpRank(cfg, me), cfg.tp};
  if (g == Group::kEp) return {TpRank(cfg, me) % cfg.ep_size(), cfg.ep_size()};
  SEAM_CHECK(!g.has_value(), "weights split over a group that is neither tp, attn_tp nor ep");
  return {0, 1};
}

std::unique_ptr<StreamKernel> StreamsOf(const RunContext& ctx, const std::string& prefix, bool head) {
  const Model& m = ctx.model;
  return std::make_unique<StreamKernel>(ctx.weights, prefix, head, m.residual_streams, m.hidden, *m.dims, ctx.numerics);
}

StageKernels Build(const RunContext& ctx, const StageRef& s, const ParallelConfig& cfg, RankCoord me) {
  const Numerics& n = ctx.numerics;
  StageKernels k;
  switch (s.decl.kind) {
    case StageKind::kNoOp: return k;
    case StageKind::kLinear: k.linear = std::make_unique<LinearKernel>(s, ctx.weights, n); break;
    case StageKind::kAttention:
      k.attention = std::make_unique<AttentionKernel>(s, ctx.model, ctx.weights, ShardOf(s.decl, cfg, me), n, cfg.dcp);
      break;
    case StageKind::kMixer: k.mixer = MakeMixerKernel(s, ctx.model, ctx.weights, ShardOf(s.decl, cfg, me), n); break;
    case StageKind::kDenseFfn:
      k.ffn = std::make_unique<FfnKernel>(ctx.weights, StagePrefix(s), DenseShape(s.decl, *ctx.model.dims),
                                          ShardOf(s.decl, cfg, me), n);
      break;
    case StageKind::kSparseFfn:
      k.moe = std::make_unique<MoeKernel>(s, ctx.model, ctx.weights, ShardOf(s.decl, cfg, me), cfg.moe, n);
      break;
  }
  if (ctx.model.residual_streams > 1) k.streams = StreamsOf(ctx, StagePrefix(s), false);
  return k;
}

}  // namespace

RankKernels::RankKernels(const RunContext& ctx, const LinePlan& line, const ParallelConfig& cfg, RankCoord me) {
  for (const StagePlan& s : line.stages) {
    stages_.emplace(s.index, Build(ctx, ctx.stages[static_cast<size_t>(s.index)], cfg, me));
  }
  if (ctx.model.residual_streams > 1 && line.end.kind == EndKind::kFinalNorm) {
    head_ = StreamsOf(ctx, kStreamHeadName, true);
  }
}

const StageKernels& RankKernels::Of(int stage) const {
  auto it = stages_.find(stage);
  SEAM_CHECK(it != stages_.end(), fmt::format("stage {} is not on this rank", stage));
  return it->second;
}

}  // namespace seam::exec

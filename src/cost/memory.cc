// What each rank holds: its shard of the weights and its share of the cache.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cost/cache.h"
#include "seam/cost.h"
#include "seam/pipeline.h"
#include "seam/stage_shape.h"
#include "seam/weight_specs.h"

namespace seam {
namespace {

// How many ways one of a stage's weights is split over the ranks that hold it.
int SplitOf(const WeightSpec& w, const StageDecl& d, const ParallelConfig& cfg) {
  if (d.kind == StageKind::kNoOp || w.vector || w.held == Held::kWhole) return 1;
  if (w.held == Held::kShared && cfg.moe == MoeMode::kA2a) return 1;
  const StageShape shape = ShapeOf(d, cfg);
  return shape.shard ? GroupSize(cfg, *shape.shard) : 1;
}

}  // namespace

MemoryUse MemoryOf(const Model& m, const ParallelConfig& cfg, int replicas, const Workload& load,
                   const MemoryOptions& o) {
  Expected<std::vector<WeightSpec>> specs = WeightSpecs(m);
  if (!specs) return {};
  return MemoryOf(m, *specs, cfg, replicas, load, o);
}

MemoryUse MemoryOf(const Model& m, const std::vector<WeightSpec>& specs, const ParallelConfig& cfg, int replicas,
                   const Workload& load, const MemoryOptions& o) {
  MemoryUse fullest;
  Expected<std::vector<LayerRange>> ranges = SplitLayers(cfg, m.num_layers);
  if (!ranges || !m.dims) return fullest;
  const std::vector<StageRef> stages = StagesOf(m, 0, m.num_layers);
  const ModelDims& dims = *m.dims;
  const double kv_bytes = RowBytes(o.kv, 1);
  // Sequences one rank caches: its replica's share, split over DP groups.
  const double sequences = static_cast<double>(load.batch) / replicas / cfg.attn_dp;
  for (size_t r = 0; r < ranges->size(); ++r) {
    const LayerRange range = (*ranges)[r];
    MemoryUse use{.pp_rank = static_cast<int>(r)};
    for (const WeightSpec& w : specs) {
      const double elements = static_cast<double>(w.rows) * w.cols;
      if (w.stage < 0) {
        // The embedding on the first rank (vocabulary-parallel over the TP
        // group, or whole under attention DP); the final norm and the LM
        // head (vocabulary-parallel over its group) on the last.
        const bool embedding = w.name == kEmbeddingName;
        const StageShape shape = embedding ? EmbeddingShape(cfg) : LmHeadShape(cfg);
        const int split = w.name == kFinalNormName || !shape.shard ? 1 : GroupSize(cfg, *shape.shard);
        if (embedding ? r == 0 : r + 1 == ranges->size()) use.weights += elements * o.weight_bytes / split;
        continue;
      }
      const StageRef& s = stages[static_cast<size_t>(w.stage)];
      if (s.layer < range.first || s.layer >= range.last) continue;
      use.weights += elements * o.weight_bytes / SplitOf(w, s.decl, cfg);
    }
    for (const StageRef& s : stages) {
      if (s.layer < range.first || s.layer >= range.last) continue;
      const CacheRow c = CacheOf(s.decl, dims, cfg, kv_bytes);
      const int held = s.decl.window > 0 ? std::min(s.decl.window, load.context) : load.context;
      use.cache += sequences * (c.per_token * held + c.per_sequence);
    }
    if (use.total() > fullest.total()) fullest = use;
  }
  return fullest;
}

Expected<double> ParseWeightBytes(std::string_view text) {
  if (text == "bf16" || text == "fp16") return 2.0;
  if (text == "fp8") return 1.0;
  if (text == "fp32") return 4.0;
  return InvalidArgument(fmt::format("'{}' is not a weight dtype: bf16, fp16, fp8 or fp32", text));
}

}  // namespace seam

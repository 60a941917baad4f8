// Neighbour declarations: a pipeline rank learns the stages on either side of
// its layers from the model's shared declaration function, so both ranks at
// a cut resolve the stage there identically.
#include <fmt/format.h>

#include "bind/rank.h"

namespace seam::bind {
namespace {

std::optional<StageRef> LastStageOf(const Model& m, int layer) {
  const std::vector<StageRef> stages = StagesOf(m, layer, layer + 1);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    if (it->decl.kind != StageKind::kNoOp) return *it;
  }
  return std::nullopt;
}

std::optional<StageRef> FirstStageOf(const Model& m, int layer) {
  for (const StageRef& s : StagesOf(m, layer, layer + 1)) {
    if (s.decl.kind != StageKind::kNoOp) return s;
  }
  return std::nullopt;
}

}  // namespace

Neighbours NeighboursOf(const Model& m, LayerRange range) {
  Neighbours n;
  // No-op stages pass the pending add on, so the neighbour is the nearest
  // stage that does something, however many layers away.
  for (int layer = range.first - 1; layer >= 0 && !n.before; --layer) n.before = LastStageOf(m, layer);
  for (int layer = range.last; layer < m.num_layers && !n.after; ++layer) n.after = FirstStageOf(m, layer);
  return n;
}

Status CheckBuiltStages(const Model& m, LayerRange range, const std::vector<std::vector<StageDecl>>& built,
                        int pp_rank) {
  const int layers = range.last - range.first;
  if (static_cast<int>(built.size()) != layers) {
    return InvalidArgument(fmt::format("pipeline rank {} built {} layers but holds layers {}..{} ({} layers)", pp_rank,
                                       built.size(), range.first, range.last - 1, layers));
  }
  for (int i = 0; i < layers; ++i) {
    const int layer = range.first + i;
    const std::vector<StageDecl> declared = m.layer(layer);
    const std::vector<StageDecl>& got = built[static_cast<size_t>(i)];
    if (got.size() != declared.size()) {
      return InvalidArgument(fmt::format("pipeline rank {} built layer {} with {} stages but the model's declaration "
                                         "function declares {}",
                                         pp_rank, layer, got.size(), declared.size()));
    }
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string diff = FirstDifference(got[k], declared[k]);
      if (!diff.empty()) {
        return InvalidArgument(fmt::format("pipeline rank {} built layer {} stage {} differently from the model's "
                                           "declaration function: {} (built vs declared)",
                                           pp_rank, layer, k, diff));
      }
    }
  }
  return Status::Ok();
}

}  // namespace seam::bind

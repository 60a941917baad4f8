// Neighbour declarations: a pipeline rank learns the stages on either side of
// its layers from the model's shared declaration function, so both ranks at
// a cut resolve the stage there identically.
#include <fmt/format.h>

#include "bind/rank.h"

namespace seam::bind {

RankStages StagesAround(const Model& m, LayerRange range) {
  SEAM_CHECK(0 <= range.first && range.first <= range.last && range.last <= m.num_layers,
             "layer range outside the model");
  RankStages out;
  // Room for one stage a layer and the two neighbours: one allocation for
  // the common case.
  out.around.reserve(static_cast<size_t>(range.last - range.first) + 2);
  // No-op stages pass the pending add on, so a neighbour is the nearest
  // stage that does something, however many layers away.
  std::optional<StageRef>& before = out.neighbours.before;
  std::optional<StageRef>& after = out.neighbours.after;
  VisitStages(m, m.num_layers, [&](const StageRef& s) {
    if (s.layer >= range.first && s.layer < range.last) {
      out.around.push_back(s);
    } else if (s.decl.kind == StageKind::kNoOp) {
      return true;
    } else if (s.layer < range.first) {
      before = s;
    } else {
      after = s;
      return false;  // the nearest stage after the rank's that does something
    }
    return true;
  });
  if (before) out.around.insert(out.around.begin(), *before);
  if (after) out.around.push_back(*after);
  return out;
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
      return InvalidArgument(
          fmt::format("pipeline rank {} built layer {} with {} stages but the model's declaration "
                      "function declares {}",
                      pp_rank, layer, got.size(), declared.size()));
    }
    for (size_t k = 0; k < got.size(); ++k) {
      const std::string diff = FirstDifference(got[k], declared[k]);
      if (!diff.empty()) {
        return InvalidArgument(
            fmt::format("pipeline rank {} built layer {} stage {} differently from the model's "
                        "declaration function: {} (built vs declared)",
                        pp_rank, layer, k, diff));
      }
    }
  }
  return Status::Ok();
}

}  // namespace seam::bind

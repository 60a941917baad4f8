// Re-binding a plan's declared stages to compare with the plan.
#include "seam/rebind.h"

#include <fmt/format.h>

#include <map>

#include "seam/bind.h"
#include "seam/plan_io.h"

namespace seam {
namespace {

bool UsesFusedSteps(const Pipeline& ranks) {
  for (const Plan& p : ranks) {
    for (const LinePlan& line : p.lines()) {
      for (const StagePlan& s : line.stages) {
        for (const Step& step : s.entry) {
          if (step.kind == StepKind::kAllReduceAddNorm) return true;
        }
      }
      for (const Step& step : line.end.steps) {
        if (step.kind == StepKind::kAllReduceAddNorm) return true;
      }
    }
  }
  return false;
}

std::vector<std::string> CompareBound(const Pipeline& ranks, const Model& model, bool fuse) {
  const Expected<Pipeline> bound =
      BindPipeline(model, ranks.front().config(),
                   {.fuse = fuse, .wire = ranks.front().header().wire, .vocab = ranks.front().header().vocab});
  if (!bound) return {"seam does not bind these stages under this configuration: " + bound.error().message};
  return Diff(ranks, *bound);
}

}  // namespace

Model DeclaredModel(const Pipeline& ranks) {
  std::map<int, std::vector<StageDecl>> layers;
  for (const Plan& p : ranks) {
    for (const StagePlan& s : p.lines().front().stages) layers[s.layer].push_back(s.decl);
  }
  const PlanHeader& h = ranks.front().header();
  std::vector<std::vector<StageDecl>> stages;
  for (auto& [layer, decls] : layers) stages.push_back(std::move(decls));
  Model m{.name = h.model,
          .num_layers = static_cast<int>(stages.size()),
          .hidden = h.hidden,
          .residual_streams = h.residual_streams,
          .layer = [stages](int i) { return stages.at(static_cast<size_t>(i)); }};
  return m;
}

std::vector<std::string> CompareWithBinder(const Pipeline& ranks) {
  const Model model = DeclaredModel(ranks);
  const bool fused = UsesFusedSteps(ranks);
  std::vector<std::string> diff = CompareBound(ranks, model, fused);
  if (diff.empty() || fused) return diff;
  // A plan without a fused step may be the fused binding of a stack that
  // never fuses: compare with both and keep the closer.
  std::vector<std::string> other = CompareBound(ranks, model, true);
  return other.size() < diff.size() ? other : diff;
}

}  // namespace seam

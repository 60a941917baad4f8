// The collectives at every boundary of a model under a parallel
// configuration, as an engine's own check would read them from seam's plan.
//
//   boundaries [CONFIG.JSON]   (default: the catalogue's deepseek-v2-lite)
#include <cstdio>
#include <string>

#include "seam/checked.h"
#include "seam/model_source.h"
#include "seam/step_kind.h"
#include "seam/version.h"

int main(int argc, char** argv) {
  const std::string config = argc > 1 ? argv[1] : "";
  seam::Expected<seam::Model> model = seam::ChooseModel(config.empty() ? "deepseek-v2-lite" : "", config, 0);
  if (!model) {
    std::fprintf(stderr, "%s\n", model.error().message.c_str());
    return 2;
  }
  // SGLang's --tp-size 4 --enable-dp-attention --dp-size 2 --moe-dense-tp-size 1 --moe-a2a-backend deepep.
  const seam::ParallelConfig cfg{.tp = 4, .attn_dp = 2, .dense_tp = 1, .moe = seam::MoeMode::kA2a};
  seam::Expected<seam::Pipeline> plans = seam::BindPipelineChecked(*model, cfg);
  if (!plans) {
    std::fprintf(stderr, "%s\n", plans.error().message.c_str());
    return 2;
  }
  std::printf("seam %s: %s, tp=4 attn_dp=2 dense_tp=1 moe=a2a\n", SEAM_VERSION_STRING, model->name.c_str());
  const seam::LinePlan& line = plans->front().lines().front();
  for (const seam::StagePlan& stage : line.stages) {
    std::printf("stage %d (%s):", stage.index, std::string(seam::Name(stage.decl.kind)).c_str());
    for (const auto* side : {&stage.entry, &stage.compute, &stage.exit}) {
      for (const seam::Step& step : *side) {
        if (!seam::IsCollective(step.kind)) continue;
        std::printf(" %s(%s)", std::string(seam::Name(step.kind)).c_str(),
                    std::string(seam::Name(*step.group)).c_str());
      }
    }
    std::printf("\n");
  }
  return 0;
}

// `--engine sglang|vllm -- ARGS`: the model and configuration an engine's own
// command line implies, with what seam read past said once on stderr.
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "seam/hf_config.h"

namespace seam::cli {

Expected<EngineChoice> FromEngine(const EngineFlags& e, int layers) {
  Expected<EngineLaunch> launch = ParseEngineArgs(*e.engine, e.args);
  if (!launch) return launch.error();
  Expected<std::string> config = ConfigPathOf(*launch);
  if (!config) return config.error();
  Expected<Model> model = ChooseModel("", *config, layers);
  if (!model) return model.error();
  Expected<EngineTranslation> t = Translate(*launch, *model);
  if (!t) return t.error();
  std::cerr << fmt::format("seam: {} flags read as: {} (model {})\n", DisplayName(*e.engine), t->seam_flags, *config);
  for (const std::string& n : t->notes) std::cerr << "seam: " << n << "\n";
  for (const std::string& i : launch->ignored) std::cerr << "seam: ignored " << i << "\n";
  return EngineChoice{.hf_config = *config, .model = *std::move(model), .config = t->config, .wire = t->wire,
                      .replicas = t->replicas};
}

Status SplitEngineArgs(int& argc, char** argv, EngineFlags& e) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--") continue;
    e.args.assign(argv + i + 1, argv + argc);
    e.separated = true;
    argc = i;
    break;
  }
  return Status::Ok();
}

Status CheckEngineArgs(const EngineFlags& e) {
  if (e.engine && !e.separated) {
    return InvalidArgument(fmt::format("--engine {} reads the engine's own flags after --, e.g. seam plan --engine "
                                       "sglang -- --model-path DIR --tp-size 8",
                                       Name(*e.engine)));
  }
  if (!e.engine && e.separated) {
    return InvalidArgument("the arguments after -- are an engine's flags: give --engine sglang or --engine vllm");
  }
  return Status::Ok();
}

}  // namespace seam::cli

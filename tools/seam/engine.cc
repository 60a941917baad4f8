// `--engine sglang|vllm -- ARGS`: the model and configuration an engine's own
// command line implies, with what seam read past said once on stderr.
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "seam/hf_config.h"

namespace seam::cli {

Expected<EngineChoice> FromEngine(const EngineFlags& e, int layers) {
  Expected<EngineChoice> c = ChooseEngineLaunch(*e.engine, e.args, layers, e.version);
  if (!c) return c.error();
  std::cerr << fmt::format("seam: {} flags read as: {} (model {})\n", DisplayName(*e.engine), c->seam_flags,
                           c->hf_config);
  for (const std::string& n : c->notes) std::cerr << "seam: " << n << "\n";
  for (const std::string& i : c->ignored) std::cerr << "seam: ignored " << i << "\n";
  return c;
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
    return InvalidArgument(
        fmt::format("--engine {} reads the engine's own flags after --, e.g. seam plan --engine "
                    "sglang -- --model-path DIR --tp-size 8",
                    Name(*e.engine)));
  }
  if (!e.engine && e.separated) {
    return InvalidArgument("the arguments after -- are an engine's flags: give --engine sglang or --engine vllm");
  }
  return Status::Ok();
}

}  // namespace seam::cli

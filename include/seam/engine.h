// seam/engine.h — an inference engine's own command line, read as the plan
// it implies.
//
// SGLang and vLLM name their parallel sizes differently and mean different
// things by them (vLLM's tensor-parallel size is per data-parallel rank;
// SGLang's is the whole group its DP-attention groups split). A launch is
// read first without the model (flags, values, contradictions), then
// translated for the model it names, applying the rules the engine applies
// at start-up.
//
//   Expected<EngineLaunch> l = ParseEngineArgs(Engine::kSglang, {"--model-path", "cfg.json", "--tp-size", "8"});
//   Expected<Model> m = LoadHfConfig(ConfigPathOf(*l).value());
//   Expected<EngineTranslation> t = Translate(*l, *m);   // t->config, t->wire, t->notes
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seam/error.h"
#include "seam/model.h"
#include "seam/topology.h"
#include "seam/wire.h"

namespace seam {

enum class Engine { kSglang, kVllm };
std::string_view Name(Engine e);         // "sglang", "vllm"
std::string_view DisplayName(Engine e);  // "SGLang", "vLLM"
Expected<Engine> ParseEngine(std::string_view text);

// What the command line says, in the engine's own terms.
struct EngineLaunch {
  Engine engine = Engine::kSglang;
  std::string model_path;  // a directory holding config.json, or the config itself
  int tp = 1;
  int dp = 1;
  int pp = 1;
  std::optional<int> ep;            // SGLang --ep-size
  bool dp_attention = false;        // SGLang --enable-dp-attention
  std::optional<int> moe_dense_tp;  // SGLang --moe-dense-tp-size
  std::string a2a_backend;          // SGLang --moe-a2a-backend, vLLM --all2all-backend ("": the default)
  bool expert_parallel = false;     // vLLM --enable-expert-parallel
  bool input_scattered = false;     // SGLang --enable-attn-tp-input-scattered
  bool dp_lm_head = false;          // SGLang --enable-dp-lm-head
  std::string dtype = "auto";       // --dtype
  int nnodes = 1;                   // SGLang --nnodes (placement only)
  // Each flag read but not modelled, once, with why: "--port: serving, not communication".
  std::vector<std::string> ignored;
};

// Reads `args` as the engine's launcher would: --flag VALUE or --flag=VALUE,
// the engine's aliases, a flag given twice is refused, an unknown flag is
// refused (a misspelt size must not plan the default).
Expected<EngineLaunch> ParseEngineArgs(Engine engine, const std::vector<std::string>& args);

// The config.json the launch's model path names (a directory's config.json).
Expected<std::string> ConfigPathOf(const EngineLaunch& l);

struct EngineTranslation {
  ParallelConfig config;
  int replicas = 1;  // copies of the pipeline the engine's data parallelism runs side by side
  WireDtypes wire;
  std::vector<std::string> notes;  // how the engine's sizes map onto seam's, one line each
  std::string seam_flags;          // the same configuration as seam's own flags
};

// The configuration the engine runs `model` in, or the error the engine
// would stop with at start-up (naming the engine and its reason), or seam's
// own rejection.
Expected<EngineTranslation> Translate(const EngineLaunch& l, const Model& model);

// A launch read, its model loaded (cut to `layers` when above 0) and
// translated: what `seam plan --engine E -- ARGS` binds.
struct EngineChoice {
  std::string hf_config;  // the config.json the model path names
  Model model;
  ParallelConfig config;
  WireDtypes wire;
  int replicas = 1;
  std::string seam_flags;            // the same configuration as seam's own flags
  std::vector<std::string> notes;    // how the engine's sizes map onto seam's
  std::vector<std::string> ignored;  // flags read but not modelled, with why
};
Expected<EngineChoice> ChooseEngineLaunch(Engine engine, const std::vector<std::string>& args, int layers);

// seam's flags for a configuration and wire dtypes, as `seam plan` takes them.
std::string SeamFlags(const ParallelConfig& cfg, const WireDtypes& wire);

}  // namespace seam

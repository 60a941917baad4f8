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

// The versions of the engine whose flags seam has, newest release first and
// "main" last; the first is what a launch is read as by default.
std::vector<std::string> EngineVersions(Engine e);

// Whether the engine's newest flag table has `flag` under one of its names
// (exactly: no prefix, no underscores), for telling a user who typed an
// engine's flag on seam's own command line where it belongs.
bool EngineHasFlag(Engine e, std::string_view flag);

// What the command line says, in the engine's own terms.
struct EngineLaunch {
  Engine engine = Engine::kSglang;
  std::string version;     // the engine version whose flag table read it ("main", "0.5.6")
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
  bool two_batch_overlap = false;   // SGLang --enable-two-batch-overlap, vLLM --enable-dbo
  bool eplb = false;                // --enable-eplb
  double memory_fraction = 0;       // SGLang --mem-fraction-static, vLLM --gpu-memory-utilization (0: the default)
  int prefill_chunk = 0;            // SGLang --chunked-prefill-size, vLLM --max-num-batched-tokens (0: the default)
  int cp = 1;                       // SGLang --attn-cp-size, vLLM --prefill-context-parallel-size
  bool prefill_cp = false;          // SGLang --enable-prefill-cp
  std::string cp_strategy;          // SGLang --cp-strategy ("": none given)
  int dcp = 1;                      // --decode-context-parallel-size (SGLang --dcp-size, vLLM -dcp)
  std::string dcp_backend;          // --dcp-comm-backend ("": the default, ag_rs)
  int dcp_interleave = 1;           // vLLM --cp-kv-cache-interleave-size: tokens a DCP rank holds in a run
  std::string dtype = "auto";       // --dtype
  std::string quantization;         // --quantization ("": the checkpoint's own)
  std::string kv_cache_dtype = "auto";
  // Placement: nodes, this node's rank, and vLLM's data-parallel placement.
  int nnodes = 1;
  int node_rank = 0;
  std::optional<int> dp_local;  // vLLM --data-parallel-size-local
  int dp_start_rank = 0;        // vLLM --data-parallel-start-rank
  std::optional<int> dp_rank;   // vLLM --data-parallel-rank (one instance per DP rank)
  std::string dp_address;       // vLLM --data-parallel-address
  bool headless = false;        // vLLM --headless
  // From the environment before the command.
  std::string dispatch_dtype = "auto";  // SGLang --deepep-dispatcher-output-dtype
  bool dispatch_bf16 = false;           // SGLANG_DEEPEP_BF16_DISPATCH
  std::string pp_partition;             // SGLANG_PP_LAYER_PARTITION, VLLM_PP_LAYER_PARTITION ("N,N,...")
  // How the line was read, one line each: a prefix taken for its flag, a
  // repeated flag's last value kept, an old spelling mapped to its successor.
  std::vector<std::string> read_notes;
  // Each flag read but not modelled, once, with why: "--port: serving, not communication".
  std::vector<std::string> ignored;
};

// Reads `args` as the engine's launcher would (seam/engine docs and
// docs/engine-tables.md): the flag table of `version` ("" the newest
// release), --flag VALUE or --flag=VALUE, a repeated flag's last value, the
// engine's aliases and prefixes, a pasted command with its environment. A
// flag the engine does not know is refused as the engine refuses it (a
// misspelt size must not plan the default); a flag that changes
// communication seam does not model is refused saying so. One argument
// holding a whole line is split as a shell would.
Expected<EngineLaunch> ParseEngineArgs(Engine engine, const std::vector<std::string>& args,
                                       std::string_view version = "");

// The config.json the launch's model path names (a directory's config.json).
Expected<std::string> ConfigPathOf(const EngineLaunch& l);

// The checkpoint's own quantization (config.json's quantization_config), as
// the engines read it: quant_method ("fp8", "mxfp4", ...; "" unquantized)
// and an fp8 checkpoint's scale block ({128, 128} for DeepSeek-V3's).
struct CheckpointQuant {
  std::string method;
  std::vector<int> weight_block;
};
Expected<CheckpointQuant> CheckpointQuantOf(const std::string& config_path);

// The weights the engine loads: what they are and the bytes a parameter
// takes on the GPU (fp8 block-scaled 1 and its scales; MXFP4 a half byte
// and a scale per 32).
struct WeightFormat {
  std::string name = "bf16";
  double bytes = 2;
};

struct EngineTranslation {
  ParallelConfig config;
  int replicas = 1;  // copies of the pipeline the engine's data parallelism runs side by side
  int nodes = 1;     // the nodes the deployment spans, from the engine's placement flags
  WireDtypes wire;
  WeightFormat weights;
  std::optional<WireDtype> kv;     // the KV cache's dtype; none for a format seam cannot count
  bool two_batch_overlap = false;  // each batch as two halves, one's all-to-alls behind the other's compute
  std::vector<std::string> notes;  // how the engine's sizes map onto seam's, one line each
  std::string seam_flags;          // the same configuration as seam's own flags
};

// The configuration the engine runs `model` in, or the error the engine
// would stop with at start-up (naming the engine and its reason), or seam's
// own rejection.
Expected<EngineTranslation> Translate(const EngineLaunch& l, const Model& model,
                                      const CheckpointQuant& checkpoint = {});

// A launch read, its model loaded (cut to `layers` when above 0) and
// translated: what `seam plan --engine E -- ARGS` binds.
struct EngineChoice {
  std::string hf_config;  // the config.json the model path names
  Model model;
  ParallelConfig config;
  WireDtypes wire;
  int replicas = 1;
  int nodes = 1;
  WeightFormat weights;
  std::optional<WireDtype> kv;
  bool two_batch_overlap = false;
  double memory_fraction = 0;        // the launch's share of GPU memory (0: the engine's default)
  int prefill_chunk = 0;             // the launch's prefill chunk (0: the engine's default)
  std::string quantization;          // the launch's --quantization ("": the checkpoint's own)
  std::string seam_flags;            // the same configuration as seam's own flags
  std::vector<std::string> notes;    // how the engine's sizes map onto seam's
  std::vector<std::string> ignored;  // flags read but not modelled, with why
};
Expected<EngineChoice> ChooseEngineLaunch(Engine engine, const std::vector<std::string>& args, int layers,
                                          std::string_view version = "");

// seam's flags for a configuration and wire dtypes, as `seam plan` takes them.
std::string SeamFlags(const ParallelConfig& cfg, const WireDtypes& wire);

// A configuration to write as an engine's launch line: the layout, how many
// copies of it run side by side, the nodes it spans and its dtypes.
struct EmitRequest {
  Engine engine = Engine::kSglang;
  std::string version;     // the flag table to write for ("" the newest)
  std::string model_path;  // the model's config.json (its directory is written) or directory
  ParallelConfig config;
  int replicas = 1;
  int nodes = 1;
  WireDtypes wire;
  std::string quantization;        // written as --quantization ("": the checkpoint's own weights)
  std::optional<WireDtype> kv;     // the KV cache's dtype (none: the activations')
  bool two_batch_overlap = false;  // SGLang's --enable-two-batch-overlap, vLLM's --enable-dbo
};

// The launch lines: one per node, node 0 first (the other nodes' lines name
// node 0 as $NODE0_ADDR); notes say what the reader must know (a default the
// engine applies, a knob that makes no difference to this model).
struct EngineLines {
  std::vector<std::string> lines;
  std::vector<std::string> notes;
};

// The engine's launch line for the request, read back through the engine's
// front door before it is returned: every line translates to the same
// configuration (every knob that changes this model's plan), replicas,
// nodes and wire dtypes, or the engine's own start-up refusal is returned.
// A configuration the engine has no flags for is refused saying which knob
// and why ("vLLM cannot run this configuration: ...").
Expected<EngineLines> EmitLaunch(const EmitRequest& r, const Model& model, const CheckpointQuant& checkpoint = {});

// The configuration as it changes `model`'s plan: the dense FFN's width
// where the model has a dense FFN, the MoE mode and expert group where it
// has experts, the layers of every pipeline rank.
ParallelConfig Effective(const ParallelConfig& cfg, const Model& model);

}  // namespace seam

// Engine front doors: each engine's flags read as the configuration the
// engine runs, each start-up rule refused with the engine's reason, and
// nothing read past in silence.
#include <gtest/gtest.h>

#include "seam/engine.h"
#include "seam/hf_config.h"

namespace seam {
namespace {

using Args = std::vector<std::string>;

const std::string kConfigs = SEAM_HF_CONFIGS;

Model Load(const std::string& name) {
  Expected<Model> m = LoadHfConfig(kConfigs + "/" + name);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

// The seam flags an engine command line reads as, or its error.
std::string FlagsOf(Engine e, const Args& args, const std::string& config) {
  Expected<EngineLaunch> l = ParseEngineArgs(e, args);
  if (!l) return "error: " + l.error().message;
  Expected<EngineTranslation> t = Translate(*l, Load(config));
  if (!t) return "error: " + t.error().message;
  return t->seam_flags;
}

std::string Sglang(Args args, const std::string& config = "deepseek-v2-lite.json") {
  args.insert(args.begin(), {"--model-path", kConfigs + "/" + config});
  return FlagsOf(Engine::kSglang, args, config);
}

std::string Vllm(Args args, const std::string& config = "deepseek-v2-lite.json") {
  args.insert(args.begin(), kConfigs + "/" + config);
  return FlagsOf(Engine::kVllm, args, config);
}

TEST(SglangDoor, ReadsEveryLayoutFlagUnderItsAliases) {
  EXPECT_EQ(Sglang({"--tp-size", "8"}), "--tp 8");
  EXPECT_EQ(Sglang({"--tp", "8"}), "--tp 8");
  EXPECT_EQ(Sglang({"--tensor-parallel-size=8"}), "--tp 8");
  EXPECT_EQ(Sglang({"--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", "--moe-dense-tp-size", "1",
                    "--moe-a2a-backend", "deepep", "--pp-size", "2"}),
            "--tp 8 --attn-dp 4 --dense-tp 1 --moe a2a --pp 2 --dispatch-dtype fp8");
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "2", "--enable-dp-attention", "--pp-size", "2", "--dtype", "float16"}),
            "--tp 8 --attn-dp 2 --pp 2 --act-dtype fp16");
  // --tp and --dp are unique prefixes of --tp-size and --dp-size; --pp is
  // not (three flags start with it), and argparse says so.
  EXPECT_EQ(Sglang({"--tp", "8", "--pp", "2"}),
            "error: SGLang refuses this at start-up: ambiguous option: --pp could match --pp-size, "
            "--pp-max-micro-batch-size, --pp-async-batch-depth");
  EXPECT_EQ(Sglang({"--tp", "4", "--enable-attn-tp-input-scattered"}, "llama-3.1-8b.json"), "--tp 4 --input-scattered");
}

TEST(SglangDoor, DataParallelWithoutDpAttentionIsReplicas) {
  Expected<EngineLaunch> l =
      ParseEngineArgs(Engine::kSglang, {"--model-path", kConfigs + "/llama-3.1-8b.json", "--tp", "2", "--dp", "4"});
  ASSERT_TRUE(l.ok());
  Expected<EngineTranslation> t = Translate(*l, Load("llama-3.1-8b.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->seam_flags, "--tp 2");
  EXPECT_NE(std::find(t->notes.begin(), t->notes.end(),
                      "--dp-size 4 without --enable-dp-attention: 4 replicas of the model, each planned alone"),
            t->notes.end());
}

// Expert parallel without an all-to-all backend places experts; the MoE's
// partial sum still spans the TP group, so the boundaries are TP-MoE's.
TEST(SglangDoor, ExpertParallelWithoutA2aKeepsTpMoeBoundaries) {
  EXPECT_EQ(Sglang({"--tp", "8", "--ep", "4"}, "qwen3-30b-a3b.json"), "--tp 8");
  EXPECT_EQ(Sglang({"--tp", "8", "--ep", "8", "--moe-a2a-backend", "deepep"}, "qwen3-30b-a3b.json"),
            "--tp 8 --moe a2a --dispatch-dtype fp8");
}

// An a2a backend spans the whole TP group: SGLang sets --ep-size to the TP
// size and logs it, where it once refused a smaller one.
TEST(SglangDoor, AnA2aBackendSetsTheEpSizeToTheTpSize) {
  Expected<EngineLaunch> l =
      ParseEngineArgs(Engine::kSglang, {"--model-path", "x", "--tp", "8", "--ep", "4", "--moe-a2a-backend", "deepep"});
  ASSERT_TRUE(l.ok());
  Expected<EngineTranslation> t = Translate(*l, Load("deepseek-v2-lite.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->seam_flags, "--tp 8 --moe a2a --dispatch-dtype fp8");
  EXPECT_NE(std::find(t->notes.begin(), t->notes.end(),
                      "--moe-a2a-backend deepep: SGLang sets the expert parallel size to the TP size, 8 (--ep-size 4 "
                      "adjusted, as its log says)"),
            t->notes.end());
}

// DeepEP dispatches fp8 unless SGLANG_DEEPEP_BF16_DISPATCH or the flag says bf16.
TEST(SglangDoor, DeepEpDispatchesFp8UnlessToldBf16) {
  const Args deepep = {"--tp", "4", "--dp", "4", "--enable-dp-attention", "--moe-a2a-backend", "deepep"};
  EXPECT_EQ(Sglang(deepep), "--tp 4 --attn-dp 4 --moe a2a --dispatch-dtype fp8");
  Args flag = deepep;
  flag.insert(flag.end(), {"--deepep-dispatcher-output-dtype", "bf16"});
  EXPECT_EQ(Sglang(flag), "--tp 4 --attn-dp 4 --moe a2a");
  EXPECT_EQ(FlagsOf(Engine::kSglang,
                    {"SGLANG_DEEPEP_BF16_DISPATCH=1 python3 -m sglang.launch_server --model-path " + kConfigs +
                     "/deepseek-v2-lite.json --tp 4 --dp 4 --enable-dp-attention --moe-a2a-backend deepep"},
                    "deepseek-v2-lite.json"),
            "--tp 4 --attn-dp 4 --moe a2a");
}

// dp 1 turns DP attention and the DP LM head off (not an error).
TEST(SglangDoor, DpAttentionAndTheDpLmHeadAreTurnedOffAtDpOne) {
  EXPECT_EQ(Sglang({"--tp", "8", "--enable-dp-attention"}), "--tp 8");
  EXPECT_EQ(Sglang({"--tp", "8", "--enable-dp-lm-head"}), "--tp 8");
  Expected<EngineLaunch> l = ParseEngineArgs(
      Engine::kSglang, {"--model-path", "x", "--tp", "8", "--enable-dp-attention", "--enable-dp-lm-head"});
  ASSERT_TRUE(l.ok());
  Expected<EngineTranslation> t = Translate(*l, Load("deepseek-v2-lite.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_NE(std::find(t->notes.begin(), t->notes.end(),
                      "--enable-dp-attention and --enable-dp-lm-head with --dp-size 1: SGLang turns them off"),
            t->notes.end());
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "2", "--enable-dp-lm-head"}),
            "error: SGLang refuses this at start-up: Please enable dp attention when setting enable_dp_lm_head.");
}

TEST(SglangDoor, TheDenseTpSizeIsOneOrTheTpSize) {
  EXPECT_EQ(Sglang({"--tp", "8", "--moe-dense-tp-size", "8"}), "--tp 8");
  EXPECT_EQ(Sglang({"--tp", "8", "--moe-dense-tp-size", "1"}), "--tp 8 --dense-tp 1");
}

TEST(SglangDoor, NodesDivideTheTpTimesPpRanksAndPlainDpStaysOnOneNode) {
  EXPECT_EQ(Sglang({"--tp", "8", "--nnodes", "3"}),
            "error: SGLang refuses this at start-up: tp_size must be divisible by number of nodes (--tp-size 8 x "
            "--pp-size 1 over --nnodes 3)");
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "2", "--nnodes", "2"}),
            "error: SGLang refuses this at start-up: multi-node data parallel is not supported unless dp attention!");
  Expected<EngineChoice> c = ChooseEngineLaunch(
      Engine::kSglang, {"--model-path", kConfigs + "/kimi-k2.json", "--tp", "16", "--nnodes", "2", "--node-rank", "1"},
      0);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->nodes, 2);
  EXPECT_EQ(c->weights.name, "fp8");  // the checkpoint's block-scaled fp8
}

// SGLANG_PP_LAYER_PARTITION gives the layers per rank, with SGLang's own errors.
TEST(SglangDoor, TheLayerPartitionComesFromTheEnvironment) {
  auto line = [](const std::string& env) {
    return FlagsOf(Engine::kSglang,
                   {env + " python3 -m sglang.launch_server --model-path " + kConfigs +
                    "/deepseek-v2-lite.json --tp 2 --pp-size 2"},
                   "deepseek-v2-lite.json");
  };
  EXPECT_EQ(line(""), "--tp 2 --pp 2");  // SGLang's own split: the remainder on the last ranks, as seam's
  EXPECT_EQ(line("SGLANG_PP_LAYER_PARTITION=20,7"), "--tp 2 --pp 2 --pp-split 20+7");
  EXPECT_EQ(line("SGLANG_PP_LAYER_PARTITION=20,6"),
            "error: SGLang refuses this at start-up: SGLANG_PP_LAYER_PARTITION: sum(partitions)=26 does not match "
            "num_hidden_layers=27.");
  EXPECT_EQ(line("SGLANG_PP_LAYER_PARTITION=27"),
            "error: SGLang refuses this at start-up: SGLANG_PP_LAYER_PARTITION: len(partitions)=1 does not match "
            "pp_size=2.");
  EXPECT_EQ(line("SGLANG_PP_LAYER_PARTITION=a,b"),
            "error: SGLang refuses this at start-up: SGLANG_PP_LAYER_PARTITION: Invalid partition string: a,b");
}

TEST(SglangDoor, RefusesWhatSglangRefusesAtStartUpNamingItsReason) {
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "3", "--enable-dp-attention"}),
            "error: SGLang refuses this at start-up: assert cfg.tp_size % cfg.dp_size == 0 (--tp-size 8, --dp-size "
            "3: --enable-dp-attention splits the TP group into dp-size attention groups)");
  EXPECT_EQ(Sglang({"--tp", "8", "--moe-dense-tp-size", "2"}),
            "error: SGLang refuses this at start-up: moe_dense_tp_size only supports None, 1, or tp_size currently "
            "(got 2, --tp-size 8)");
  EXPECT_EQ(Sglang({"--tp", "8", "--ep", "3"}),
            "error: SGLang refuses this at start-up: --tp-size 8 is not divisible by --ep-size 3");
  EXPECT_EQ(Sglang({"--tp", "8", "--moe-a2a-backend", "flashinfer"}),
            "error: SGLang refuses this at start-up: Flashinfer MoE A2A is only supported with dp_size == tp_size "
            "and --enable-dp-attention");
  EXPECT_EQ(Sglang({"--tp", "8", "--enable-two-batch-overlap"}),
            "error: SGLang refuses this at start-up: When enabling two batch overlap without an EP a2a backend "
            "(moe_a2a_backend='none'), --enable-dp-attention is required");
  EXPECT_EQ(Sglang({"--tp", "3"}, "llama-3.1-8b.json"),
            "error: SGLang refuses this at start-up: num_attention_heads = 32 does not split over attn_tp = 3 (tp 3 "
            "/ attn_dp 1); attn_tp must divide 32: 1, 2, 4, 8, 16, 32");
  EXPECT_EQ(Sglang({"--moe-a2a-backend", "nccl"}),
            "error: SGLang refuses this at start-up: argument --moe-a2a-backend: invalid choice: 'nccl' (choose from "
            "none, deepep, mooncake, nixl, mori, ascend_fuseep, flashinfer, megamoe, deepep_v2, pplx, ascend_tp)");
  EXPECT_EQ(Sglang({"--dtype", "fp8"}),
            "error: SGLang refuses this at start-up: argument --dtype: invalid choice: 'fp8' (choose from auto, half, "
            "float16, bfloat16, float, float32)");
  EXPECT_EQ(Sglang({"--kv-cache-dtype", "fp8"}),
            "error: SGLang refuses this at start-up: argument --kv-cache-dtype: invalid choice: 'fp8' (choose from "
            "auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16, fp4_e2m1)");
}

TEST(SglangDoor, ExpertsThatDoNotSplitOverEpAreRefused) {
  // Every real config's expert count splits over any ep that divides a
  // power-of-two tp, so the case is DeepSeek-V2-Lite with 66 experts.
  Model m = Load("deepseek-v2-lite.json");
  m.dims->experts = 66;
  Expected<EngineLaunch> l = ParseEngineArgs(Engine::kSglang, {"--model-path", "x", "--tp", "4", "--ep", "4"});
  ASSERT_TRUE(l.ok());
  Expected<EngineTranslation> t = Translate(*l, m);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "SGLang refuses this at start-up: the model's 66 experts do not split over --ep-size 4");
}

TEST(VllmDoor, TensorParallelIsPerDataParallelRankForMoeModels) {
  EXPECT_EQ(Vllm({"--tensor-parallel-size", "2", "--data-parallel-size", "4", "--enable-expert-parallel",
                  "--all2all-backend", "deepep_low_latency", "--pipeline-parallel-size", "2"}),
            "--tp 8 --attn-dp 4 --dense-tp 2 --moe a2a --dp-lm-head --pp 2 --pp-split 14+13");
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "4"}), "--tp 8 --attn-dp 4 --dense-tp 2 --dp-lm-head --reduction rsv");
  // pplx and naive were removed: vLLM falls back to allgather_reducescatter.
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "4", "--all2all-backend", "naive"}),
            "--tp 8 --attn-dp 4 --dense-tp 2 --dp-lm-head --reduction rsv");
  EXPECT_EQ(Vllm({"-tp", "4", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", "pplx"}),
            "--tp 8 --attn-dp 2 --dense-tp 4 --dp-lm-head --reduction rsv");
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "4"}, "llama-3.1-8b.json"), "--tp 2");
  EXPECT_EQ(Vllm({"-tp", "8", "--dtype", "float32"}, "llama-3.1-8b.json"), "--tp 8 --act-dtype fp32");
}

// vLLM reads --all2all-backend only where it runs its all-to-all kernels:
// with --enable-expert-parallel, across data-parallel ranks. The backend
// alone leaves every MoE a TP-MoE, and says so.
TEST(VllmDoor, AnAllToAllBackendAloneDoesNotTurnOnTheAllToAll) {
  Expected<EngineLaunch> l = ParseEngineArgs(
      Engine::kVllm,
      {kConfigs + "/deepseek-v2-lite.json", "--tensor-parallel-size", "4", "--all2all-backend", "deepep_low_latency"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  Expected<EngineTranslation> t = Translate(*l, Load("deepseek-v2-lite.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->seam_flags, "--tp 4");
  EXPECT_EQ(t->config.moe, MoeMode::kTp);
  EXPECT_NE(std::find(t->notes.begin(), t->notes.end(),
                      "--all2all-backend deepep_low_latency without --enable-expert-parallel: vLLM dispatches nothing"),
            t->notes.end());
  for (const char* backend : {"deepep_high_throughput", "deepep_low_latency", "flashinfer_all2allv"}) {
    EXPECT_EQ(Vllm({"-tp", "4", "--all2all-backend", backend}), "--tp 4") << backend;
    EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--all2all-backend", backend}),
              "--tp 4 --attn-dp 2 --dense-tp 2 --dp-lm-head")
        << backend;
  }
}

TEST(VllmDoor, ExpertParallelTurnsOnTheAllToAllAcrossDataParallelRanks) {
  for (const char* backend : {"deepep_high_throughput", "deepep_low_latency", "flashinfer_all2allv", "nixl_ep"}) {
    EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", backend}),
              "--tp 4 --attn-dp 2 --dense-tp 2 --moe a2a --dp-lm-head")
        << backend;
  }
  // Over a backend that dispatches nothing, the experts spread and the MoE keeps the TP-MoE's boundaries.
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", "naive"}),
            "--tp 4 --attn-dp 2 --dense-tp 2 --dp-lm-head --reduction rsv");
}

// get_pp_indices gives the remainder to the ranks before the last: 61
// layers over 2 ranks are 31 + 30 (SGLang's, and seam's own, 30 + 31).
TEST(VllmDoor, TheRanksBeforeTheLastTakeTheExtraLayers) {
  EXPECT_EQ(Vllm({"-tp", "8", "-pp", "2"}, "kimi-k2.json"), "--tp 8 --pp 2 --pp-split 31+30");
  EXPECT_EQ(Vllm({"-tp", "8", "-pp", "4"}, "kimi-k2.json"), "--tp 8 --pp 4 --pp-split 15+15+16+15");
  EXPECT_EQ(Vllm({"-tp", "8", "-pp", "2"}, "llama-3.1-8b.json"), "--tp 8 --pp 2");
  EXPECT_EQ(
      FlagsOf(Engine::kVllm, {"VLLM_PP_LAYER_PARTITION=40,21 vllm serve " + kConfigs + "/kimi-k2.json -tp 8 -pp 2"},
              "kimi-k2.json"),
      "--tp 8 --pp 2 --pp-split 40+21");
}

// The nodes a deployment spans, from --nnodes or -dp over -dpl; vLLM's
// own checks on them.
TEST(VllmDoor, PlacementFlagsGiveTheNodes) {
  auto nodes = [](const Args& args) {
    Args full = {kConfigs + "/kimi-k2.json"};
    full.insert(full.end(), args.begin(), args.end());
    Expected<EngineChoice> c = ChooseEngineLaunch(Engine::kVllm, full, 0);
    return c ? std::to_string(c->nodes) : c.error().message;
  };
  EXPECT_EQ(nodes({"-dp", "16", "-dpl", "8", "-ep"}), "2");
  EXPECT_EQ(nodes({"-tp", "8", "-pp", "2", "--nnodes", "2", "--node-rank", "1"}), "2");
  EXPECT_EQ(nodes({"-dp", "8", "-dpl", "16"}),
            "vLLM refuses this at start-up: data_parallel_size_local (16) must be <= data_parallel_size (8)");
  EXPECT_EQ(nodes({"-tp", "8", "--nnodes", "3"}),
            "vLLM refuses this at start-up: world_size=8 must be divisible by "
            "nnodes=3.");
}

// DeepEP quantizes the dispatch to fp8 for a checkpoint scaled in 128 x 128 blocks.
TEST(VllmDoor, DeepEpDispatchesFp8ForABlockScaledFp8Checkpoint) {
  Expected<EngineChoice> c = ChooseEngineLaunch(
      Engine::kVllm, {kConfigs + "/kimi-k2.json", "-dp", "8", "-ep", "--all2all-backend", "deepep_low_latency"}, 0);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->wire.dispatch, WireDtype::kFp8);
  EXPECT_EQ(c->weights.name, "fp8");
  Expected<EngineChoice> bf16 = ChooseEngineLaunch(
      Engine::kVllm, {kConfigs + "/qwen3-30b-a3b.json", "-dp", "8", "-ep", "--all2all-backend", "deepep_low_latency"},
      0);
  ASSERT_TRUE(bf16.ok()) << bf16.error().message;
  EXPECT_EQ(bf16->wire.dispatch, WireDtype::kBf16);
}

// Without data parallelism vLLM runs no all-to-all kernel, expert parallel
// or not: each rank's experts see every row and the MoE all-reduces.
TEST(VllmDoor, ExpertParallelWithoutDataParallelismDispatchesNothing) {
  Expected<EngineLaunch> l =
      ParseEngineArgs(Engine::kVllm, {kConfigs + "/deepseek-v2-lite.json", "--tensor-parallel-size", "4",
                                      "--enable-expert-parallel", "--all2all-backend", "deepep_low_latency"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  Expected<EngineTranslation> t = Translate(*l, Load("deepseek-v2-lite.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->seam_flags, "--tp 4");
  EXPECT_NE(std::find(t->notes.begin(), t->notes.end(),
                      "--all2all-backend deepep_low_latency without --data-parallel-size or "
                      "--prefill-context-parallel-size > 1: vLLM runs its all-to-all only across those ranks and "
                      "dispatches nothing"),
            t->notes.end());
}

TEST(VllmDoor, TakesTheModelAsServeDoesOrAsAFlag) {
  Expected<EngineLaunch> a = ParseEngineArgs(Engine::kVllm, {"m.json", "-tp", "2"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->model_path, "m.json");
  Expected<EngineLaunch> b = ParseEngineArgs(Engine::kVllm, {"--model", "m.json", "-tp", "2"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->model_path, "m.json");
  EXPECT_EQ(ParseEngineArgs(Engine::kVllm, {"-tp", "2"}).error().message,
            "the vLLM command line names no model (serve MODEL or --model)");
}

// vLLM's serve puts the positional model over --model: seam reads the same
// model and says which it read past.
TEST(VllmDoor, ThePositionalModelWinsOverModelAndTheOtherIsListedAsIgnored) {
  Expected<EngineLaunch> l = ParseEngineArgs(Engine::kVllm, {"a.json", "--model", "b.json", "-tp", "2"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->model_path, "a.json");
  EXPECT_EQ(l->ignored, std::vector<std::string>{"--model b.json: vLLM serves the model named first, a.json"});
  Expected<EngineLaunch> same = ParseEngineArgs(Engine::kVllm, {"a.json", "--model", "a.json"});
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->ignored.empty());
}

// A dense model has no MoE layer for the expert-parallel flags to change:
// each is said to be ignored, never dropped in silence.
TEST(VllmDoor, ExpertFlagsOnADenseModelAreNotedAsIgnored) {
  Expected<EngineLaunch> l = ParseEngineArgs(Engine::kVllm, {kConfigs + "/llama-3.1-8b.json", "-tp", "2",
                                                             "--enable-expert-parallel", "--all2all-backend", "pplx"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  Expected<EngineTranslation> t = Translate(*l, Load("llama-3.1-8b.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->seam_flags, "--tp 2");
  EXPECT_EQ(t->notes, (std::vector<std::string>{"--dtype auto: bf16 activations, the dtype the checkpoints seam "
                                                "reads declare",
                                                "--all2all-backend pplx: The 'pplx' all2all backend has been removed. "
                                                "Falling back to 'allgather_reducescatter'.",
                                                "--enable-expert-parallel: the model has no MoE layer; ignored",
                                                "--all2all-backend pplx: the model has no MoE layer; ignored"}));
}

// Errors are argparse's own, as the engine prints them, with what seam
// knows of an unknown word.
TEST(EngineFlags, AreReadAsArgparseReadsThem) {
  const auto error = [](Engine e, const Args& a) {
    Expected<EngineLaunch> l = ParseEngineArgs(e, a);
    return l.ok() ? std::string("(read)") : l.error().message;
  };
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp-szie", "8"}),
            "SGLang refuses this at start-up: unrecognized arguments: --tp-szie 8 (did you mean --tp-size?)");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--gpu-memory-utilization", "0.9", "--max-model-len", "4096"}),
            "SGLang refuses this at start-up: unrecognized arguments: --gpu-memory-utilization 0.9 --max-model-len "
            "4096 (--gpu-memory-utilization is a vLLM flag; --max-model-len is a vLLM flag)");
  EXPECT_EQ(error(Engine::kVllm, {"m", "--mem-fraction-static", "0.8"}),
            "vLLM refuses this at start-up: unrecognized arguments: --mem-fraction-static 0.8 "
            "(--mem-fraction-static is a SGLang flag)");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--enable-dp-attention=1"}),
            "SGLang refuses this at start-up: argument --enable-dp-attention: ignored explicit argument '1'");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp"}),
            "SGLang refuses this at start-up: argument --tp-size/--tensor-parallel-size: expected one argument");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "--dp", "2"}),
            "SGLang refuses this at start-up: argument --tp-size/--tensor-parallel-size: expected one argument");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "0"}),
            "--tp-size: '0' is not an integer from 1 to 65536");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "8x"}),
            "--tp-size: '8x' is not an integer from 1 to 65536");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--mem-fraction-static", "1.5"}),
            "--mem-fraction-static: '1.5' is not a fraction of the GPU's memory above 0 and at most 1");
  EXPECT_EQ(error(Engine::kVllm, {"m", "--gpu-memory-utilization", "nan"}),
            "--gpu-memory-utilization: 'nan' is not a fraction of the GPU's memory above 0 and at most 1");
  EXPECT_EQ(error(Engine::kVllm, {"m", "--max-num-batched-tokens", "0"}),
            "--max-num-batched-tokens: '0' is not an integer from 1 to 65536");
  EXPECT_EQ(error(Engine::kSglang, {"m", "--tp", "8"}), "SGLang refuses this at start-up: unrecognized arguments: m");
  EXPECT_EQ(error(Engine::kSglang, {"--tp", "8"}), "the SGLang command line names no model (--model-path)");
  EXPECT_EQ(error(Engine::kSglang, {"vllm serve m -tp 8"}),
            "'vllm serve' starts another engine, not SGLang: give that engine's --engine");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path 'unclosed"}), "the launch line has an unclosed ' quote");
}

// A flag given twice keeps its last value, as argparse does, and seam says so.
TEST(EngineFlags, TheLastOfARepeatedFlagWins) {
  Expected<EngineLaunch> l = ParseEngineArgs(Engine::kSglang, {"--model-path", "m", "--tp", "8", "--tp-size", "4"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->tp, 4);
  EXPECT_EQ(l->read_notes, (std::vector<std::string>{"--tp: SGLang's parser reads a unique prefix as --tp-size",
                                                     "--tp-size is given more than once: SGLang keeps the last, 4"}));
}

// Flags with several values, unique prefixes, vLLM's underscores, short
// forms, --no- negations, -O3 and dotted JSON keys all read as the engine
// reads them.
TEST(EngineFlags, EveryArgparseConventionOfTheEngines) {
  auto flags = [](Engine e, const std::string& line, const std::string& config) { return FlagsOf(e, {line}, config); };
  const std::string v2 = kConfigs + "/deepseek-v2-lite.json";
  EXPECT_EQ(flags(Engine::kSglang,
                  "python3 -m sglang.launch_server --model-path " + v2 +
                      " --tp 4 --cuda-graph-bs 1 2 4 8 --mem-frac 0.8 --disable-shared-experts-fusion",
                  "deepseek-v2-lite.json"),
            "--tp 4");
  EXPECT_EQ(flags(Engine::kVllm,
                  "vllm serve " + v2 +
                      " --tensor_parallel_size 2 -dp 2 -ep -O3 --no-enable-prefix-caching --async-scheduling "
                      "--enable-auto-tool-choice --tool-call-parser hermes --compilation-config.mode=3 "
                      "--all2all-backend=deepep_high_throughput",
                  "deepseek-v2-lite.json"),
            "--tp 4 --attn-dp 2 --dense-tp 2 --moe a2a --dp-lm-head");
  EXPECT_EQ(flags(Engine::kVllm, "vllm serve " + v2 + " -tp 2 --kv-transfer-config.kv_connector NixlConnector",
                  "deepseek-v2-lite.json"),
            "error: --kv-transfer-config.kv_connector NixlConnector changes communication seam does not model "
            "(disaggregation): vLLM runs it, seam plans tensor, attention-data, context (prefill), expert and "
            "pipeline parallelism only; leave it out or give --kv-transfer-config None");
}

// A flag that changes communication seam does not model is refused saying
// so; its off value is read past. SGLang's context parallelism without a
// prefill split is such a flag; with --enable-prefill-cp --cp-strategy
// zigzag it is seam's --cp.
TEST(EngineFlags, ContextParallelismIsReadWithItsPrefillSplitAndRefusedWithout) {
  const std::string v2 = kConfigs + "/deepseek-v2-lite.json";
  EXPECT_EQ(FlagsOf(Engine::kSglang, {"--model-path", v2, "--tp", "4", "--attn-cp-size", "2"}, "deepseek-v2-lite.json"),
            "error: --attn-cp-size 2 changes communication seam does not model (context-parallelism without a "
            "prefill split): SGLang splits a prefill's sequence over the CP ranks with --enable-prefill-cp (or a "
            "model's own CP mode); seam plans the zig-zag split, --enable-prefill-cp --cp-strategy zigzag");
  EXPECT_EQ(FlagsOf(Engine::kSglang,
                    {"--model-path", v2, "--tp", "4", "--attn-cp-size", "2", "--enable-prefill-cp", "--cp-strategy",
                     "zigzag"},
                    "deepseek-v2-lite.json"),
            "--tp 4 --cp 2");
  EXPECT_EQ(FlagsOf(Engine::kSglang, {"--model-path", v2, "--tp", "4", "--attn-cp-size", "1"}, "deepseek-v2-lite.json"),
            "--tp 4");
  EXPECT_EQ(
      FlagsOf(Engine::kSglang, {"--model-path", v2, "--tp", "4", "--cp-strategy", "ring"}, "deepseek-v2-lite.json"),
      "error: SGLang refuses this at start-up: argument --cp-strategy: invalid choice: 'ring' (choose from "
      "zigzag, interleave)");
  // vLLM's PCP: the world grows by -pcp; its all-to-all needs an a2a backend.
  EXPECT_EQ(FlagsOf(Engine::kVllm, {"vllm", "serve", v2, "-tp", "2", "-pcp", "2", "--enable-expert-parallel"},
                    "deepseek-v2-lite.json"),
            "--tp 4 --cp 2 --dense-tp 2");
  EXPECT_EQ(FlagsOf(Engine::kVllm,
                    {"vllm", "serve", v2, "-tp", "2", "-pcp", "2", "--enable-expert-parallel", "--all2all-backend",
                     "deepep_low_latency"},
                    "deepseek-v2-lite.json"),
            "--tp 4 --cp 2 --dense-tp 2 --moe a2a");
}

// The memory flags are read into the launch: compare fills each GPU as the
// line says.
TEST(EngineFlags, TheMemoryShareAndPrefillChunkAreRead) {
  Expected<EngineLaunch> s = ParseEngineArgs(
      Engine::kSglang, {"--model-path", "m", "--mem-fraction-static", "0.85", "--chunked-prefill-size", "4096"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->memory_fraction, 0.85);
  EXPECT_EQ(s->prefill_chunk, 4096);
  Expected<EngineLaunch> v =
      ParseEngineArgs(Engine::kVllm, {"m", "--gpu-memory-utilization=0.95", "--max-num-batched-tokens", "16384"});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_DOUBLE_EQ(v->memory_fraction, 0.95);
  EXPECT_EQ(v->prefill_chunk, 16384);
}

TEST(EngineFlags, EachFlagReadPastIsListedOnceWithWhy) {
  Expected<EngineLaunch> l =
      ParseEngineArgs(Engine::kSglang, {"--model-path", "m", "--port", "30000", "--mem-fraction-static", "0.8",
                                        "--trust-remote-code", "--port", "30001", "--cuda-graph-bs", "1", "2"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->ignored, (std::vector<std::string>{
                            "--port: serving and scheduling, not communication between ranks",
                            "--trust-remote-code: serving and scheduling, not communication between ranks",
                            "--cuda-graph-bs: kernels and compilation: the same collectives at the same seams"}));
}

// The tables each engine's flags are read by: every compiled-in table reads,
// and each engine has one.
TEST(EngineFlags, EveryEngineHasAFlagTable) {
  EXPECT_EQ(EngineVersions(Engine::kSglang), std::vector<std::string>{"main"});
  EXPECT_EQ(EngineVersions(Engine::kVllm), std::vector<std::string>{"main"});
  EXPECT_EQ(ParseEngineArgs(Engine::kSglang, {"--model-path", "m"}, "0.1.0").error().message,
            "--engine-version: seam has no table of SGLang 0.1.0; it reads SGLang main");
}

TEST(EngineFlags, AModelPathIsADirectoryHoldingConfigJsonOrTheConfigItself) {
  EngineLaunch l{.model_path = kConfigs};
  EXPECT_EQ(ConfigPathOf(l).value(), kConfigs + "/config.json");
  l.model_path = kConfigs + "/kimi-k2.json";
  EXPECT_EQ(ConfigPathOf(l).value(), kConfigs + "/kimi-k2.json");
  l.model_path = "deepseek-ai/DeepSeek-V3";
  EXPECT_EQ(ConfigPathOf(l).error().message,
            "model path 'deepseek-ai/DeepSeek-V3' is neither a directory holding config.json nor a config.json; seam "
            "reads the model's config locally (download the config.json of a hub model first)");
}

}  // namespace
}  // namespace seam

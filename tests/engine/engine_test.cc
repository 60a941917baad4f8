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
            "--tp 8 --attn-dp 4 --dense-tp 1 --moe a2a --pp 2");
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "2", "--enable-dp-attention", "--pp", "2", "--dtype", "float16"}),
            "--tp 8 --attn-dp 2 --pp 2 --act-dtype fp16");
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
            "--tp 8 --moe a2a");
}

TEST(SglangDoor, RefusesWhatSglangRefusesAtStartUpNamingItsReason) {
  EXPECT_EQ(Sglang({"--tp", "8", "--dp", "3", "--enable-dp-attention"}),
            "error: SGLang refuses this at start-up: --tp-size 8 is not divisible by --dp-size 3: "
            "--enable-dp-attention splits the TP group into dp-size attention groups");
  EXPECT_EQ(Sglang({"--tp", "8", "--moe-dense-tp-size", "2"}),
            "error: SGLang refuses this at start-up: --moe-dense-tp-size takes 1 (or is left out: the whole TP "
            "group), not 2");
  EXPECT_EQ(Sglang({"--tp", "8", "--ep", "4", "--moe-a2a-backend", "deepep"}),
            "error: SGLang refuses this at start-up: --moe-a2a-backend deepep runs expert parallel over the whole "
            "TP group: --ep-size must equal --tp-size 8 (got 4)");
  EXPECT_EQ(Sglang({"--tp", "8", "--ep", "3"}),
            "error: SGLang refuses this at start-up: --tp-size 8 is not divisible by --ep-size 3");
  EXPECT_EQ(Sglang({"--tp", "8", "--enable-dp-lm-head"}),
            "error: SGLang refuses this at start-up: --enable-dp-lm-head needs --enable-dp-attention");
  EXPECT_EQ(Sglang({"--tp", "3"}, "llama-3.1-8b.json"),
            "error: SGLang refuses this at start-up: num_attention_heads = 32 does not split over attn_tp = 3 (tp 3 "
            "/ attn_dp 1); attn_tp must divide 32: 1, 2, 4, 8, 16, 32");
  EXPECT_EQ(Sglang({"--moe-a2a-backend", "nccl"}),
            "error: --moe-a2a-backend: unknown backend 'nccl'; SGLang's are none, deepep, mooncake, mori, "
            "ascend_fuseep, flashinfer");
  EXPECT_EQ(Sglang({"--dtype", "fp8"}),
            "error: --dtype: 'fp8' is not one of auto, bfloat16, half, float16, float, float32");
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
            "--tp 8 --attn-dp 4 --dense-tp 2 --moe a2a --dp-lm-head --pp 2");
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "4"}), "--tp 8 --attn-dp 4 --dense-tp 2 --dp-lm-head --reduction rsv");
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "4", "--all2all-backend", "naive"}),
            "--tp 8 --attn-dp 4 --dense-tp 2 --dp-lm-head");
  EXPECT_EQ(Vllm({"-tp", "4", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", "pplx"}),
            "--tp 8 --attn-dp 2 --dense-tp 4 --moe a2a --dp-lm-head");
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
  for (const char* backend : {"pplx", "deepep_high_throughput", "deepep_low_latency", "flashinfer_all2allv"}) {
    EXPECT_EQ(Vllm({"-tp", "4", "--all2all-backend", backend}), "--tp 4") << backend;
    EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--all2all-backend", backend}),
              "--tp 4 --attn-dp 2 --dense-tp 2 --dp-lm-head")
        << backend;
  }
}

TEST(VllmDoor, ExpertParallelTurnsOnTheAllToAllAcrossDataParallelRanks) {
  for (const char* backend : {"pplx", "deepep_high_throughput", "deepep_low_latency", "flashinfer_all2allv"}) {
    EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", backend}),
              "--tp 4 --attn-dp 2 --dense-tp 2 --moe a2a --dp-lm-head")
        << backend;
  }
  // Over a backend that dispatches nothing, the experts spread and the MoE keeps the TP-MoE's boundaries.
  EXPECT_EQ(Vllm({"-tp", "2", "-dp", "2", "--enable-expert-parallel", "--all2all-backend", "naive"}),
            "--tp 4 --attn-dp 2 --dense-tp 2 --dp-lm-head");
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
                      "--all2all-backend deepep_low_latency without --data-parallel-size > 1: vLLM runs its all-to-all "
                      "only across data-parallel ranks and dispatches nothing"),
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
                                                "--enable-expert-parallel: the model has no MoE layer; ignored",
                                                "--all2all-backend pplx: the model has no MoE layer; ignored"}));
}

TEST(EngineFlags, AreReadStrictly) {
  const auto error = [](Engine e, const Args& a) {
    Expected<EngineLaunch> l = ParseEngineArgs(e, a);
    return l.ok() ? std::string("(read)") : l.error().message;
  };
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp-szie", "8"}),
            "unknown SGLang flag '--tp-szie': seam reads the flags that shape the parallel layout and the common "
            "serving flags it can read past (see the README's engine table); remove it or check its spelling");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "8", "--tp-size", "4"}),
            "--tp-size is given twice; give each SGLang flag once");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--enable-dp-attention=1"}),
            "--enable-dp-attention is a switch and takes no value (got '--enable-dp-attention=1')");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp"}), "--tp needs a value");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "--dp", "2"}), "--tp needs a value");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "0"}),
            "--tp-size: '0' is not an integer from 1 to 65536");
  EXPECT_EQ(error(Engine::kSglang, {"--model-path", "m", "--tp", "8x"}),
            "--tp-size: '8x' is not an integer from 1 to 65536");
  EXPECT_EQ(error(Engine::kSglang, {"m", "--tp", "8"}),
            "SGLang flags: 'm' is not a flag (every value follows its flag)");
  EXPECT_EQ(error(Engine::kSglang, {"--tp", "8"}), "the SGLang command line names no model (--model-path)");
}

TEST(EngineFlags, EachFlagReadPastIsListedOnceWithWhy) {
  Expected<EngineLaunch> l = ParseEngineArgs(
      Engine::kSglang, {"--model-path", "m", "--port", "30000", "--mem-fraction-static", "0.8", "--trust-remote-code",
                        "--kv-cache-dtype", "fp8_e4m3", "--enable-two-batch-overlap"});
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->ignored, (std::vector<std::string>{
                            "--port: serving and scheduling, not communication between ranks",
                            "--mem-fraction-static: memory and batch limits: a plan counts bytes per token",
                            "--trust-remote-code: serving and scheduling, not communication between ranks",
                            "--kv-cache-dtype: weight and KV-cache formats: the activations on the wire are --dtype's "
                            "(seam's --dispatch-dtype for an fp8 dispatch)",
                            "--enable-two-batch-overlap: kernels and compilation: the same collectives at the same "
                            "seams"}));
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

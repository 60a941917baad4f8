// Launch lines written back: each reads through the engine's front door as
// the configuration it was written for, binding the same plan; what an
// engine has no flag for is refused saying which knob and why.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>

#include "seam/bind.h"
#include "seam/compare.h"
#include "seam/engine.h"
#include "seam/hf_config.h"
#include "seam/model_source.h"

namespace seam {
namespace {

const std::string kConfigs = SEAM_HF_CONFIGS;

Model Load(const std::string& name, int layers = 0) {
  Expected<Model> m = ChooseModel("", kConfigs + "/" + name, layers);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

CheckpointQuant QuantOf(const std::string& name) {
  Expected<CheckpointQuant> q = CheckpointQuantOf(kConfigs + "/" + name);
  if (!q) throw std::runtime_error(q.error().message);
  return *q;
}

EmitRequest Request(Engine e, const std::string& config, ParallelConfig cfg) {
  return {.engine = e, .model_path = kConfigs + "/" + config, .config = cfg};
}

// The lines joined, or the error.
std::string Emitted(const EmitRequest& r, const std::string& config, int layers = 0) {
  Expected<EngineLines> l = EmitLaunch(r, Load(config, layers), QuantOf(config));
  if (!l) return "error: " + l.error().message;
  return fmt::format("{}", fmt::join(l->lines, "\n"));
}

// Whether every rank binds the same steps under both configurations.
bool SamePlan(const Model& m, const ParallelConfig& a, const WireDtypes& wa, const ParallelConfig& b,
              const WireDtypes& wb) {
  Expected<Pipeline> x = BindPipeline(m, a, {.wire = wa});
  Expected<Pipeline> y = BindPipeline(m, b, {.wire = wb});
  if (!x || !y || x->size() != y->size()) return false;
  for (size_t i = 0; i < x->size(); ++i) {
    if ((*x)[i].lines() != (*y)[i].lines() || (*x)[i].header().wire != (*y)[i].header().wire) return false;
  }
  return true;
}

struct GridCount {
  int written = 0;
  std::map<std::string, int> refused;  // the engine's reasons without their numbers
};

// "vLLM cannot ...: each vLLM DP rank runs its dense FFN over its own TP
// group of 2, not --dense-tp 8" -> "vLLM cannot ...: each ... group of #,
// not --dense-tp #": refusals that differ in their sizes count together.
std::string Reason(const std::string& why) {
  std::string out;
  for (char c : why) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      out += c;
    } else if (out.empty() || out.back() != '#') {
      out += '#';
    }
  }
  return out;
}

// Every configuration `compare` ranks for the model, written for the engine
// and read back by the test itself: the same plan on every rank, the same
// replicas and nodes.
GridCount RoundTripGrid(Engine e, const std::string& config, int gpus, int nodes, int layers = 0) {
  const Model m = Load(config, layers);
  const CheckpointQuant q = QuantOf(config);
  Expected<Hardware> hw = LoadHardware("h200");
  const CompareOptions o{.gpus = gpus, .nodes = nodes, .hardware = *hw};
  Expected<Comparison> c = Compare(m, o);
  if (!c) throw std::runtime_error(c.error().message);
  GridCount count;
  for (const Candidate& k : c->ranked) {
    EmitRequest r{.engine = e,
                  .model_path = kConfigs + "/" + config,
                  .config = k.config,
                  .replicas = k.replicas,
                  .nodes = nodes,
                  .wire = o.wire};
    Expected<EngineLines> lines = EmitLaunch(r, m, q);
    if (!lines) {
      const std::string& why = lines.error().message;
      EXPECT_TRUE(why.starts_with(fmt::format("{} cannot run this configuration: ", DisplayName(e))) ||
                  why.starts_with(fmt::format("{} refuses this at start-up: ", DisplayName(e))))
          << why;
      const size_t colon = why.find(": ");
      std::string rest = why.substr(colon + 2);
      for (size_t at = 0; at != std::string::npos;) {  // each reason the refusal joins with "; "
        const size_t end = rest.find("; ", at);
        ++count.refused[Reason(why.substr(0, colon + 2) + rest.substr(at, end - at))];
        at = end == std::string::npos ? end : end + 2;
      }
      continue;
    }
    EXPECT_EQ(lines->lines.size(), static_cast<size_t>(nodes));
    for (const std::string& line : lines->lines) {
      Expected<EngineLaunch> l = ParseEngineArgs(e, {line});
      if (!l) {
        ADD_FAILURE() << line << ": " << l.error().message;
        continue;
      }
      Expected<EngineTranslation> t = Translate(*l, m, q);
      if (!t) {
        ADD_FAILURE() << line << ": " << t.error().message;
        continue;
      }
      EXPECT_TRUE(SamePlan(m, k.config, o.wire, t->config, t->wire))
          << FlagsOf(k) << " was written as " << line << ", which reads as " << t->seam_flags;
      EXPECT_EQ(t->replicas, k.replicas) << line;
      EXPECT_EQ(t->nodes, nodes) << line;
    }
    ++count.written;
  }
  return count;
}

// Every reason an engine's line may be refused for, its numbers as #.
const std::set<std::string> kSglangReasons = {
    "SGLang cannot run this configuration: --dp-size is either # replicas or, with --enable-dp-attention, # "
    "attention groups",
    "SGLang cannot run this configuration: # replicas of a DP-attention layout are # SGLang servers behind a router",
    "SGLang cannot run this configuration: SGLang has no flag that chooses a boundary's collective",
    "SGLang cannot run this configuration: its lines read as --reduction ar, not rs",
    "SGLang cannot run this configuration: its lines read as --reduction ar, not rsv",
    "SGLang cannot run this configuration: SGLang runs a dense FFN over the whole TP group or, with "
    "--moe-dense-tp-size #, on each rank",
    "SGLang cannot run this configuration: not over # ranks (--dense-tp #)",
    "SGLang cannot run this configuration: SGLang's a#a backends spread the experts over the whole TP group of # (it "
    "sets --ep-size to the TP size)",
    "SGLang cannot run this configuration: --ep # has no SGLang flag",
    "SGLang cannot run this configuration: SGLang runs data parallelism across nodes only as DP attention",
    "SGLang cannot run this configuration: # replicas on # nodes are a server per node behind a router",
    "SGLang cannot run this configuration: seam does not read SGLang's DCP groups beside --enable-dp-attention, so "
    "--dcp # with it is not written",
};
const std::set<std::string> kVllmReasons = {
    "vLLM cannot run this configuration: vLLM's data parallelism of a model without MoE runs whole replicas",
    "vLLM cannot run this configuration: attention DP inside one TP group (--attn-dp #) is SGLang's "
    "--enable-dp-attention",
    "vLLM cannot run this configuration: vLLM's data parallelism of a MoE model is one expert group across every DP "
    "rank",
    "vLLM cannot run this configuration: # replicas of it are # vLLM deployments",
    "vLLM cannot run this configuration: each vLLM DP rank runs its dense FFN over its own TP group of #, not "
    "--dense-tp #",
    "vLLM cannot run this configuration: each vLLM DP rank runs its own LM head over its TP group (--dp-lm-head)",
    "vLLM cannot run this configuration: vLLM completes this layout's sums with --reduction ar, not rs",
    "vLLM cannot run this configuration: vLLM completes this layout's sums with --reduction ar, not rsv",
    "vLLM cannot run this configuration: vLLM completes this layout's sums with --reduction rsv, not ar",
    "vLLM cannot run this configuration: vLLM completes this layout's sums with --reduction rsv, not rs",
    "vLLM cannot run this configuration: vLLM has no input-scattered attention (SGLang's "
    "--enable-attn-tp-input-scattered)",
    "vLLM cannot run this configuration: vLLM runs a dense FFN over the whole TP group, not --dense-tp #",
    "vLLM cannot run this configuration: vLLM runs its all-to-all only across data-parallel or "
    "prefill-context-parallel ranks (--data-parallel-size or --prefill-context-parallel-size > #)",
    "vLLM cannot run this configuration: vLLM's expert parallelism spreads the experts over all # DP x TP ranks, not "
    "--ep #",
    "vLLM cannot run this configuration: vLLM's DeepEP dispatches fp# for this checkpoint, not bf#",
};

// The grid's lines written and read back for both engines: how many each
// writes (a change in what an engine can say changes these), and every
// refusal one of the engine's known reasons.
void ExpectGrid(const std::string& config, int gpus, int nodes, int layers, int sglang_lines, int vllm_lines) {
  const GridCount sglang = RoundTripGrid(Engine::kSglang, config, gpus, nodes, layers);
  const GridCount vllm = RoundTripGrid(Engine::kVllm, config, gpus, nodes, layers);
  EXPECT_EQ(sglang.written, sglang_lines) << config;
  EXPECT_EQ(vllm.written, vllm_lines) << config;
  for (const auto& [why, n] : sglang.refused) EXPECT_TRUE(kSglangReasons.contains(why)) << config << ": " << why;
  for (const auto& [why, n] : vllm.refused) EXPECT_TRUE(kVllmReasons.contains(why)) << config << ": " << why;
}

TEST(Emit, EveryComparedConfigurationOfADenseModelReadsBackAsTheSamePlan) {
  ExpectGrid("llama-3.1-70b.json", 8, 1, 0, 46, 10);
}

TEST(Emit, EveryComparedConfigurationOfAMoeModelReadsBackAsTheSamePlan) {
  ExpectGrid("qwen3-30b-a3b.json", 8, 1, 0, 106, 30);
  ExpectGrid("deepseek-v2-lite.json", 8, 1, 0, 132, 23);
}

TEST(Emit, EveryComparedConfigurationAcrossTwoNodesReadsBackAsTheSamePlan) {
  // DeepSeek-V3's first 16 layers (3 dense, 13 MoE): the grid of 16 GPUs on
  // two nodes, each line one per node.
  ExpectGrid("deepseek-v3.json", 16, 2, 16, 146, 18);
}

TEST(Emit, SglangWritesDpAttentionAndDeepEpAsItsDeepSeekRecipe) {
  EmitRequest r =
      Request(Engine::kSglang, "deepseek-v3.json", {.tp = 8, .attn_dp = 8, .moe = MoeMode::kA2a, .dp_lm_head = true});
  r.wire.dispatch = WireDtype::kFp8;  // DeepEP's own default: no flag
  EXPECT_EQ(Emitted(r, "deepseek-v3.json"),
            "python3 -m sglang.launch_server --model-path " + kConfigs +
                "/deepseek-v3.json --tp-size 8 --dp-size 8 --enable-dp-attention --enable-dp-lm-head "
                "--moe-a2a-backend deepep");
  r.wire.dispatch = WireDtype::kBf16;
  EXPECT_TRUE(
      Emitted(r, "deepseek-v3.json").ends_with("--moe-a2a-backend deepep --deepep-dispatcher-output-dtype bf16"));
  r.config = {.tp = 8, .attn_dp = 4, .dense_tp = 1, .input_scattered = false, .pp = 2};
  EXPECT_TRUE(Emitted(r, "deepseek-v3.json")
                  .ends_with("--tp-size 8 --pp-size 2 --dp-size 4 --enable-dp-attention "
                             "--moe-dense-tp-size 1"))
      << Emitted(r, "deepseek-v3.json");
}

// Two-batch overlap is SGLang's --enable-two-batch-overlap and vLLM's
// --enable-dbo, each beside its DeepEP backend, and reads back as asked.
TEST(Emit, TwoBatchOverlapIsWrittenAsEachEnginesFlagAndReadsBack) {
  EmitRequest r =
      Request(Engine::kSglang, "deepseek-v3.json", {.tp = 8, .attn_dp = 8, .moe = MoeMode::kA2a, .dp_lm_head = true});
  r.wire.dispatch = WireDtype::kFp8;
  r.two_batch_overlap = true;
  EXPECT_TRUE(Emitted(r, "deepseek-v3.json").ends_with("--moe-a2a-backend deepep --enable-two-batch-overlap"))
      << Emitted(r, "deepseek-v3.json");
  r = Request(Engine::kVllm, "deepseek-v3.json",
              {.tp = 8, .attn_dp = 8, .dense_tp = 1, .moe = MoeMode::kA2a, .dp_lm_head = true});
  r.wire.dispatch = WireDtype::kFp8;
  r.two_batch_overlap = true;
  EXPECT_TRUE(Emitted(r, "deepseek-v3.json").ends_with("--all2all-backend deepep_high_throughput --enable-dbo"))
      << Emitted(r, "deepseek-v3.json");
  const Expected<EngineChoice> read = ChooseEngineLaunch(Engine::kVllm, {Emitted(r, "deepseek-v3.json")}, 4);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_TRUE(read->two_batch_overlap);
  r.two_batch_overlap = false;
  EXPECT_FALSE(ChooseEngineLaunch(Engine::kVllm, {Emitted(r, "deepseek-v3.json")}, 4)->two_batch_overlap);
}

TEST(Emit, VllmWritesItsTensorParallelSizePerDataParallelRank) {
  EmitRequest r = Request(Engine::kVllm, "qwen3-30b-a3b.json",
                          {.tp = 8, .attn_dp = 4, .dense_tp = 2, .dp_lm_head = true, .reduction = Reduction::kRsv});
  EXPECT_EQ(Emitted(r, "qwen3-30b-a3b.json"),
            "vllm serve " + kConfigs + "/qwen3-30b-a3b.json --tensor-parallel-size 2 --data-parallel-size 4");
  r.config = {.tp = 8, .attn_dp = 4, .dense_tp = 2, .moe = MoeMode::kA2a, .dp_lm_head = true};
  EXPECT_EQ(Emitted(r, "qwen3-30b-a3b.json"), "vllm serve " + kConfigs +
                                                  "/qwen3-30b-a3b.json --tensor-parallel-size 2 --data-parallel-size 4 "
                                                  "--enable-expert-parallel --all2all-backend "
                                                  "deepep_high_throughput");
  // A model without MoE under data parallelism: replicas.
  r = Request(Engine::kVllm, "llama-3.1-70b.json", {.tp = 4});
  r.replicas = 2;
  EXPECT_EQ(Emitted(r, "llama-3.1-70b.json"),
            "vllm serve " + kConfigs + "/llama-3.1-70b.json --tensor-parallel-size 4 --data-parallel-size 2");
}

TEST(Emit, ASplitTheEnginesDefaultDoesNotGiveIsItsLayerPartition) {
  // 80 layers over 3 ranks: seam's default puts the remainder last (26, 27,
  // 27), as SGLang does; vLLM gives it to the ranks before the last.
  EmitRequest r = Request(Engine::kVllm, "llama-3.1-70b.json", {.tp = 4, .pp = 3});
  EXPECT_EQ(Emitted(r, "llama-3.1-70b.json"),
            "VLLM_PP_LAYER_PARTITION=26,27,27 vllm serve " + kConfigs +
                "/llama-3.1-70b.json --tensor-parallel-size 4 --pipeline-parallel-size 3");
  r.config.pp_split = {27, 27, 26};
  EXPECT_EQ(Emitted(r, "llama-3.1-70b.json"),
            "vllm serve " + kConfigs + "/llama-3.1-70b.json --tensor-parallel-size 4 --pipeline-parallel-size 3");
  r.engine = Engine::kSglang;
  EXPECT_TRUE(Emitted(r, "llama-3.1-70b.json").starts_with("SGLANG_PP_LAYER_PARTITION=27,27,26 python3 -m "))
      << Emitted(r, "llama-3.1-70b.json");
  r.config.pp_split = {};
  EXPECT_TRUE(Emitted(r, "llama-3.1-70b.json").starts_with("python3 -m sglang.launch_server"));
}

TEST(Emit, EachNodeHasItsLineAndEveryLineReadsAsTheWholeDeployment) {
  EmitRequest r = Request(Engine::kVllm, "deepseek-v2-lite.json",
                          {.tp = 16, .attn_dp = 4, .dense_tp = 4, .dp_lm_head = true, .reduction = Reduction::kRsv});
  r.nodes = 2;
  const std::string head =
      "vllm serve " + kConfigs + "/deepseek-v2-lite.json --tensor-parallel-size 4 --data-parallel-size 4 ";
  EXPECT_EQ(Emitted(r, "deepseek-v2-lite.json"),
            head + "--data-parallel-size-local 2 --data-parallel-address $NODE0_ADDR --data-parallel-rpc-port 13345\n" +
                head +
                "--data-parallel-size-local 2 --data-parallel-address $NODE0_ADDR --data-parallel-rpc-port 13345 "
                "--headless --data-parallel-start-rank 2");
  // One DP rank's TP group across both nodes: --nnodes.
  r.config = {.tp = 16};
  EXPECT_EQ(
      Emitted(r, "deepseek-v2-lite.json"),
      "vllm serve " + kConfigs +
          "/deepseek-v2-lite.json --tensor-parallel-size 16 --nnodes 2 --node-rank 0 --master-addr $NODE0_ADDR\nvllm "
          "serve " +
          kConfigs +
          "/deepseek-v2-lite.json --tensor-parallel-size 16 --nnodes 2 --node-rank 1 --master-addr $NODE0_ADDR "
          "--headless");
  r.engine = Engine::kSglang;
  EXPECT_EQ(Emitted(r, "deepseek-v2-lite.json"),
            "python3 -m sglang.launch_server --model-path " + kConfigs +
                "/deepseek-v2-lite.json --tp-size 16 --nnodes 2 --node-rank 0 --dist-init-addr $NODE0_ADDR:5000\n"
                "python3 -m sglang.launch_server --model-path " +
                kConfigs +
                "/deepseek-v2-lite.json --tp-size 16 --nnodes 2 --node-rank 1 --dist-init-addr $NODE0_ADDR:5000");
}

TEST(Emit, WhatTheEngineHasNoFlagForIsRefusedNamingTheKnob) {
  const auto sglang = [](ParallelConfig c, int replicas = 1, int nodes = 1) {
    EmitRequest r = Request(Engine::kSglang, "deepseek-v2-lite.json", c);
    r.replicas = replicas;
    r.nodes = nodes;
    return Emitted(r, "deepseek-v2-lite.json");
  };
  const auto vllm = [](ParallelConfig c, const std::string& config = "deepseek-v2-lite.json") {
    return Emitted(Request(Engine::kVllm, config, c), config);
  };
  EXPECT_EQ(sglang({.tp = 8, .moe = MoeMode::kA2a, .ep = 4}),
            "error: SGLang cannot run this configuration: SGLang's a2a backends spread the experts over the whole TP "
            "group of 8 (it sets --ep-size to the TP size); --ep 4 has no SGLang flag");
  EXPECT_EQ(sglang({.tp = 8, .attn_dp = 2, .dense_tp = 4}),
            "error: SGLang cannot run this configuration: SGLang runs a dense FFN over the whole TP group or, with "
            "--moe-dense-tp-size 1, on each rank; not over 4 ranks (--dense-tp 4)");
  EXPECT_EQ(sglang({.tp = 4, .input_scattered = true, .reduction = Reduction::kRs}),
            "error: SGLang cannot run this configuration: SGLang has no flag that chooses a boundary's collective; its "
            "lines read as --reduction ar, not rs");
  EXPECT_EQ(sglang({.tp = 4, .attn_dp = 2}, 2),
            "error: SGLang cannot run this configuration: --dp-size is either 2 replicas or, with "
            "--enable-dp-attention, 2 attention groups; 2 replicas of a DP-attention layout are 2 SGLang servers "
            "behind a router");
  EXPECT_EQ(sglang({.tp = 8}, 2, 2),
            "error: SGLang cannot run this configuration: SGLang runs data parallelism across nodes only as DP "
            "attention; 2 replicas on 2 nodes are a server per node behind a router");
  EXPECT_EQ(vllm({.tp = 4, .input_scattered = true}),
            "error: vLLM cannot run this configuration: vLLM has no input-scattered attention (SGLang's "
            "--enable-attn-tp-input-scattered)");
  EXPECT_EQ(vllm({.tp = 8, .attn_dp = 2}, "llama-3.1-70b.json"),
            "error: vLLM cannot run this configuration: vLLM's data parallelism of a model without MoE runs whole "
            "replicas; attention DP inside one TP group (--attn-dp 2) is SGLang's --enable-dp-attention");
  EXPECT_EQ(vllm({.tp = 8, .moe = MoeMode::kA2a}),
            "error: vLLM cannot run this configuration: vLLM runs its all-to-all only across data-parallel or "
            "prefill-context-parallel ranks (--data-parallel-size or --prefill-context-parallel-size > 1)");
  EXPECT_EQ(vllm({.tp = 8, .attn_dp = 4, .dense_tp = 2, .dp_lm_head = true}),
            "error: vLLM cannot run this configuration: vLLM completes this layout's sums with --reduction rsv, not "
            "ar");
  EXPECT_EQ(vllm({.tp = 8, .attn_dp = 4, .dp_lm_head = true, .reduction = Reduction::kRsv}),
            "error: vLLM cannot run this configuration: each vLLM DP rank runs its dense FFN over its own TP group of "
            "2, not --dense-tp 8");
  // The engine's own refusal of the line is the answer: vLLM splits the
  // heads over its per-DP-rank TP size.
  EXPECT_EQ(vllm({.tp = 3}, "llama-3.1-70b.json"),
            "error: vLLM refuses this at start-up: Total number of attention heads (64) must be divisible by tensor "
            "parallel size (3).");
}

// Context parallelism is written in each engine's own flags and reads back
// as the same configuration: SGLang's prefill CP inside its TP group,
// vLLM's PCP multiplying the world over TP groups of the attention-TP size.
TEST(Emit, ContextParallelismIsWrittenAsEachEnginesPrefillSplitAndReadsBack) {
  const std::string llama = "llama-3.1-70b.json", moe = "qwen3-30b-a3b.json";
  const std::string path = kConfigs + "/";
  EXPECT_EQ(Emitted(Request(Engine::kSglang, llama, {.tp = 8, .cp = 2}), llama),
            "python3 -m sglang.launch_server --model-path " + path + llama +
                " --tp-size 8 --attn-cp-size 2 --enable-prefill-cp --cp-strategy zigzag");
  EXPECT_EQ(Emitted(Request(Engine::kSglang, llama, {.tp = 8, .attn_dp = 2, .cp = 2, .dense_tp = 1}), llama),
            "python3 -m sglang.launch_server --model-path " + path + llama +
                " --tp-size 8 --dp-size 2 --enable-dp-attention --attn-cp-size 2 --enable-prefill-cp --cp-strategy "
                "zigzag --moe-dense-tp-size 1");
  EXPECT_EQ(Emitted(Request(Engine::kVllm, llama, {.tp = 8, .cp = 2, .dense_tp = 4}), llama),
            "vllm serve " + path + llama + " --tensor-parallel-size 4 --prefill-context-parallel-size 2");
  EXPECT_EQ(Emitted(Request(Engine::kVllm, moe, {.tp = 8, .cp = 2, .moe = MoeMode::kA2a}), moe),
            "vllm serve " + path + moe +
                " --tensor-parallel-size 4 --prefill-context-parallel-size 2 --enable-expert-parallel "
                "--all2all-backend deepep_high_throughput");
  // What an engine cannot say.
  EXPECT_EQ(Emitted(Request(Engine::kVllm, llama, {.tp = 8, .cp = 2}), llama),
            "error: vLLM cannot run this configuration: each vLLM PCP rank runs its dense FFN over its own TP group "
            "of 4, not --dense-tp 8");
  EXPECT_EQ(Emitted(Request(Engine::kVllm, moe, {.tp = 8, .attn_dp = 2, .cp = 2}), moe),
            "error: vLLM cannot run this configuration: vLLM's prefill context parallelism runs without data "
            "parallelism (PCP does not support data parallelism yet); --cp 2 with --attn-dp is not a vLLM line");
  EXPECT_EQ(Emitted(Request(Engine::kVllm, moe, {.tp = 8, .cp = 2}), moe),
            "error: vLLM cannot run this configuration: a MoE under vLLM's prefill context parallelism is written "
            "with expert parallelism (--moe a2a); seam does not model its MoE without it");
  EXPECT_EQ(Emitted(Request(Engine::kSglang, llama, {.tp = 8, .cp = 2, .dense_tp = 4}), llama),
            "error: SGLang cannot run this configuration: SGLang runs a dense FFN over the whole TP group or, with "
            "--moe-dense-tp-size 1, on each rank; not over 4 ranks (--dense-tp 4)");
}

// Decode context parallelism is each engine's DCP size with the all-to-all
// exchange of partials seam plans, and reads back as the same plan.
TEST(Emit, DecodeContextParallelismIsWrittenAsEachEnginesDcpSizeAndReadsBack) {
  const std::string mla = "deepseek-v3.json", gqa = "qwen3-235b-a22b.json";
  const std::string path = kConfigs + "/";
  EXPECT_EQ(Emitted(Request(Engine::kSglang, mla, {.tp = 8, .dcp = 8}), mla),
            "python3 -m sglang.launch_server --model-path " + path + mla +
                " --tp-size 8 --dcp-size 8 --dcp-comm-backend a2a");
  EXPECT_EQ(
      Emitted(Request(Engine::kVllm, gqa, {.tp = 8, .dcp = 2}), gqa),
      "vllm serve " + path + gqa + " --tensor-parallel-size 8 --decode-context-parallel-size 2 --dcp-comm-backend a2a");
  // What an engine cannot say.
  EXPECT_EQ(Emitted(Request(Engine::kVllm, mla, {.tp = 8, .cp = 2, .dcp = 2, .moe = MoeMode::kA2a}), mla),
            "error: vLLM cannot run this configuration: with prefill context parallelism vLLM's DCP group spans the "
            "PCP ranks; --cp 2 --dcp 2 (a split within each CP rank's TP group) is not a vLLM line");
  EXPECT_EQ(Emitted(Request(Engine::kSglang, mla, {.tp = 8, .attn_dp = 2, .dcp = 2, .dense_tp = 1}), mla),
            "error: SGLang cannot run this configuration: seam does not read SGLang's DCP groups beside "
            "--enable-dp-attention, so --dcp 2 with it is not written");
}

TEST(Emit, AKnobThatChangesNothingForTheModelIsNotedNotRefused) {
  // Qwen3-30B-A3B has no dense FFN: vLLM's dense width is moot.
  EmitRequest r = Request(Engine::kVllm, "qwen3-30b-a3b.json",
                          {.tp = 8, .attn_dp = 4, .dense_tp = 1, .dp_lm_head = true, .reduction = Reduction::kRsv});
  Expected<EngineLines> l = EmitLaunch(r, Load("qwen3-30b-a3b.json"));
  ASSERT_TRUE(l) << l.error().message;
  ASSERT_EQ(l->notes.size(), 1u);
  EXPECT_EQ(
      l->notes[0],
      "each vLLM DP rank runs its dense FFN over its own TP group of 2, not --dense-tp 1; for qwen3-moe it makes no "
      "difference");
}

TEST(Emit, APathAShellWouldSplitIsQuotedAndReadsBackWhole) {
  EmitRequest r = Request(Engine::kSglang, "llama-3.1-8b.json", {.tp = 2});
  r.model_path = "/models/my llama's $HOME/config.json";
  Expected<EngineLines> l = EmitLaunch(r, Load("llama-3.1-8b.json"));
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->lines[0], "python3 -m sglang.launch_server --model-path '/models/my llama'\\''s $HOME' --tp-size 2");
  Expected<EngineLaunch> back = ParseEngineArgs(Engine::kSglang, {l->lines[0]});
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->model_path, "/models/my llama's $HOME");
}

TEST(Emit, DtypesAreWrittenInTheEnginesSpelling) {
  EmitRequest r = Request(Engine::kVllm, "llama-3.1-8b.json", {.tp = 2});
  r.wire = {.act = WireDtype::kFp16, .dispatch = WireDtype::kFp16};
  r.kv = WireDtype::kFp8;
  r.quantization = "fp8";
  EXPECT_EQ(Emitted(r, "llama-3.1-8b.json"),
            "vllm serve " + kConfigs +
                "/llama-3.1-8b.json --tensor-parallel-size 2 --dtype float16 --quantization fp8 "
                "--kv-cache-dtype fp8");
  r.engine = Engine::kSglang;
  EXPECT_TRUE(
      Emitted(r, "llama-3.1-8b.json").ends_with("--dtype float16 --quantization fp8 --kv-cache-dtype fp8_e4m3"));
  r.kv = WireDtype::kBf16;
  EXPECT_TRUE(Emitted(r, "llama-3.1-8b.json").ends_with("--kv-cache-dtype bf16"));
}

}  // namespace
}  // namespace seam

// The built-in catalogue: tiny shapes of each family (reference/models.md
// §13) that keep its stage pattern and distinguishing parts, with eight
// attention heads so every family splits over up to eight ranks.
#include <fmt/format.h>

#include "seam/families.h"
#include "seam/model.h"
#include "seam/printable.h"

namespace seam {
namespace {

ModelDims Base(double eps) { return {.vocab = 256, .heads = 8, .kv_heads = 2, .head_dim = 16, .rms_eps = eps}; }

ModelDims LlamaDims() {
  ModelDims d = Base(1e-5);
  d.rope_theta = 500000.0;
  d.intermediate = 128;
  return d;
}

ModelDims DeepseekLiteDims(int hidden) {
  ModelDims d = Base(1e-6);
  d.kv_heads = d.heads;
  d.mla = {.q_lora = 0, .kv_lora = 32, .qk_nope = 16, .qk_rope = 8, .v = 16};
  d.rope_pairing = RopePairing::kInterleaved;
  // DeepSeek-V2-Lite's YaRN: its mscale and mscale_all_dim cancel on cos and
  // sin and scale the softmax; on 8 rotary dims the ramp keeps pairs 0 and 1,
  // blends pair 2 and slows pair 3.
  d.yarn = {.factor = 40,
            .original_positions = 4096,
            .beta_fast = 32,
            .beta_slow = 1,
            .mscale = 0.707,
            .mscale_all_dim = 0.707};
  d.intermediate = 2 * hidden;
  d.experts = 8;
  d.moe_intermediate = 32;
  d.shared_intermediate = 64;  // two shared experts of 32
  d.renormalize = false;
  d.renormalize_eps = 1e-20;
  return d;
}

// Mamba2: 16 heads in 8 groups (two heads share each B and C, and each
// group is normed alone), a state unlike the head width, a conv of 4.
ModelDims MixerDims(ModelDims d) {
  d.mixer = MixerKind::kMamba2;
  d.mixer_heads = 16;
  d.mixer_head_dim = 16;
  d.mixer_state = 8;
  d.mixer_groups = 8;
  d.mixer_conv = 4;
  return d;
}

const MoeLayout kFirstDense{.sparse = [](int layer) { return layer >= 1; }};

// A catalogue model is a real family at a tiny size: it carries the
// model_type its checkpoints are written as.
Model Typed(Model m, const char* hf_type) {
  m.hf_type = hf_type;
  return m;
}

Model Qwen3() {
  ModelDims d = Base(1e-6);
  d.rope_theta = 1e6;
  d.qk_norm = true;
  d.intermediate = 192;
  return Typed(DenseDecoderModel("qwen3", 4, 64, d), "qwen3");
}

Model Qwen3Moe() {
  ModelDims d = Base(1e-6);
  d.rope_theta = 1e6;
  d.qk_norm = true;
  d.experts = 8;
  d.moe_intermediate = 32;
  return Typed(MoeDecoderModel("qwen3-moe", 4, 64, d, 2), "qwen3_moe");
}

Model GptOss() {
  ModelDims d = Base(1e-5);
  d.rope_theta = 150000.0;
  d.attention_sinks = true;
  d.qkv_bias = true;
  d.experts = 4;
  d.moe_intermediate = 64;
  d.moe_bias = true;
  d.activation = Activation::kClampedSwiGlu;
  // Sliding-window attention (8 tokens) on even layers, full on odd; no a2a path.
  return Typed(MoeDecoderModel("gpt-oss", 4, 64, d, 2,
                               {.window = [](int layer) { return layer % 2 == 0 ? 8 : 0; }, .a2a = false}),
               "gpt_oss");
}

Model DeepseekQlora() {
  ModelDims d = DeepseekLiteDims(128);
  d.mla.q_lora = 48;
  return Typed(MoeDecoderModel("deepseek-qlora", 4, 128, d, 2, kFirstDense), "deepseek_v2");
}

Model KimiK2() {
  ModelDims d = DeepseekLiteDims(128);
  d.mla.q_lora = 48;
  d.shared_intermediate = 32;
  d.renormalize = true;
  d.scoring = RouterScoring::kSigmoid;
  d.correction_bias = true;
  d.routed_scaling = 2.827;
  // Kimi-K2's rope, and DeepSeek-V3's group limit (Kimi-K2 itself has one
  // group): four groups of two experts, a row choosing within its best two.
  d.rope_theta = 50000.0;
  d.yarn = {.factor = 32, .original_positions = 4096, .beta_fast = 1, .beta_slow = 1, .mscale = 1, .mscale_all_dim = 1};
  d.expert_groups = {.count = 4, .keep = 2, .score = GroupScore::kTopTwoSum};
  return Typed(MoeDecoderModel("kimi-k2", 4, 128, d, 2, kFirstDense), "kimi_k2");
}

Model Nemotron3Nano() {
  ModelDims d = MixerDims(Base(1e-5));
  d.rope = false;
  d.activation = Activation::kRelu2;
  d.experts = 8;
  d.moe_intermediate = 32;
  d.shared_intermediate = 64;
  d.scoring = RouterScoring::kSigmoid;
  d.correction_bias = true;
  d.routed_scaling = 2.5;
  // Grouped routing as n_group 4 and topk_group 2 ask (the real model has one
  // group): four groups of two experts, a row choosing within its best two.
  d.expert_groups = {.count = 4, .keep = 2, .score = GroupScore::kTopTwoSum};
  return Typed(HybridModel("nemotron-3-nano", "MEM*EM", 128, d, 2).value(), "nemotron_h");
}

Model Qwen3Next() {
  ModelDims d = Base(1e-6);
  d.attention_gate = true;
  d.qk_norm = true;
  d.rope_fraction = 0.25;
  d.experts = 8;
  d.moe_intermediate = 32;
  d.shared_intermediate = 32;
  d.shared_expert_gate = true;
  // Gated DeltaNet: 16 value heads of 8 on 8 key heads of 16 (two value
  // heads share each key head), a conv of 4.
  d.mixer = MixerKind::kGatedDeltaNet;
  d.mixer_heads = 16;
  d.mixer_head_dim = 8;
  d.mixer_state = 16;
  d.mixer_groups = 8;
  d.mixer_conv = 4;
  return Typed(MixerMoeModel("qwen3-next", 4, 128, d, 2, 4), "qwen3_next");
}

Model NemotronNas() {
  ModelDims d = Base(1e-5);
  // The model's own KV heads and FFN width are its first block's, as DeciLM
  // has none of its own.
  d.kv_heads = 4;
  d.intermediate = 256;
  using P = NasBlock::Part;
  // Block configs: n_heads_in_group 2, 2, -, 4, linear, -; ffn_mult 2.625,
  // 5.25, 1.3125, 2.625, 1.0, - at hidden 128 (widths rounded up to 256).
  return Typed(NasModel("nemotron-nas", 128, d,
                        {{P::kPresent, 4, P::kPresent, 256},
                         {P::kPresent, 4, P::kPresent, 512},
                         {P::kNoOp, 0, P::kPresent, 256},
                         {P::kPresent, 2, P::kPresent, 256},
                         {P::kLinear, 0, P::kPresent, 256},
                         {P::kNoOp, 0, P::kNoOp, 0}}),
               "nemotron-nas");
}

Model Mhc() {
  ModelDims d = Base(1e-6);
  d.kv_heads = 1;
  d.intermediate = 128;
  d.experts = 4;
  d.moe_intermediate = 32;
  d.shared_intermediate = 32;
  return HyperConnectionModel("mhc", 4, 64, d, 2, 4, 1);
}

}  // namespace

Model LlamaModel(int layers) { return Typed(DenseDecoderModel("llama", layers, 64, LlamaDims()), "llama"); }

Model DeepseekModel(int layers, int hidden, int top_k) {
  return Typed(MoeDecoderModel("deepseek-v2-lite", layers, hidden, DeepseekLiteDims(hidden), top_k, kFirstDense),
               "deepseek_v2");
}

Expected<Model> NemotronHModel(const std::string& pattern, int hidden) {
  ModelDims d = MixerDims(Base(1e-5));
  d.rope = false;
  d.intermediate = 2 * hidden;
  d.activation = Activation::kRelu2;
  d.mixer_dt_max = 0.7;  // the real (0, inf) never bites; on tiny weights dt lies near 0.7, so this clamps some
  if (pattern.find('E') != std::string::npos) {  // experts only where the pattern has a MoE, as a config says
    d.experts = 8;
    d.moe_intermediate = 32;
    d.shared_intermediate = 64;
  }
  Expected<Model> m = HybridModel("nemotron-h", pattern, hidden, d, 2);
  if (!m) return m.error();
  return Typed(*std::move(m), "nemotron_h");
}

Model Zaya1Model(int layers) {
  ModelDims d = Base(1e-5);
  d.rope_theta = 5e6;
  d.rope_fraction = 0.5;
  d.experts = 4;
  d.moe_intermediate = 64;
  d.renormalize = false;
  d.skip_expert = true;
  return Typed(AlternatingModel("zaya1", layers, 64, d, 1), "zaya");
}

const std::vector<CatalogueEntry>& Catalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"llama", "Llama: [A F] (GQA, RoPE, SwiGLU); dumps a Hugging Face checkpoint",
       "TP, attention DP, dense-tp, input-scattered, CP, DCP, PP", "llama-3.1-8b.json", [] { return LlamaModel(4); }},
      {"llama3", "Llama 3: [A F] with Llama 3 RoPE scaling", "TP, attention DP, dense-tp, input-scattered, CP, DCP, PP",
       "llama-3.1-8b.json",
       [] {
         ModelDims d = LlamaDims();
         d.rope_scaling = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_positions = 16};
         return Typed(DenseDecoderModel("llama3", 4, 64, d), "llama");
       }},
      {"qwen3", "Qwen3 dense: [A F] with query/key norms", "TP, attention DP, dense-tp, input-scattered, CP, DCP, PP",
       "qwen3-8b.json", Qwen3},
      {"qwen3-moe", "Qwen3 MoE: [A E] with query/key norms, top-k renormalised",
       "TP, attention DP, TP-MoE and a2a, input-scattered, CP, DCP, PP", "qwen3-30b-a3b.json", Qwen3Moe},
      {"gpt-oss", "GPT-OSS: [A E], attention sinks, sliding window on alternate layers, biases",
       "TP, attention DP, TP-MoE (no a2a), input-scattered, CP, DCP, PP", "gpt-oss-20b.json", GptOss},
      {"deepseek-v2-lite", "DeepSeek-V2-Lite: MLA without a query latent, first layer dense, shared experts",
       "TP, attention DP, dense-tp 1, TP-MoE and a2a, input-scattered, CP, DCP, PP", "deepseek-v2-lite.json",
       [] { return DeepseekModel(4, 64, 3); }},
      {"deepseek-qlora", "DeepSeek with a query latent (the seed PR's synthetic 4 layers)",
       "TP, attention DP, dense-tp 1, TP-MoE and a2a, input-scattered (latent gather), CP, DCP, PP", "-",
       DeepseekQlora},
      {"kimi-k2", "Kimi-K2 (DeepSeek-V3 shape): MLA, sigmoid routing with a correction bias, scaled",
       "TP, attention DP, dense-tp 1, TP-MoE and a2a, input-scattered, CP, DCP, PP", "kimi-k2.json", KimiK2},
      {"nemotron-h", "Nemotron-H: single-stage layers 'M-M*M-' (Mamba2 mixers, attention without RoPE, ReLU^2)",
       "TP, attention DP, dense-tp, DCP, PP (mixers: no input-scattered or context parallelism)", "nemotron-h-56b.json",
       [] { return NemotronHModel("M-M*M-", 128).value(); }},
      {"nemotron-3-nano", "Nemotron-3-Nano: single-stage 'MEM*EM', sigmoid-routed ReLU^2 experts",
       "TP, attention DP, TP-MoE and a2a, DCP, PP (mixers: no input-scattered or context parallelism)",
       "nemotron-3-nano-30b-a3b.json", Nemotron3Nano},
      {"zaya1", "ZAYA1: single-stage layers alternating attention and a top-1 MoE with a skip expert",
       "TP, attention DP, TP-MoE and a2a, input-scattered, CP, DCP, PP", "-", [] { return Zaya1Model(4); }},
      {"qwen3-next", "Qwen3-Next: [M E] x 3 then [A E] (gated linear-attention mixers, gated attention)",
       "TP, attention DP, TP-MoE and a2a, DCP, PP (mixers: no input-scattered or context parallelism)",
       "qwen3-next-80b-a3b.json", Qwen3Next},
      {"nemotron-nas", "Nemotron-NAS: per-layer blocks with no-op attention/FFN, linear layers, varied widths",
       "TP, attention DP, dense-tp, CP, DCP, PP", "nemotron-super-49b.json", NemotronNas},
      {"mhc", "DeepSeek-V4-like hyper-connections: 4 residual streams mixed by Sinkhorn-normalised matrices",
       "TP, attention DP, dense-tp, TP-MoE and a2a, input-scattered, CP, DCP, PP", "deepseek-v4-flash.json", Mhc},
  };
  return entries;
}

Expected<Model> CatalogueModel(const std::string& name) {
  std::vector<std::string> names;
  for (const CatalogueEntry& e : Catalogue()) {
    if (e.name == name) return e.make();
    names.push_back(e.name);
  }
  return InvalidArgument(
      fmt::format("unknown model '{}'; the catalogue has: {} (see `seam models`)", name, fmt::join(names, ", ")));
}

std::string ModelLabel(const std::string& name, int hidden) {
  for (const CatalogueEntry& e : Catalogue()) {
    if (e.name == name && e.make().hidden == hidden) return fmt::format("{} (tiny shape, hidden {})", name, hidden);
  }
  return Printable(name);  // a name from a file: its control bytes escaped
}

}  // namespace seam

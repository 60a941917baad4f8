// Hugging Face config.json import: the real configs in configs
// become models of their real size, with the stage pattern of their family;
// every malformed config is a clear error that names the source and the key.
#include "seam/hf_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/files.h"
#include "seam/model.h"

namespace seam {
namespace {

using json = nlohmann::json;

std::string DataPath(const std::string& file) { return SEAM_HF_CONFIGS "/" + file; }

Model MustLoad(const std::string& file) {
  Expected<Model> m = LoadHfConfig(DataPath(file));
  if (!m) ADD_FAILURE() << m.error().message;
  return m ? *std::move(m) : Model{};
}

std::string DataText(const std::string& file) {
  Expected<std::string> text = ReadFileAtMost(DataPath(file), kMaxConfigBytes);
  if (!text) ADD_FAILURE() << text.error().message;
  return text ? *text : "";
}

json DataJson(const std::string& file) { return json::parse(DataText(file)); }

Model MustImport(const json& j) {
  Expected<Model> m = ModelFromHfConfig(j.dump(), "test.json");
  if (!m) ADD_FAILURE() << m.error().message;
  return m ? *std::move(m) : Model{};
}

// The message of a config that must not import.
std::string TextError(std::string_view text) {
  Expected<Model> m = ModelFromHfConfig(text, "test.json");
  if (m) return "imported as " + m->name;
  EXPECT_EQ(m.error().code, ErrorCode::kMalformed) << m.error().message;
  return m.error().message;
}
std::string ImportError(const json& j) { return TextError(j.dump()); }

// Every field, so a mismatch shows which one.
std::string Text(const ModelDims& d) {
  return fmt::format(
      "vocab={} heads={} kv_heads={} head_dim={} rope={} rope_theta={} rope_scaling={}/{}/{}/{} rope_fraction={} "
      "qk_norm={} sinks={} gate={} qkv_bias={} mla={}/{}/{}/{}/{} rms_eps={} intermediate={} activation={} "
      "swiglu_limit={} moe_bias={} "
      "experts={} moe_intermediate={} shared={} renormalize={} scoring={} correction_bias={} routed_scaling={} "
      "skip_expert={} mixer={}/{}/{} mixer_kind={} mixer_groups={} mixer_conv={} mixer_dt={}/{} "
      "hc_sinkhorn_iters={} yarn={}/{}/{}/{}/{}/{}/{}/{} rope_pairing={} expert_groups={}/{}/{} renormalize_eps={} "
      "shared_expert_gate={}",
      d.vocab, d.heads, d.kv_heads, d.head_dim, d.rope, d.rope_theta, d.rope_scaling.factor,
      d.rope_scaling.low_freq_factor, d.rope_scaling.high_freq_factor, d.rope_scaling.original_positions,
      d.rope_fraction, d.qk_norm, d.attention_sinks, d.attention_gate, d.qkv_bias, d.mla.q_lora, d.mla.kv_lora,
      d.mla.qk_nope, d.mla.qk_rope, d.mla.v, d.rms_eps, d.intermediate, static_cast<int>(d.activation), d.swiglu_limit,
      d.moe_bias, d.experts, d.moe_intermediate, d.shared_intermediate, d.renormalize, static_cast<int>(d.scoring),
      d.correction_bias, d.routed_scaling, d.skip_expert, d.mixer_heads, d.mixer_head_dim, d.mixer_state,
      static_cast<int>(d.mixer), d.mixer_groups, d.mixer_conv, d.mixer_dt_min, d.mixer_dt_max, d.hc_sinkhorn_iters,
      d.yarn.factor, d.yarn.original_positions, d.yarn.beta_fast, d.yarn.beta_slow, d.yarn.mscale,
      d.yarn.mscale_all_dim, d.yarn.attention_factor, d.yarn.truncate, static_cast<int>(d.rope_pairing),
      d.expert_groups.count, d.expert_groups.keep, static_cast<int>(d.expert_groups.score), d.renormalize_eps,
      d.shared_expert_gate);
}

void ExpectDims(const Model& m, const ModelDims& want) {
  ASSERT_TRUE(m.dims.has_value()) << m.name;
  EXPECT_EQ(Text(*m.dims), Text(want)) << m.name;
  EXPECT_TRUE(*m.dims == want) << m.name;
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The single-stage pattern of a Nemotron-H override string.
std::string HybridPattern(const std::string& override_pattern) {
  std::string out;
  for (char c : override_pattern) out += c == '*' ? 'A' : c == '-' ? 'F' : c;
  return out;
}

// ZAYA1-8B as reference/models.md §7 gives it (no public config.json copy).
json Zaya1Config() {
  return json::parse(R"({
    "architectures": ["ZayaForCausalLM"], "model_type": "zaya",
    "hidden_size": 2048, "num_hidden_layers": 80,
    "cca_num_q_heads": 8, "num_attention_heads": 16, "num_query_groups": 2, "kv_channels": 128,
    "partial_rotary_factor": 0.5, "rope_theta": 5000000, "max_position_embeddings": 131072,
    "num_experts": 16, "moe_router_topk": 1, "ffn_hidden_size": 4096, "zaya_mlp_expansion": 256,
    "zaya_use_mod": true, "zaya_use_eda": true, "scale_residual_merge": true, "residual_in_fp32": true,
    "norm_epsilon": 1e-05, "tie_word_embeddings": true, "vocab_size": 262272})");
}

const ParallelConfig kWide{.tp = 8, .attn_dp = 4, .dense_tp = 1, .moe = MoeMode::kA2a, .pp = 2};

const std::vector<std::string> kFiles = {"llama-3.1-8b.json",       "qwen3-8b.json",
                                         "qwen3-30b-a3b.json",      "gpt-oss-20b.json",
                                         "deepseek-v2-lite.json",   "kimi-k2.json",
                                         "nemotron-h-56b.json",     "nemotron-3-nano-30b-a3b.json",
                                         "qwen3-next-80b-a3b.json", "nemotron-super-49b.json",
                                         "deepseek-v4-flash.json"};

// ---------------------------------------------------------------------------
// The real configs, one family each.

TEST(HfConfig, EveryRealConfigImportsWithSizesForEveryStage) {
  for (const std::string& file : kFiles) {
    SCOPED_TRACE(file);
    const Model m = MustLoad(file);
    ASSERT_TRUE(m.dims.has_value());
    EXPECT_GT(m.dims->vocab, 0);
    for (const StageRef& s : StagesOf(m, 0, m.num_layers)) {
      SCOPED_TRACE(s.index);
      switch (s.decl.kind) {
        case StageKind::kAttention: EXPECT_GT(m.dims->heads * m.dims->head_dim, 0); break;
        case StageKind::kMixer: EXPECT_GT(m.dims->mixer_heads * m.dims->mixer_state, 0); break;
        case StageKind::kDenseFfn: EXPECT_GT(s.decl.ffn_width + m.dims->intermediate, 0); break;
        case StageKind::kSparseFfn: EXPECT_GE(m.dims->experts, s.decl.top_k); break;
        default: break;
      }
    }
  }
}

TEST(HfConfig, KnownModelTypesAreTheTwelveFamilies) {
  EXPECT_EQ(KnownModelTypes(),
            (std::vector<std::string>{"llama", "qwen3", "qwen3_moe", "gpt_oss", "deepseek_v2", "deepseek_v3", "kimi_k2",
                                      "nemotron_h", "zaya", "qwen3_next", "nemotron-nas", "deepseek_v4"}));
}

TEST(HfConfig, Llama31_8BIsThirtyTwoDenseLayersWithLlama3RopeScaling) {
  const Model m = MustLoad("llama-3.1-8b.json");
  EXPECT_EQ(m.name, "llama");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.residual_streams, 1);
  EXPECT_EQ(PatternOf(m), Repeat("[A F]", 32));
  ModelDims want;
  want.vocab = 128256;
  want.heads = 32;
  want.kv_heads = 8;
  want.head_dim = 128;
  want.rope_theta = 500000.0;
  want.rope_scaling = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_positions = 8192};
  want.rms_eps = 1e-5;
  want.intermediate = 14336;
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(31)[0], AttentionStage({.gather_width = 4096}));
  EXPECT_EQ(m.layer(31)[1], DenseFfnStage());
}

TEST(HfConfig, Qwen3_8BIsADenseDecoderWithQueryKeyNormsAndAnExplicitHeadDim) {
  const Model m = MustLoad("qwen3-8b.json");
  EXPECT_EQ(m.name, "qwen3");
  EXPECT_EQ(m.num_layers, 36);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(PatternOf(m), Repeat("[A F]", 36));
  ModelDims want;
  want.vocab = 151936;
  want.heads = 32;
  want.kv_heads = 8;
  want.head_dim = 128;
  want.rope_theta = 1e6;
  want.qk_norm = true;
  want.rms_eps = 1e-6;
  want.intermediate = 12288;
  ExpectDims(m, want);
}

TEST(HfConfig, Qwen3_30B_A3BHasAMoeOfTopEightOf128InEveryLayer) {
  const Model m = MustLoad("qwen3-30b-a3b.json");
  EXPECT_EQ(m.name, "qwen3-moe");
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(PatternOf(m), Repeat("[A E]", 48));
  ModelDims want;
  want.vocab = 151936;
  want.heads = 32;
  want.kv_heads = 4;
  want.head_dim = 128;  // q width 4096 != hidden 2048
  want.rope_theta = 1e6;
  want.qk_norm = true;
  want.rms_eps = 1e-6;
  want.intermediate = 6144;
  want.experts = 128;
  want.moe_intermediate = 768;
  want.renormalize = true;
  ExpectDims(m, want);
  for (int l = 0; l < m.num_layers; ++l) EXPECT_EQ(m.layer(l)[1], SparseFfnStage({.top_k = 8})) << l;
}

TEST(HfConfig, Qwen3MoeLayersAreDenseInMlpOnlyLayersAndOffTheSparseStep) {
  json j = DataJson("qwen3-30b-a3b.json");
  j["num_hidden_layers"] = 6;
  j["decoder_sparse_step"] = 2;  // sparse when (l + 1) % 2 == 0: layers 1, 3, 5
  j["mlp_only_layers"] = {3};
  const Model m = MustImport(j);
  EXPECT_EQ(PatternOf(m), "[A F][A E][A F][A F][A F][A E]");
  EXPECT_EQ(m.dims->intermediate, 6144);
}

TEST(HfConfig, GptOss20BSlidesOnEvenLayersAndHasNoAllToAll) {
  const Model m = MustLoad("gpt-oss-20b.json");
  EXPECT_EQ(m.name, "gpt-oss");
  EXPECT_EQ(m.num_layers, 24);
  EXPECT_EQ(m.hidden, 2880);
  EXPECT_EQ(PatternOf(m), Repeat("[A E]", 24));
  ModelDims want;
  want.vocab = 201088;
  want.heads = 64;
  want.kv_heads = 8;
  want.head_dim = 64;
  want.rope_theta = 150000.0;
  want.yarn = {.factor = 32, .original_positions = 4096, .beta_fast = 32, .beta_slow = 1, .truncate = false};
  want.attention_sinks = true;
  want.qkv_bias = true;
  want.rms_eps = 1e-5;
  want.activation = Activation::kClampedSwiGlu;
  want.swiglu_limit = 7.0;
  want.moe_bias = true;
  want.experts = 32;
  want.moe_intermediate = 2880;
  ExpectDims(m, want);
  for (int l = 0; l < m.num_layers; ++l) {
    SCOPED_TRACE(l);
    EXPECT_EQ(m.layer(l)[0].window, l % 2 == 0 ? 128 : 0);
    EXPECT_EQ(m.layer(l)[1], SparseFfnStage({.top_k = 4, .a2a = false}));
  }
}

TEST(HfConfig, GptOssWithoutLayerTypesSlidesOnEvenLayersLikeTransformers) {
  json j = DataJson("gpt-oss-20b.json");
  j.erase("layer_types");
  j.erase("num_experts_per_tok");  // experts_per_token is the other spelling
  const Model m = MustImport(j);
  EXPECT_EQ(m.layer(0)[0].window, 128);
  EXPECT_EQ(m.layer(1)[0].window, 0);
  EXPECT_EQ(m.layer(0)[1].top_k, 4);
}

TEST(HfConfig, DeepseekV2LiteIsMlaWithoutAQueryLatentAndItsFirstLayerDense) {
  const Model m = MustLoad("deepseek-v2-lite.json");
  EXPECT_EQ(m.name, "deepseek-v2");
  EXPECT_EQ(m.num_layers, 27);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(PatternOf(m), "[A F]" + Repeat("[A E]", 26));
  ModelDims want;
  want.vocab = 102400;
  want.heads = 16;
  want.kv_heads = 16;
  want.head_dim = 128;  // v_head_dim: the attention output is heads x v wide
  want.mla = {.q_lora = 0, .kv_lora = 512, .qk_nope = 128, .qk_rope = 64, .v = 128};
  want.rms_eps = 1e-6;
  want.intermediate = 10944;
  want.experts = 64;
  want.moe_intermediate = 1408;
  want.shared_intermediate = 2 * 1408;
  want.renormalize = false;
  want.scoring = RouterScoring::kSoftmax;
  want.correction_bias = false;  // topk_method greedy
  want.routed_scaling = 1.0;
  want.yarn = {.factor = 40,
               .original_positions = 4096,
               .beta_fast = 32,
               .beta_slow = 1,
               .mscale = 0.707,
               .mscale_all_dim = 0.707};
  want.rope_pairing = RopePairing::kInterleaved;
  want.renormalize_eps = 1e-20;
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(0)[0], AttentionStage({.gather_width = 2048}));  // no query latent: gathers its input
  EXPECT_EQ(m.layer(1)[1], SparseFfnStage({.top_k = 6}));
}

TEST(HfConfig, DeepseekSparseLayersStartAtFirstKDenseReplaceOnEveryMoeLayerFreqth) {
  json j = DataJson("deepseek-v2-lite.json");
  j["num_hidden_layers"] = 8;
  j["first_k_dense_replace"] = 3;
  j["moe_layer_freq"] = 2;  // sparse: l >= 3 and l % 2 == 0
  EXPECT_EQ(PatternOf(MustImport(j)), "[A F][A F][A F][A F][A E][A F][A E][A F]");
  j["n_routed_experts"] = nullptr;  // no experts: every layer dense
  EXPECT_EQ(PatternOf(MustImport(j)), Repeat("[A F]", 8));
}

TEST(HfConfig, KimiK2IsMlaWithAQueryLatentAndSigmoidRoutingWithACorrectionBias) {
  const Model m = MustLoad("kimi-k2.json");
  EXPECT_EQ(m.name, "kimi-k2");
  EXPECT_EQ(m.num_layers, 61);
  EXPECT_EQ(m.hidden, 7168);
  EXPECT_EQ(PatternOf(m), "[A F]" + Repeat("[A E]", 60));
  ModelDims want;
  want.vocab = 163840;
  want.heads = 64;
  want.kv_heads = 64;
  want.head_dim = 128;
  want.rope_theta = 50000.0;
  want.mla = {.q_lora = 1536, .kv_lora = 512, .qk_nope = 128, .qk_rope = 64, .v = 128};
  want.rms_eps = 1e-6;
  want.intermediate = 18432;
  want.experts = 384;
  want.moe_intermediate = 2048;
  want.shared_intermediate = 2048;
  want.renormalize = true;
  want.scoring = RouterScoring::kSigmoid;
  want.correction_bias = true;  // topk_method noaux_tc
  want.routed_scaling = 2.827;
  want.yarn = {
      .factor = 32, .original_positions = 4096, .beta_fast = 1, .beta_slow = 1, .mscale = 1, .mscale_all_dim = 1};
  want.rope_pairing = RopePairing::kInterleaved;
  want.expert_groups = {.count = 1, .keep = 1, .score = GroupScore::kTopTwoSum};
  want.renormalize_eps = 1e-20;
  ExpectDims(m, want);
  // With a query latent the attention gathers its latents: q_lora + kv_lora + qk_rope.
  EXPECT_EQ(m.layer(0)[0].gather_width, 1536 + 512 + 64);
  EXPECT_EQ(m.layer(60)[1], SparseFfnStage({.top_k = 8}));
}

TEST(HfConfig, DeepseekV3IsTheDeepseekFamilyUnderItsOwnName) {
  json j = DataJson("kimi-k2.json");
  j["model_type"] = "deepseek_v3";
  const Model m = MustImport(j);
  EXPECT_EQ(m.name, "deepseek-v3");
  EXPECT_EQ(PatternOf(m), PatternOf(MustLoad("kimi-k2.json")));
}

// DeepSeek-V3's own routing keys: 256 experts in 8 groups, the best 4 kept.
json DeepseekV3() {
  json j = DataJson("kimi-k2.json");
  j["model_type"] = "deepseek_v3";
  j["n_routed_experts"] = 256;
  j["n_group"] = 8;
  j["topk_group"] = 4;
  j["routed_scaling_factor"] = 2.5;
  return j;
}

TEST(HfConfig, DeepseekV3RoutesWithinItsBestGroupsByTheirTopTwoSum) {
  const Model m = MustImport(DeepseekV3());
  EXPECT_EQ(m.dims->expert_groups, (ExpertGroups{.count = 8, .keep = 4, .score = GroupScore::kTopTwoSum}));
  EXPECT_EQ(m.dims->routed_scaling, 2.5);
  // Without the keys, transformers' DeepseekV3Config defaults: 8 groups, 4 kept.
  json j = DeepseekV3();
  j.erase("n_group");
  j.erase("topk_group");
  EXPECT_EQ(MustImport(j).dims->expert_groups, (ExpertGroups{.count = 8, .keep = 4, .score = GroupScore::kTopTwoSum}));
}

TEST(HfConfig, DeepseekV3PairsRopeDimsByHalvesWhenRopeInterleaveIsFalse) {
  json j = DeepseekV3();
  EXPECT_EQ(MustImport(j).dims->rope_pairing, RopePairing::kInterleaved);  // rope_interleave defaults to true
  j["rope_interleave"] = false;
  EXPECT_EQ(MustImport(j).dims->rope_pairing, RopePairing::kHalf);
  json v2 = DataJson("deepseek-v2-lite.json");
  v2["rope_interleave"] = false;  // DeepSeek-V2 has no such key: it always pairs adjacent dims
  EXPECT_EQ(MustImport(v2).dims->rope_pairing, RopePairing::kInterleaved);
}

TEST(HfConfig, DeepseekV2GroupLimitedGreedyKeepsTheGroupsWithTheBestExpert) {
  // DeepSeek-V2 itself: 160 experts in 8 groups, 3 kept, top 6, scaled by 16.
  json j = DataJson("deepseek-v2-lite.json");
  j["n_routed_experts"] = 160;
  j["n_group"] = 8;
  j["topk_group"] = 3;
  j["topk_method"] = "group_limited_greedy";
  j["routed_scaling_factor"] = 16.0;
  const Model m = MustImport(j);
  EXPECT_EQ(m.dims->expert_groups, (ExpertGroups{.count = 8, .keep = 3, .score = GroupScore::kMax}));
  EXPECT_EQ(m.dims->scoring, RouterScoring::kSoftmax);
  EXPECT_FALSE(m.dims->correction_bias);
  EXPECT_FALSE(m.dims->renormalize);
  EXPECT_EQ(m.dims->routed_scaling, 16.0);
}

TEST(HfConfig, DeepseekV2ScalesItsTopKWeightsAndNeverRenormalisesThem) {
  // transformers' DeepseekV2Moe multiplies the top-k softmax weights by
  // routed_scaling_factor and does not read norm_topk_prob.
  json j = DataJson("deepseek-v2-lite.json");
  j["routed_scaling_factor"] = 16.0;
  for (bool norm : {true, false}) {
    j["norm_topk_prob"] = norm;
    const Model m = MustImport(j);
    EXPECT_FALSE(m.dims->renormalize);
    EXPECT_EQ(m.dims->routed_scaling, 16.0);
  }
}

TEST(HfConfig, NemotronH56BIsSingleStageLayersFromItsOverridePattern) {
  const Model m = MustLoad("nemotron-h-56b.json");  // its time_step_limit holds a bare Infinity
  const std::string pattern =
      "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-"
      "M-M-M-M-M-";
  EXPECT_EQ(m.name, "nemotron-h");
  EXPECT_EQ(m.num_layers, 118);
  EXPECT_EQ(m.hidden, 8192);
  EXPECT_EQ(PatternOf(m), HybridPattern(pattern));
  ModelDims want;
  want.vocab = 131072;
  want.heads = 64;
  want.kv_heads = 8;
  want.head_dim = 128;  // attention_head_dim
  want.rope = false;
  want.rms_eps = 1e-5;
  want.intermediate = 32768;
  want.activation = Activation::kRelu2;
  want.mixer_heads = 256;
  want.mixer_head_dim = 64;
  want.mixer_state = 256;
  want.mixer_groups = 8;
  want.mixer_conv = 4;  // time_step_limit [0, Infinity]: the default
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(0), std::vector{MixerStage()});
  EXPECT_EQ(m.layer(1), std::vector{DenseFfnStage()});
  EXPECT_EQ(m.layer(7), std::vector{AttentionStage({.gather_width = 8192})});
}

TEST(HfConfig, NemotronHTakesOneMlpWidthPerDashWhenIntermediateSizeIsAList) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["hybrid_override_pattern"] = "M-*-E-";
  j["num_hidden_layers"] = 6;
  j["intermediate_size"] = {100, 200, 300};
  const Model m = MustImport(j);
  EXPECT_EQ(PatternOf(m), "MFAFEF");
  EXPECT_EQ(m.layer(1)[0].ffn_width, 100);
  EXPECT_EQ(m.layer(3)[0].ffn_width, 200);
  EXPECT_EQ(m.layer(5)[0].ffn_width, 300);
  EXPECT_EQ(m.dims->intermediate, 100);
}

TEST(HfConfig, NemotronHReadsItsTimeStepLimitAndTheMamba2KeysOlderAliases) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["time_step_limit"] = {0.001, 0.1};
  EXPECT_EQ(MustImport(j).dims->mixer_dt_min, 0.001);
  EXPECT_EQ(MustImport(j).dims->mixer_dt_max, 0.1);
  // HF's NemotronHConfig takes mamba_n_groups, mamba_d_conv and mamba_dt_limit over the current names.
  j["mamba_n_groups"] = 4;
  j["mamba_d_conv"] = 2;
  j["mamba_dt_limit"] = {0.0, 0.5};
  const Model m = MustImport(j);
  EXPECT_EQ(m.dims->mixer_groups, 4);
  EXPECT_EQ(m.dims->mixer_conv, 2);
  EXPECT_EQ(m.dims->mixer_dt_max, 0.5);
}

TEST(HfConfig, Nemotron3NanoIsNamedForItsExpertsAndRoutesBySigmoidWithABias) {
  const Model m = MustLoad("nemotron-3-nano-30b-a3b.json");
  EXPECT_EQ(m.name, "nemotron-3");
  EXPECT_EQ(m.num_layers, 52);
  EXPECT_EQ(m.hidden, 2688);
  EXPECT_EQ(PatternOf(m), HybridPattern("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"));
  ModelDims want;
  want.vocab = 131072;
  want.heads = 32;
  want.kv_heads = 2;
  want.head_dim = 128;
  want.rope = false;
  want.rms_eps = 1e-5;
  want.intermediate = 1856;
  want.activation = Activation::kRelu2;
  want.experts = 128;
  want.moe_intermediate = 1856;
  want.shared_intermediate = 3712;
  want.renormalize = true;
  want.scoring = RouterScoring::kSigmoid;
  want.correction_bias = true;
  want.routed_scaling = 2.5;
  want.mixer_heads = 64;
  want.mixer_head_dim = 64;
  want.mixer_state = 128;
  want.mixer_groups = 8;
  want.mixer_conv = 4;
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(1), std::vector{SparseFfnStage({.top_k = 6})});
}

// NemotronHTopkRouter is DeepSeek-V3's: n_group and topk_group group the
// experts, each group scored by its best two; without them, one group.
TEST(HfConfig, NemotronHRoutesWithinItsBestGroupsByTheirTopTwoSum) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["n_group"] = 4;
  j["topk_group"] = 2;
  EXPECT_EQ(MustImport(j).dims->expert_groups, (ExpertGroups{.count = 4, .keep = 2, .score = GroupScore::kTopTwoSum}));
  j.erase("n_group");
  j.erase("topk_group");
  EXPECT_EQ(MustImport(j).dims->expert_groups, (ExpertGroups{.count = 1, .keep = 1, .score = GroupScore::kTopTwoSum}));
  j["n_group"] = 5;
  EXPECT_EQ(ImportError(j), "test.json: n_routed_experts 128 is not divisible by n_group 5");
  j["n_group"] = 64;  // groups of 2
  j["topk_group"] = 2;
  EXPECT_EQ(ImportError(j),
            "test.json: num_experts_per_tok 6 is more than the 4 experts a row chooses from (topk_group 2 groups of "
            "2)");
}

TEST(HfConfig, Qwen3Next80BHasFullAttentionOnEveryFourthLayerAndAMoeInEach) {
  const Model m = MustLoad("qwen3-next-80b-a3b.json");
  EXPECT_EQ(m.name, "qwen3-next");
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(PatternOf(m), Repeat("[M E][M E][M E][A E]", 12));
  ModelDims want;
  want.vocab = 151936;
  want.heads = 16;
  want.kv_heads = 2;
  want.head_dim = 256;
  want.rope_theta = 1e7;
  want.rope_fraction = 0.25;
  want.qk_norm = true;
  want.attention_gate = true;
  want.rms_eps = 1e-6;
  want.intermediate = 5120;
  want.experts = 512;
  want.moe_intermediate = 512;
  want.shared_intermediate = 512;
  want.shared_expert_gate = true;
  want.renormalize = true;
  want.mixer = MixerKind::kGatedDeltaNet;
  want.mixer_heads = 32;
  want.mixer_head_dim = 128;
  want.mixer_state = 128;
  want.mixer_groups = 16;  // linear_num_key_heads: two value heads per key head
  want.mixer_conv = 4;
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(3)[1], SparseFfnStage({.top_k = 10}));
}

TEST(HfConfig, Qwen3NextAcceptsLayerTypesThatAgreeWithItsInterval) {
  json j = DataJson("qwen3-next-80b-a3b.json");
  j["num_hidden_layers"] = 6;
  j["full_attention_interval"] = 3;
  j["layer_types"] = {"linear_attention", "linear_attention", "full_attention",
                      "linear_attention", "linear_attention", "full_attention"};
  EXPECT_EQ(PatternOf(MustImport(j)), Repeat("[M E][M E][A E]", 2));
}

TEST(HfConfig, NemotronSuper49BSizesEachBlockFromItsConfig) {
  const Model m = MustLoad("nemotron-super-49b.json");
  EXPECT_EQ(m.name, "nemotron-nas");
  EXPECT_EQ(m.num_layers, 80);
  EXPECT_EQ(m.hidden, 8192);
  ModelDims want;
  want.vocab = 128256;
  want.heads = 64;
  want.kv_heads = 8;  // num_key_value_heads is null: the first attention block's
  want.head_dim = 128;
  want.rope_theta = 500000.0;
  want.rope_scaling = {.factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_positions = 8192};
  want.rms_eps = 1e-5;
  want.intermediate = 14336;  // intermediate_size is null: the first FFN block's
  ExpectDims(m, want);
  const std::string pattern = PatternOf(m);
  EXPECT_EQ(pattern.substr(0, 60), "[A F][A F][A F][A F][A F][A F][. F][. F][A F][A F][A F][. F]");
  EXPECT_EQ(std::count(pattern.begin(), pattern.end(), '.'), 31);
  // ffn_mult -> round_up(int(2 * mult * 8192 / 3), 256), first block of each mult.
  const std::vector<std::pair<int, int>> widths = {{0, 14336}, {1, 28672}, {11, 17920},
                                                   {42, 7168}, {54, 5632}, {62, 2816}};
  for (const auto& [layer, width] : widths) EXPECT_EQ(m.layer(layer)[1], DenseFfnStage({.width = width})) << layer;
  EXPECT_EQ(m.layer(0)[0], AttentionStage({.gather_width = 8192, .kv_heads = 8}));  // 64 heads / 8 in a group
  EXPECT_EQ(m.layer(6)[0], NoOpStage());
}

TEST(HfConfig, NasBlocksMayBeLinearOrNoOpAndGroupHeadsPerLayer) {
  json j = DataJson("nemotron-super-49b.json");
  j["num_hidden_layers"] = 3;
  j["block_configs"] = json::parse(R"([
    {"attention": {"n_heads_in_group": 4, "no_op": false, "replace_with_linear": false},
     "ffn": {"ffn_mult": 1.0, "no_op": false, "replace_with_linear": false}},
    {"attention": {"n_heads_in_group": null, "no_op": false, "replace_with_linear": true},
     "ffn": {"ffn_mult": null, "no_op": true, "replace_with_linear": false}},
    {"attention": {"n_heads_in_group": 64, "no_op": false, "replace_with_linear": false},
     "ffn": {"ffn_mult": null, "no_op": false, "replace_with_linear": true}}])");
  const Model m = MustImport(j);
  EXPECT_EQ(PatternOf(m), "[A F][L .][A L]");
  EXPECT_EQ(m.layer(0)[0].kv_heads, 16);
  EXPECT_EQ(m.layer(2)[0].kv_heads, 1);
  EXPECT_EQ(m.dims->kv_heads, 16);
}

// DeciLM has no model-wide KV heads or FFN width (its config sets both to
// None): they are the first block's whatever the keys say. Its heads are
// hidden_size / num_attention_heads wide; DeciLM versions differ on reading
// head_dim, so only that width is taken.
TEST(HfConfig, NasTakesItsKvHeadsAndFfnWidthFromItsBlocksAndOneHeadWidth) {
  json j = DataJson("nemotron-super-49b.json");
  const Model base = MustImport(j);
  EXPECT_EQ(base.dims->kv_heads, 8);
  EXPECT_EQ(base.dims->intermediate, 14336);
  EXPECT_EQ(base.dims->head_dim, 128);
  j["num_key_value_heads"] = 2;
  j["intermediate_size"] = 1024;
  j["head_dim"] = 128;
  EXPECT_TRUE(*MustImport(j).dims == *base.dims);
  j["head_dim"] = 64;
  EXPECT_EQ(ImportError(j),
            "test.json: head_dim is 64; seam models only hidden_size / num_attention_heads = 128 (DeciLM versions "
            "differ on reading it)");
}

TEST(HfConfig, DeepseekV4FlashHasFourHyperConnectionStreamsAndSqrtSoftplusRouting) {
  const Model m = MustLoad("deepseek-v4-flash.json");
  EXPECT_EQ(m.name, "deepseek-v4");
  EXPECT_EQ(m.num_layers, 43);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.residual_streams, 4);
  EXPECT_EQ(PatternOf(m), Repeat("[A E]", 43));  // no dense layers
  ModelDims want;
  want.vocab = 129280;
  want.heads = 64;
  want.kv_heads = 1;
  want.head_dim = 512;
  want.rms_eps = 1e-6;
  want.experts = 256;
  want.moe_intermediate = 2048;
  want.shared_intermediate = 2048;
  want.renormalize = true;
  want.scoring = RouterScoring::kSqrtSoftplus;
  want.correction_bias = true;
  want.routed_scaling = 1.5;
  want.hc_sinkhorn_iters = 20;
  want.yarn = {.factor = 16, .original_positions = 65536, .beta_fast = 32, .beta_slow = 1};
  ExpectDims(m, want);
  const std::vector<StageDecl> layer = m.layer(0);
  EXPECT_EQ(layer[0].attention_sum, AttentionSum::kReducesItself);
  EXPECT_EQ(layer[0].update, UpdateKind::kHyperConnection);
  EXPECT_EQ(layer[1], SparseFfnStage({.top_k = 6, .update = UpdateKind::kHyperConnection}));
}

TEST(HfConfig, Zaya1AlternatesAttentionAndATopOneMoeWithASkipExpert) {
  const Model m = MustImport(Zaya1Config());
  EXPECT_EQ(m.name, "zaya1");
  EXPECT_EQ(m.num_layers, 80);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(PatternOf(m), Repeat("AE", 40));
  ModelDims want;
  want.vocab = 262272;
  want.heads = 8;  // cca_num_q_heads wins over num_attention_heads
  want.kv_heads = 2;
  want.head_dim = 128;
  want.rope_theta = 5e6;
  want.rope_fraction = 0.5;
  want.rms_eps = 1e-5;
  want.experts = 16;
  want.moe_intermediate = 2048;  // ffn_hidden_size 4096 is gate and up merged
  want.renormalize = false;
  want.skip_expert = true;
  ExpectDims(m, want);
  EXPECT_EQ(m.layer(1), std::vector{SparseFfnStage({.top_k = 1})});
}

// ---------------------------------------------------------------------------
// Binding the real sizes.

TEST(HfConfig, EveryRealModelButGptOssBindsAtTp8AttnDp4DenseTp1A2aPp2) {
  std::vector<Model> models;
  for (const std::string& file : kFiles) models.push_back(MustLoad(file));
  models.push_back(MustImport(Zaya1Config()));
  for (const Model& m : models) {
    if (m.name == "gpt-oss") continue;
    Expected<Pipeline> plans = BindPipelineChecked(m, kWide);
    ASSERT_TRUE(plans.ok()) << m.name << ": " << plans.error().message;
    ASSERT_EQ(plans->size(), 2U) << m.name;
    EXPECT_EQ(plans->back().header().last_layer, m.num_layers) << m.name;
    size_t stages = 0;
    for (const Plan& p : *plans) stages += p.lines().front().stages.size();
    EXPECT_EQ(stages, StagesOf(m, 0, m.num_layers).size()) << m.name;
  }
}

TEST(HfConfig, GptOssIsRejectedWithA2aNamingTheRuleAndBindsWithTpMoe) {
  const Model m = MustLoad("gpt-oss-20b.json");
  Expected<Pipeline> a2a = BindPipelineChecked(m, kWide);
  ASSERT_FALSE(a2a.ok());
  EXPECT_EQ(a2a.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(a2a.error().message,
            "stage 1 (sparse-ffn, layer 0): this MoE has no all-to-all dispatch path (rule: a2a MoE needs a "
            "dispatch/combine in the model); use --moe tp");
  ParallelConfig tp_moe = kWide;
  tp_moe.moe = MoeMode::kTp;
  Expected<Pipeline> plans = BindPipelineChecked(m, tp_moe);
  EXPECT_TRUE(plans.ok()) << plans.error().message;
}

TEST(HfConfig, TheMixerModelsRejectInputScatteredBatches) {
  const ParallelConfig scattered{.tp = 8, .input_scattered = true, .pp = 2};  // input-scattered needs attn_dp 1
  for (const std::string file : {"nemotron-h-56b.json", "nemotron-3-nano-30b-a3b.json", "qwen3-next-80b-a3b.json"}) {
    SCOPED_TRACE(file);
    Expected<Pipeline> plans = BindPipelineChecked(MustLoad(file), scattered);
    ASSERT_FALSE(plans.ok());
    EXPECT_EQ(plans.error().message,
              "stage 0 (mixer, layer 0): a mixer cannot gather its own input from the slice on input-scattered "
              "batches (rule: input-scattered eligibility); drop --input-scattered");
  }
}

// ---------------------------------------------------------------------------
// Import errors: each names the source and the key.

json Llama() { return DataJson("llama-3.1-8b.json"); }

TEST(HfConfigError, TextThatIsNotJsonSaysWhereItBreaks) {
  EXPECT_EQ(TextError("{\"model_type\": \"llama\","),
            "test.json: not JSON: parse error at line 1, column 24: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
}

TEST(HfConfigError, JsonThatIsNotAnObjectSaysWhatItIs) {
  EXPECT_EQ(TextError("[1, 2]"), "test.json: not a JSON object; found a list");
}

TEST(HfConfigError, AMissingModelTypeIsNamed) {
  EXPECT_EQ(TextError("{\"hidden_size\": 64}"), "test.json: missing key 'model_type'");
}

TEST(HfConfigError, AnUnknownModelTypeListsTheKnownOnes) {
  EXPECT_EQ(TextError(R"({"model_type": "mistral"})"),
            "test.json: unknown model_type \"mistral\"; known: llama, qwen3, qwen3_moe, gpt_oss, deepseek_v2, "
            "deepseek_v3, kimi_k2, nemotron_h, zaya, qwen3_next, nemotron-nas, deepseek_v4");
}

TEST(HfConfigError, AModelTypeThatIsNotAStringSaysWhatWasFound) {
  EXPECT_EQ(TextError(R"({"model_type": 7})"), "test.json: key 'model_type' must be a string; found 7");
}

TEST(HfConfigError, AMissingRequiredKeyIsNamed) {
  json j = Llama();
  j.erase("num_attention_heads");
  EXPECT_EQ(ImportError(j), "test.json: missing key 'num_attention_heads'");
}

TEST(HfConfigError, ANegativeSizeNamesTheKeyAndTheValue) {
  json j = Llama();
  j["hidden_size"] = -4096;
  EXPECT_EQ(ImportError(j), "test.json: key 'hidden_size' must be an integer from 1 to 10000000; found -4096");
}

TEST(HfConfigError, AZeroSizeNamesTheKey) {
  json j = Llama();
  j["intermediate_size"] = 0;
  EXPECT_EQ(ImportError(j), "test.json: key 'intermediate_size' must be an integer from 1 to 10000000; found 0");
}

TEST(HfConfigError, AStringWhereANumberBelongsIsQuoted) {
  json j = Llama();
  j["hidden_size"] = "4096";
  EXPECT_EQ(ImportError(j), "test.json: key 'hidden_size' must be an integer from 1 to 10000000; found \"4096\"");
}

TEST(HfConfigError, AFractionalSizeIsRejected) {
  json j = Llama();
  j["num_key_value_heads"] = 7.5;
  EXPECT_EQ(ImportError(j), "test.json: key 'num_key_value_heads' must be an integer from 1 to 10000000; found 7.5");
}

TEST(HfConfigError, AHugeSizeIsCappedBeforeAnythingIsBuilt) {
  json j = Llama();
  j["vocab_size"] = 18446744073709551615ULL;
  EXPECT_EQ(ImportError(j),
            "test.json: key 'vocab_size' must be an integer from 1 to 10000000; found 18446744073709551615");
}

TEST(HfConfigError, TooManyLayersAreCapped) {
  json j = Llama();
  j["num_hidden_layers"] = 100001;
  EXPECT_EQ(ImportError(j), "test.json: key 'num_hidden_layers' must be an integer from 1 to 100000; found 100001");
}

TEST(HfConfigError, ANullRequiredSizeSaysNull) {
  json j = Llama();
  j["hidden_size"] = nullptr;
  EXPECT_EQ(ImportError(j), "test.json: key 'hidden_size' must be an integer from 1 to 10000000; found null");
}

TEST(HfConfigError, ANonFiniteNumberIsNotAnEpsilon) {
  std::string text = DataText("llama-3.1-8b.json");
  text.replace(text.find("1e-05"), 5, "NaN");
  EXPECT_EQ(TextError(text), "test.json: key 'rms_norm_eps' must be a number above 0 and at most 1; found \"NaN\"");
}

TEST(HfConfigError, AFlagThatIsNotABooleanIsNamed) {
  json j = DataJson("qwen3-30b-a3b.json");
  j["norm_topk_prob"] = "yes";
  EXPECT_EQ(ImportError(j), "test.json: key 'norm_topk_prob' must be true or false; found \"yes\"");
}

TEST(HfConfigError, HeadsNotDivisibleByKeyValueHeads) {
  json j = Llama();
  j["num_key_value_heads"] = 6;
  EXPECT_EQ(ImportError(j), "test.json: num_attention_heads 32 is not divisible by num_key_value_heads 6");
}

TEST(HfConfigError, HiddenNotDivisibleByHeadsWithoutAHeadDim) {
  json j = Llama();
  j["num_attention_heads"] = 24;
  j["num_key_value_heads"] = 8;
  EXPECT_EQ(ImportError(j),
            "test.json: head_dim is not given and hidden_size 4096 is not divisible by num_attention_heads 24");
  j["head_dim"] = 128;  // an explicit head_dim needs no divisibility
  EXPECT_EQ(MustImport(j).dims->head_dim, 128);
}

TEST(HfConfigError, AHugeAttentionWidthIsRejected) {
  json j = Llama();
  j["num_attention_heads"] = 10000000;
  j["num_key_value_heads"] = 1;
  j["head_dim"] = 10000000;
  EXPECT_EQ(ImportError(j), "test.json: num_attention_heads * head_dim = 10000000 * 10000000 is more than 1073741824");
}

TEST(HfConfigError, APatternOfTheWrongLengthNamesBothCounts) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["num_hidden_layers"] = 51;
  EXPECT_EQ(ImportError(j), "test.json: hybrid_override_pattern has 52 characters but num_hidden_layers is 51");
}

TEST(HfConfigError, APatternCharacterOutsideTheFourKindsIsNamed) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["hybrid_override_pattern"] = "MEM|M*";
  j["num_hidden_layers"] = 6;
  EXPECT_EQ(ImportError(j),
            "test.json: hybrid_override_pattern has \"|\" at position 3; use M (mamba mixer), * (attention), - (dense "
            "MLP) or E (MoE)");
}

TEST(HfConfigError, MlpWidthsThatDoNotMatchThePatternAreRejected) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["hybrid_override_pattern"] = "M-*-";
  j["num_hidden_layers"] = 4;
  j["intermediate_size"] = {100, 200, 300};
  EXPECT_EQ(ImportError(j),
            "test.json: intermediate_size lists 3 widths but hybrid_override_pattern has 2 MLP layers ('-')");
}

TEST(HfConfigError, BlockConfigsOfTheWrongLengthNameBothCounts) {
  json j = DataJson("nemotron-super-49b.json");
  j["num_hidden_layers"] = 79;
  EXPECT_EQ(ImportError(j), "test.json: block_configs has 80 entries but num_hidden_layers is 79");
}

TEST(HfConfigError, ANasGroupThatDoesNotDivideTheHeadsNamesTheBlock) {
  json j = DataJson("nemotron-super-49b.json");
  j["block_configs"][5]["attention"]["n_heads_in_group"] = 7;
  EXPECT_EQ(ImportError(j),
            "test.json: block_configs[5].attention.n_heads_in_group 7 does not divide num_attention_heads 64");
}

TEST(HfConfigError, ANasBlockMissingItsFfnMultNamesThePath) {
  json j = DataJson("nemotron-super-49b.json");
  j["block_configs"][9]["ffn"].erase("ffn_mult");
  EXPECT_EQ(ImportError(j), "test.json: missing key 'block_configs[9].ffn.ffn_mult'");
}

TEST(HfConfigError, ANasPartCannotBeBothNoOpAndLinear) {
  json j = DataJson("nemotron-super-49b.json");
  j["block_configs"][2]["ffn"]["replace_with_linear"] = true;
  j["block_configs"][2]["ffn"]["no_op"] = true;
  EXPECT_EQ(ImportError(j),
            "test.json: block_configs[2].ffn.no_op and block_configs[2].ffn.replace_with_linear are both true");
}

TEST(HfConfigError, TopKAboveTheExpertCount) {
  json j = DataJson("qwen3-30b-a3b.json");
  j["num_experts_per_tok"] = 129;
  EXPECT_EQ(ImportError(j), "test.json: num_experts_per_tok 129 is more than num_experts 128");
}

TEST(HfConfigError, TheTwoSpellingsOfGptOssTopKMustAgree) {
  json j = DataJson("gpt-oss-20b.json");
  j["experts_per_token"] = 2;
  EXPECT_EQ(ImportError(j), "test.json: num_experts_per_tok 4 and experts_per_token 2 disagree");
}

TEST(HfConfigError, AnUnknownScoringFunctionListsTheKnownOnes) {
  json v4 = DataJson("deepseek-v4-flash.json");
  v4["scoring_func"] = "tanh";
  EXPECT_EQ(ImportError(v4), "test.json: unknown scoring_func \"tanh\"; known: softmax, sigmoid, sqrtsoftplus");
}

// DeepSeek-V3 and Kimi-K2 route as transformers' DeepseekV3TopkRouter does
// (sigmoid, noaux_tc); DeepSeek-V2 as its MoEGate (softmax; greedy or
// group_limited_greedy). Anything else would route differently: refused.
TEST(HfConfigError, ARoutingKeyTheFamilyDoesNotRouteByIsRefused) {
  json j = DataJson("kimi-k2.json");
  j["scoring_func"] = "softmax";
  EXPECT_EQ(ImportError(j), "test.json: scoring_func \"softmax\" is not supported for kimi_k2; supported: sigmoid");
  j = DataJson("kimi-k2.json");
  j["topk_method"] = "greedy";
  EXPECT_EQ(ImportError(j), "test.json: topk_method \"greedy\" is not supported for kimi_k2; supported: noaux_tc");
  json v2 = DataJson("deepseek-v2-lite.json");
  v2["scoring_func"] = "sigmoid";
  EXPECT_EQ(ImportError(v2),
            "test.json: scoring_func \"sigmoid\" is not supported for deepseek_v2; supported: softmax");
  v2 = DataJson("deepseek-v2-lite.json");
  v2["topk_method"] = "noaux_tc";
  EXPECT_EQ(ImportError(v2),
            "test.json: topk_method \"noaux_tc\" is not supported for deepseek_v2; supported: greedy, "
            "group_limited_greedy");
}

TEST(HfConfigError, ExpertGroupsThatDoNotSplitTheExpertsAreRefused) {
  json j = DeepseekV3();
  j["n_group"] = 5;
  EXPECT_EQ(ImportError(j), "test.json: n_routed_experts 256 is not divisible by n_group 5");
  j["n_group"] = 256;
  EXPECT_EQ(ImportError(j), "test.json: n_group 256 leaves 1 expert per group; a group is scored by its best two");
  j["n_group"] = 512;
  EXPECT_EQ(ImportError(j), "test.json: key 'n_group' must be an integer from 1 to 256; found 512");
  j["n_group"] = 8;
  j["topk_group"] = 9;
  EXPECT_EQ(ImportError(j), "test.json: key 'topk_group' must be an integer from 1 to 8; found 9");
  j["n_group"] = 64;  // groups of 4
  j["topk_group"] = 1;
  EXPECT_EQ(ImportError(j),
            "test.json: num_experts_per_tok 8 is more than the 4 experts a row chooses from (topk_group 1 groups of "
            "4)");
}

TEST(HfConfigError, GroupLimitedGreedyNeedsItsGroupKeys) {
  json j = DataJson("deepseek-v2-lite.json");
  j["topk_method"] = "group_limited_greedy";
  j.erase("n_group");
  EXPECT_EQ(ImportError(j),
            "test.json: missing key 'n_group' (topk_method group_limited_greedy needs n_group and topk_group)");
}

TEST(HfConfigError, AnOddRopeHeadDimIsRefused) {
  json j = DataJson("kimi-k2.json");
  j["qk_rope_head_dim"] = 63;
  EXPECT_EQ(ImportError(j), "test.json: qk_rope_head_dim 63 is odd; rotary dims turn in pairs");
}

TEST(HfConfigError, LayerTypesThatDisagreeWithTheAttentionInterval) {
  json j = DataJson("qwen3-next-80b-a3b.json");
  j["num_hidden_layers"] = 4;
  j["layer_types"] = {"linear_attention", "full_attention", "linear_attention", "full_attention"};
  EXPECT_EQ(ImportError(j),
            "test.json: layer_types[1] is \"full_attention\" but full_attention_interval 4 makes layer 1 "
            "\"linear_attention\"");
}

TEST(HfConfigError, LayerTypesOfTheWrongLengthNameBothCounts) {
  json j = DataJson("gpt-oss-20b.json");
  j["num_hidden_layers"] = 23;
  EXPECT_EQ(ImportError(j), "test.json: layer_types has 24 entries but num_hidden_layers is 23");
}

TEST(HfConfigError, AnUnknownGptOssLayerTypeIsNamed) {
  json j = DataJson("gpt-oss-20b.json");
  j["layer_types"][3] = "linear_attention";
  EXPECT_EQ(ImportError(j),
            "test.json: layer_types[3] is \"linear_attention\"; expected \"sliding_attention\" or "
            "\"full_attention\"");
}

TEST(HfConfigError, ALlama3RopeScalingMissingAKeyNamesIt) {
  json j = Llama();
  j["rope_scaling"].erase("low_freq_factor");
  EXPECT_EQ(ImportError(j),
            "test.json: missing key 'rope_scaling.low_freq_factor' (a llama3 rope_scaling needs factor, "
            "low_freq_factor, high_freq_factor and original_max_position_embeddings)");
}

TEST(HfConfigError, ALlama3RopeScalingNeedsItsHighFrequencyFactorAboveItsLowOne) {
  json j = Llama();
  j["rope_scaling"]["high_freq_factor"] = 1.0;
  EXPECT_EQ(ImportError(j), "test.json: rope_scaling.high_freq_factor 1 must be above rope_scaling.low_freq_factor 1");
}

TEST(HfConfigError, ARopeScalingTypeThatIsNeitherLlama3NorYarnIsRefused) {
  json j = Llama();
  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(ImportError(j),
            "test.json: rope_scaling.type \"linear\" is not supported; supported: default, llama3, yarn");
  j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(ImportError(j),
            "test.json: rope_scaling.rope_type \"dynamic\" is not supported; supported: default, llama3, yarn");
  j["rope_scaling"] = {{"rope_type", "default"}};
  EXPECT_EQ(MustImport(j).dims->rope_scaling.factor, 0);
}

TEST(HfConfigError, AYarnRopeScalingMissingAKeyNamesIt) {
  json j = DataJson("kimi-k2.json");
  j["rope_scaling"].erase("original_max_position_embeddings");
  EXPECT_EQ(ImportError(j),
            "test.json: missing key 'rope_scaling.original_max_position_embeddings' (a yarn rope_scaling needs factor "
            "and original_max_position_embeddings)");
}

TEST(HfConfigError, AYarnRampMustRunFromBetaFastDownToBetaSlow) {
  json j = DataJson("deepseek-v2-lite.json");
  j["rope_scaling"]["beta_fast"] = 0.5;
  EXPECT_EQ(ImportError(j), "test.json: rope_scaling.beta_fast 0.5 must be at least rope_scaling.beta_slow 1");
}

TEST(HfConfigError, ARopeScalingThatIsNotAnObjectIsNamed) {
  json j = Llama();
  j["rope_scaling"] = "llama3";
  EXPECT_EQ(ImportError(j), "test.json: key 'rope_scaling' must be an object; found \"llama3\"");
}

TEST(HfConfigError, AnMlpOnlyLayerOutsideTheModelIsNamed) {
  json j = DataJson("qwen3-30b-a3b.json");
  j["mlp_only_layers"] = {0, 48};
  EXPECT_EQ(ImportError(j), "test.json: key 'mlp_only_layers[1]' must be an integer from 0 to 47; found 48");
}

TEST(HfConfigError, Qwen3NextWithDenseLayersIsRejected) {
  json j = DataJson("qwen3-next-80b-a3b.json");
  j["mlp_only_layers"] = {0};
  EXPECT_EQ(ImportError(j), "test.json: mlp_only_layers is not empty; seam's qwen3-next has a MoE in every layer");
}

TEST(HfConfigError, Mamba2ValuesSeamDoesNotComputeAreRefused) {
  const json nano = DataJson("nemotron-3-nano-30b-a3b.json");
  const auto with = [&](const char* key, const json& v) {
    json j = nano;
    j[key] = v;
    return ImportError(j);
  };
  EXPECT_EQ(with("n_groups", 3),
            "test.json: mamba_num_heads 64 is not a multiple of n_groups 3; each group's B and C serve whole heads");
  EXPECT_EQ(with("mamba_hidden_act", "gelu"),
            "test.json: mamba_hidden_act is \"gelu\"; seam's Mamba2 conv is followed by silu");
  EXPECT_EQ(with("use_conv_bias", false), "test.json: use_conv_bias is false; seam's Mamba2 conv has a bias");
  EXPECT_EQ(with("use_bias", true), "test.json: use_bias is true; seam's Mamba2 in_proj and out_proj have no bias");
  EXPECT_EQ(with("mamba_ssm_cache_dtype", "bfloat16"),
            "test.json: mamba_ssm_cache_dtype is \"bfloat16\"; seam keeps the Mamba2 state in float32");
  EXPECT_EQ(with("conv_kernel", 0), "test.json: key 'conv_kernel' must be an integer from 1 to 10000000; found 0");
  EXPECT_EQ(with("time_step_limit", json::array({0.0})), "test.json: time_step_limit has 1 entries; it is [min, max]");
  EXPECT_EQ(with("time_step_limit", json::array({0.5, 0.1})),
            "test.json: key 'time_step_limit[1]' must be a number above 0.5 and at most 1e+30; found 0.1");
  EXPECT_EQ(with("time_step_limit", json::array({-1.0, 0.1})),
            "test.json: key 'time_step_limit[0]' must be a number from 0 and at most 1e+30; found -1.0");
}

TEST(HfConfigError, GatedDeltaNetValuesSeamDoesNotComputeAreRefused) {
  const json next = DataJson("qwen3-next-80b-a3b.json");
  const auto with = [&](const char* key, const json& v) {
    json j = next;
    j[key] = v;
    return ImportError(j);
  };
  EXPECT_EQ(with("linear_num_key_heads", 12),
            "test.json: linear_num_value_heads 32 is not a multiple of linear_num_key_heads 12; each key head serves "
            "a whole number of value heads");
  EXPECT_EQ(with("hidden_act", "gelu"),
            "test.json: hidden_act is \"gelu\"; seam's Qwen3-Next runs silu in its Gated DeltaNet conv and its "
            "experts");
  EXPECT_EQ(with("linear_conv_kernel_dim", 0),
            "test.json: key 'linear_conv_kernel_dim' must be an integer from 1 to 10000000; found 0");
  json missing = next;
  missing.erase("linear_num_key_heads");
  EXPECT_EQ(ImportError(missing), "test.json: missing key 'linear_num_key_heads'");
}

// transformers' Llama and Qwen3 take any hidden_act and optional biases;
// seam's dense decoder runs SiLU without biases, so a config asking for
// either is refused (by --hf-config and by --weights alike).
TEST(HfConfigError, ADenseDecoderWithAnotherActivationOrBiasesIsRefused) {
  for (const char* file : {"llama-3.1-8b.json", "qwen3-8b.json"}) {
    SCOPED_TRACE(file);
    const json base = DataJson(file);
    const auto with = [&](const char* key, const json& v) {
      json j = base;
      j[key] = v;
      return ImportError(j);
    };
    EXPECT_EQ(with("hidden_act", "gelu"), "test.json: hidden_act is 'gelu'; only 'silu' is supported");
    EXPECT_EQ(with("hidden_act", std::string(100, 'x')),
              "test.json: hidden_act is '" + std::string(40, 'x') + "'...; only 'silu' is supported");
    EXPECT_EQ(with("hidden_act", 2), "test.json: key 'hidden_act' must be a string; found 2");
    EXPECT_EQ(with("attention_bias", true), "test.json: attention_bias is true; biases are not supported");
    EXPECT_EQ(with("attention_bias", "no"), "test.json: key 'attention_bias' must be true or false; found \"no\"");
    // Absent, null or as seam runs: the model imports.
    for (const auto& [key, value] : {std::pair<const char*, json>{"hidden_act", "silu"},
                                     {"hidden_act", nullptr},
                                     {"attention_bias", false},
                                     {"attention_bias", nullptr}}) {
      json j = base;
      j[key] = value;
      MustImport(j);
      j.erase(key);
      MustImport(j);
    }
  }
  json llama = Llama();
  llama["mlp_bias"] = true;
  EXPECT_EQ(ImportError(llama), "test.json: mlp_bias is true; biases are not supported");
  // Qwen3's config has no mlp_bias (its MLP never has biases): transformers
  // ignores the key, and so does seam.
  json qwen3 = DataJson("qwen3-8b.json");
  qwen3["mlp_bias"] = true;
  EXPECT_EQ(MustImport(qwen3).name, "qwen3");
}

TEST(HfConfigError, AnOddMergedZayaFfnWidthIsRejected) {
  json j = Zaya1Config();
  j["ffn_hidden_size"] = 4095;
  EXPECT_EQ(ImportError(j), "test.json: ffn_hidden_size 4095 is a merged gate and up projection, so it must be even");
}

TEST(HfConfigError, ANasFfnMultThatRoundsToNothingIsRejected) {
  json j = DataJson("nemotron-super-49b.json");
  j["block_configs"][0]["ffn"]["ffn_mult"] = 0.0001;
  EXPECT_EQ(ImportError(j), "test.json: block_configs[0].ffn.ffn_mult 0.0001 gives an FFN width of 0");
}

// ---------------------------------------------------------------------------
// Hostile input: errors, never crashes or absurd allocations.

TEST(HfConfigHostile, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
  json j = Llama();
  j.erase("rope_scaling");
  const std::string text =
      j.dump().insert(1, R"("rope_scaling": )" + std::string(200000, '[') + std::string(200000, ']') + ",");
  EXPECT_EQ(TextError(text), "test.json: nested deeper than 64 levels");
}

TEST(HfConfigHostile, ALongStringIsCutShortInTheMessage) {
  EXPECT_EQ(TextError(R"({"model_type": ")" + std::string(100000, 'x') + "\"}"),
            "test.json: unknown model_type \"" + std::string(40, 'x') +
                "\"...; known: llama, qwen3, qwen3_moe, gpt_oss, deepseek_v2, deepseek_v3, kimi_k2, nemotron_h, zaya, "
                "qwen3_next, nemotron-nas, deepseek_v4");
}

TEST(HfConfigHostile, TheLargestLayerCountImportsAndDeclaresEveryLayer) {
  json j = DataJson("nemotron-3-nano-30b-a3b.json");
  j["num_hidden_layers"] = 100000;
  j["hybrid_override_pattern"] = Repeat("M*E-", 25000);
  const Model m = MustImport(j);
  EXPECT_EQ(m.num_layers, 100000);
  EXPECT_EQ(StagesOf(m, 99998, 100000).size(), 2U);
  EXPECT_EQ(PatternOf(m).size(), 100000U);
}

TEST(HfConfigHostile, BareNonFiniteNumbersReadAsStringsOnlyWhereAValueGoes) {
  json j = Llama();
  const std::string text = j.dump().insert(1, R"("time_step_limit": [0.0, Infinity, -Infinity, NaN], )");
  EXPECT_EQ(ModelFromHfConfig(text).ok(), true);
  EXPECT_EQ(TextError(R"({Infinity: 1})").rfind("test.json: not JSON: ", 0), 0U);
  EXPECT_EQ(TextError(R"({"model_type": "llama", "hidden_size": Infinity})"),
            "test.json: key 'hidden_size' must be an integer from 1 to 10000000; found \"Infinity\"");
}

TEST(HfConfigError, AMissingFileNamesThePath) {
  Expected<Model> m = LoadHfConfig(DataPath("no-such-config.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "cannot read " + DataPath("no-such-config.json") + ": no such file");
}

TEST(HfConfigError, AFileErrorNamesThePathAsItsSource) {
  const std::string path = DataPath("SOURCES.md");  // a real file that is not JSON
  Expected<Model> m = LoadHfConfig(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message.rfind(path + ": not JSON: ", 0), 0U) << m.error().message;
}

}  // namespace
}  // namespace seam

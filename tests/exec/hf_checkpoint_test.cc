// Hugging Face checkpoints of every family: each catalogue model writes a
// config that reads back as itself and tensors that read back bit for bit;
// each family's names and layouts put a weight's elements where
// transformers reads them; a real config's keys that seam does not model are
// not written; and every bad
// checkpoint is refused with its exact message.
#include "seam/runtime/hf_checkpoint.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seam/hf_config.h"
#include "seam/runtime/safetensors.h"
#include "testing.h"

namespace seam {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Model Catalogued(const std::string& name) {
  Expected<Model> m = CatalogueModel(name);
  EXPECT_TRUE(m.ok()) << m.error().message;
  return *m;
}

Weights Generated(const Model& m, Dtype dtype = Dtype::kF32) {
  Expected<Weights> w = GenerateWeights(m, 7, dtype);
  EXPECT_TRUE(w.ok()) << w.error().message;
  return *std::move(w);
}

std::string MustWrite(const std::string& name, const Model& m, Dtype dtype = Dtype::kF32) {
  const std::string dir = testing::FreshTestDir(name);
  Status s = WriteHfCheckpoint(dir, m, Generated(m, dtype), dtype);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return dir;
}

std::map<std::string, StTensor> TensorsOf(const std::string& dir) {
  Expected<std::vector<StTensor>> t = ReadSafetensors(dir + "/model.safetensors");
  EXPECT_TRUE(t.ok()) << t.error().message;
  std::map<std::string, StTensor> out;
  std::vector<StTensor> tensors = *std::move(t);
  for (StTensor& s : tensors) out.emplace(s.name, std::move(s));
  return out;
}

json ConfigOf(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  return json::parse(in);
}

const std::vector<std::string> kWithHfForm = {"llama",      "llama3",           "qwen3",          "qwen3-moe",
                                              "gpt-oss",    "deepseek-v2-lite", "deepseek-qlora", "kimi-k2",
                                              "nemotron-h", "nemotron-3-nano",  "qwen3-next",     "nemotron-nas",
                                              "zaya1"};

// ---- round trips ----

TEST(HfCheckpoint, EveryFamilyRoundTripsItsModelAndWeightsBitForBit) {
  for (Dtype dtype : {Dtype::kF32, Dtype::kBf16}) {
    for (const std::string& name : kWithHfForm) {
      SCOPED_TRACE(fmt::format("{} {}", name, Name(dtype)));
      const Model m = Catalogued(name);
      const std::string dir = MustWrite(name, m, dtype);
      Expected<HfCheckpoint> c = OpenHfCheckpoint(dir);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c->dtype, dtype);
      EXPECT_EQ(c->model.hf_type, m.hf_type);
      EXPECT_EQ(*c->model.dims, *m.dims);
      ASSERT_EQ(c->model.num_layers, m.num_layers);
      const auto a = StagesOf(m, 0, m.num_layers), b = StagesOf(c->model, 0, m.num_layers);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].decl, b[i].decl) << "stage " << i;
      Expected<Weights> w = ReadHfWeights(*c);
      ASSERT_TRUE(w.ok()) << w.error().message;
      const Weights original = Generated(m, dtype);
      ASSERT_EQ(w->all().size(), original.all().size());
      for (const auto& [weight, t] : original.all()) {
        EXPECT_TRUE(w->at(weight) == t.view()) << weight;
        // Read as it is made: a bf16 checkpoint's matrices kept in 16 bits.
        EXPECT_EQ(w->all().at(weight).storage(), t.storage()) << weight;
        EXPECT_EQ(t.storage(), dtype == Dtype::kBf16 && t.rows() > 1 ? Dtype::kBf16 : Dtype::kF32) << weight;
      }
    }
  }
}

TEST(HfCheckpoint, AFamilyWithoutATransformersFormIsRefused) {
  const Model m = Catalogued("mhc");
  EXPECT_FALSE(HasHfForm(m));
  Status s = WriteHfCheckpoint(testing::FreshTestDir("mhc"), m, Generated(m), Dtype::kF32);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "model 'mhc' has no Hugging Face form (model_type '')");
}

// ---- config.json ----

TEST(HfConfig, Llama3KeepsItsRopeScaling) {
  const json j = ConfigOf(MustWrite("llama3", Catalogued("llama3")));
  EXPECT_EQ(j["rope_scaling"]["rope_type"], "llama3");
  EXPECT_EQ(j["rope_scaling"]["factor"], 8.0);
  EXPECT_EQ(j["rope_scaling"]["original_max_position_embeddings"], 16);
  EXPECT_EQ(j["rope_theta"], 500000.0);
}

TEST(HfConfig, EachFamilyStatesItsDistinguishingKeys) {
  const json oss = ConfigOf(MustWrite("oss", Catalogued("gpt-oss")));
  EXPECT_EQ(oss["layer_types"], json({"sliding_attention", "full_attention", "sliding_attention", "full_attention"}));
  EXPECT_EQ(oss["sliding_window"], 8);
  EXPECT_EQ(oss["swiglu_limit"], 7.0);
  EXPECT_EQ(oss["rope_scaling"], json({{"rope_type", "default"}}));
  const json nas = ConfigOf(MustWrite("nas", Catalogued("nemotron-nas")));
  EXPECT_EQ(nas["block_configs"][2]["attention"]["no_op"], true);
  EXPECT_EQ(nas["block_configs"][4]["attention"]["replace_with_linear"], true);
  EXPECT_EQ(nas["block_configs"][1]["attention"]["n_heads_in_group"], 2);
  // DeciLM is loaded with trust_remote_code from the published checkpoint's
  // code, which has no global KV heads, FFN width or head_dim.
  EXPECT_EQ(
      nas["auto_map"],
      json({{"AutoConfig", "nvidia/Llama-3_3-Nemotron-Super-49B-v1--configuration_decilm.DeciLMConfig"},
            {"AutoModelForCausalLM", "nvidia/Llama-3_3-Nemotron-Super-49B-v1--modeling_decilm.DeciLMForCausalLM"}}));
  for (const char* key : {"num_key_value_heads", "intermediate_size", "head_dim"}) {
    EXPECT_FALSE(nas.contains(key)) << key;
  }
  const json h = ConfigOf(MustWrite("h", Catalogued("nemotron-h")));
  EXPECT_EQ(h["hybrid_override_pattern"], "M-M*M-");
  EXPECT_EQ(h["time_step_limit"], json({0.0, 0.7}));
  const json kimi = ConfigOf(MustWrite("kimi", Catalogued("kimi-k2")));
  EXPECT_EQ(kimi["rope_scaling"]["type"], "yarn");
  EXPECT_EQ(kimi["n_group"], 4);
  EXPECT_EQ(kimi["topk_group"], 2);
  EXPECT_EQ(kimi["first_k_dense_replace"], 1);
  const json next = ConfigOf(MustWrite("next", Catalogued("qwen3-next")));
  EXPECT_EQ(next["layer_types"][3], "full_attention");
  EXPECT_EQ(next["partial_rotary_factor"], 0.25);
}

// An unbounded time step is Python's bare Infinity, as transformers writes it.
TEST(HfConfig, AnUnboundedTimeStepIsWrittenAsBareInfinity) {
  const std::string dir = MustWrite("nano", Catalogued("nemotron-3-nano"));
  std::ifstream in(dir + "/config.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"time_step_limit\": [\n    0.0,\n    Infinity\n  ]"), std::string::npos) << text;
}

// JSON as Python writes it: nlohmann reads no bare Infinity.
json ParsePython(std::string text) {
  for (size_t at = text.find("Infinity"); at != std::string::npos; at = text.find("Infinity", at + 10)) {
    text.replace(at, 8, "\"Infinity\"");
  }
  return json::parse(text);
}

// Nemotron-H routes as DeepSeek-V3 does: its expert groups are written.
TEST(HfConfig, NemotronHWritesItsExpertGroups) {
  std::ifstream in(MustWrite("nano_groups", Catalogued("nemotron-3-nano")) + "/config.json");
  const json nano = ParsePython(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  EXPECT_EQ(nano["n_group"], 4);
  EXPECT_EQ(nano["topk_group"], 2);
}

// Every real config in configs/ cut to two layers writes a config that reads
// back as the same model and holds only what seam ran: none of the source's
// keys that seam does not model (initialisation, bookkeeping, quantization,
// Nemotron-H's moe_latent_size or mlp_bias) is copied through.
TEST(HfConfig, EveryRealConfigReadsBackAsItselfWithoutKeysSeamDidNotRun) {
  for (const auto& entry : fs::directory_iterator(SEAM_HF_CONFIGS)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path());
    const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Expected<Model> read = ModelFromHfConfig(source, entry.path().string());
    ASSERT_TRUE(read.ok()) << read.error().message;
    Model m = *std::move(read);
    if (!HasHfForm(m)) continue;  // deepseek_v4: no transformers form
    m.num_layers = std::min(m.num_layers, 2);
    Expected<std::string> text = HfConfigText(m, Dtype::kBf16);
    ASSERT_TRUE(text.ok()) << text.error().message;
    const json written = ParsePython(*text);
    for (const char* key : {"initializer_range", "transformers_version", "quantization_config", "use_cache",
                            "bos_token_id", "eos_token_id", "time_step_min", "time_step_floor", "moe_latent_size",
                            "mlp_bias", "router_aux_loss_coef", "num_nextn_predict_layers"}) {
      // Llama's writer states mlp_bias false: what seam ran.
      EXPECT_TRUE(!written.contains(key) || (m.hf_type == "llama" && std::string(key) == "mlp_bias")) << key;
    }
    EXPECT_EQ(written["num_hidden_layers"], 2);
  }
}

// ---- layouts: where transformers reads each element ----

TEST(HfLayout, GptOssStacksExpertsWithGateAtEvenAndUpAtOddColumns) {
  const Model m = Catalogued("gpt-oss");
  const Weights w = Generated(m);
  const auto t = TensorsOf(MustWrite("oss_layout", m));
  const StTensor& gate_up = t.at("model.layers.1.mlp.experts.gate_up_proj");
  const int64_t h = m.hidden, i2 = 2 * m.dims->moe_intermediate;
  ASSERT_EQ(gate_up.shape, (std::vector<int64_t>{4, h, i2}));
  const MatrixView gate = w.at("model.layers.1.mlp.experts.2.gate_proj.weight");
  const MatrixView up = w.at("model.layers.1.mlp.experts.2.up_proj.weight");
  // [e=2, row=5, col=2j] is gate[j=3, 5]; col 2j+1 is up[3, 5].
  EXPECT_EQ(gate_up.floats[static_cast<size_t>((2 * h + 5) * i2 + 6)], gate.at(3, 5));
  EXPECT_EQ(gate_up.floats[static_cast<size_t>((2 * h + 5) * i2 + 7)], up.at(3, 5));
  const StTensor& down = t.at("model.layers.1.mlp.experts.down_proj");
  const int64_t width = m.dims->moe_intermediate;
  ASSERT_EQ(down.shape, (std::vector<int64_t>{4, width, h}));
  // [e=3, j=9, col=4] is down[4, 9]: the down projection transposed.
  EXPECT_EQ(down.floats[static_cast<size_t>((3 * width + 9) * h + 4)],
            w.at("model.layers.1.mlp.experts.3.down_proj.weight").at(4, 9));
  const StTensor& bias = t.at("model.layers.1.mlp.experts.gate_up_proj_bias");
  EXPECT_EQ(bias.floats[static_cast<size_t>(1 * i2 + 5)], w.at("model.layers.1.mlp.experts.1.up_proj.bias").at(0, 2));
  EXPECT_TRUE(t.contains("model.layers.0.mlp.router.weight"));
  EXPECT_TRUE(t.contains("model.layers.0.mlp.router.bias"));
  EXPECT_EQ(t.at("model.layers.0.self_attn.sinks").shape, (std::vector<int64_t>{8}));
}

TEST(HfLayout, Qwen3NextInterleavesEachHeadsQueryAndGateAndStoresNormsAroundZero) {
  const Model m = Catalogued("qwen3-next");
  const Weights w = Generated(m);
  const auto t = TensorsOf(MustWrite("next_layout", m));
  const int hd = m.dims->head_dim;
  const StTensor& q = t.at("model.layers.3.self_attn.q_proj.weight");
  ASSERT_EQ(q.shape, (std::vector<int64_t>{2 * 8 * hd, m.hidden}));
  const MatrixView query = w.at("model.layers.3.self_attn.q_proj.weight");
  const MatrixView gate = w.at("model.layers.3.self_attn.gate_proj.weight");
  // Head 2: rows [2*2*hd, 2*2*hd + hd) are its query, the next hd its gate.
  EXPECT_EQ(q.floats[static_cast<size_t>((4 * hd + 1) * m.hidden + 3)], query.at(2 * hd + 1, 3));
  EXPECT_EQ(q.floats[static_cast<size_t>((5 * hd + 1) * m.hidden + 3)], gate.at(2 * hd + 1, 3));
  EXPECT_EQ(t.at("model.norm.weight").floats[5], w.at("model.norm.weight").at(0, 5) - 1.0f);
  EXPECT_EQ(t.at("model.layers.3.self_attn.q_norm.weight").floats[1],
            w.at("model.layers.3.self_attn.q_norm.weight").at(0, 1) - 1.0f);
  // The gated norm of the linear attention multiplies by its weight as is.
  EXPECT_EQ(t.at("model.layers.0.linear_attn.norm.weight").floats[1],
            w.at("model.layers.0.mixer.norm.weight").at(0, 1));
  EXPECT_EQ(t.at("model.layers.0.linear_attn.conv1d.weight").shape, (std::vector<int64_t>{2 * 8 * 16 + 16 * 8, 1, 4}));
  EXPECT_EQ(t.at("model.layers.0.mlp.shared_expert_gate.weight").shape, (std::vector<int64_t>{1, m.hidden}));
}

TEST(HfLayout, NemotronHKeepsOneNormAndOneMixerPerLayerUnderBackbone) {
  const auto t = TensorsOf(MustWrite("h_layout", Catalogued("nemotron-3-nano")));
  for (const char* name :
       {"backbone.embeddings.weight", "backbone.norm_f.weight", "backbone.layers.0.norm.weight",
        "backbone.layers.0.mixer.in_proj.weight", "backbone.layers.0.mixer.A_log", "backbone.layers.0.mixer.D",
        "backbone.layers.0.mixer.dt_bias", "backbone.layers.3.mixer.q_proj.weight",
        "backbone.layers.1.mixer.gate.weight", "backbone.layers.1.mixer.gate.e_score_correction_bias",
        "backbone.layers.1.mixer.experts.7.up_proj.weight", "backbone.layers.1.mixer.shared_experts.down_proj.weight",
        "lm_head.weight"}) {
    EXPECT_TRUE(t.contains(name)) << name;
  }
  EXPECT_EQ(t.at("backbone.layers.0.mixer.conv1d.weight").shape, (std::vector<int64_t>{16 * 16 + 2 * 8 * 8, 1, 4}));
  for (const auto& [name, _] : t) EXPECT_FALSE(name.starts_with("model.")) << name;
}

TEST(HfLayout, DeepseekAndNasUseTheirOwnModuleNames) {
  const auto ds = TensorsOf(MustWrite("ds_layout", Catalogued("kimi-k2")));
  EXPECT_TRUE(ds.contains("model.layers.1.mlp.shared_experts.gate_proj.weight"));
  EXPECT_TRUE(ds.contains("model.layers.1.mlp.gate.e_score_correction_bias"));
  EXPECT_TRUE(ds.contains("model.layers.0.self_attn.kv_a_proj_with_mqa.weight"));
  const auto nas = TensorsOf(MustWrite("nas_layout", Catalogued("nemotron-nas")));
  EXPECT_TRUE(nas.contains("model.layers.4.self_attn.linear_attn.weight"));
  EXPECT_FALSE(nas.contains("model.layers.2.input_layernorm.weight"));  // no-op attention: no norm
  EXPECT_FALSE(nas.contains("model.layers.5.post_attention_layernorm.weight"));
}

// ---- bad checkpoints ----

// Rewrites model.safetensors of `dir` through `edit`.
void EditTensors(const std::string& dir, const std::function<void(std::vector<StTensor>&)>& edit) {
  Expected<std::vector<StTensor>> read = ReadSafetensors(dir + "/model.safetensors");
  ASSERT_TRUE(read.ok());
  std::vector<StTensor> t = *std::move(read);
  edit(t);
  ASSERT_TRUE(WriteSafetensors(dir + "/model.safetensors", t).ok());
}

std::string OpenError(const std::string& dir) {
  Expected<HfCheckpoint> c = OpenHfCheckpoint(dir);
  if (c.ok()) return "opened";
  EXPECT_EQ(c.error().code, ErrorCode::kMalformed) << c.error().message;
  return c.error().message;
}

TEST(HfCheckpointRejects, AMissingStackedExpertTensor) {
  const std::string dir = MustWrite("missing", Catalogued("gpt-oss"));
  EditTensors(dir, [](std::vector<StTensor>& t) {
    std::erase_if(t, [](const StTensor& s) { return s.name == "model.layers.2.mlp.experts.down_proj_bias"; });
  });
  EXPECT_EQ(OpenError(dir), dir + "/model.safetensors: missing tensor 'model.layers.2.mlp.experts.down_proj_bias'");
}

TEST(HfCheckpointRejects, AConvWithoutItsUnitMiddleDimension) {
  const std::string dir = MustWrite("conv2d", Catalogued("nemotron-h"));
  EditTensors(dir, [](std::vector<StTensor>& t) {
    for (StTensor& s : t) {
      if (s.name == "backbone.layers.0.mixer.conv1d.weight") s.shape = {s.shape[0], s.shape[2]};
    }
  });
  EXPECT_EQ(OpenError(dir), dir +
                                "/model.safetensors: tensor 'backbone.layers.0.mixer.conv1d.weight' has shape "
                                "[384, 4]; expected [384, 1, 4]");
}

TEST(HfCheckpointRejects, ATensorOfAnotherFamily) {
  const std::string dir = MustWrite("extra", Catalogued("qwen3-next"));
  EditTensors(dir, [](std::vector<StTensor>& t) {
    t.push_back({.name = "model.layers.0.mixer.norm.weight", .shape = {8}, .floats = std::vector<float>(8)});
  });
  EXPECT_EQ(OpenError(dir), dir +
                                "/model.safetensors: unexpected tensor 'model.layers.0.mixer.norm.weight' (not a "
                                "weight of this 4-layer qwen3_next)");
}

TEST(HfCheckpointRejects, MixedDtypes) {
  const std::string dir = MustWrite("mixed", Catalogued("qwen3"));
  EditTensors(dir, [](std::vector<StTensor>& t) {
    for (StTensor& s : t) {
      if (s.name == "model.norm.weight") s.dtype = StDtype::kBf16;
    }
  });
  EXPECT_EQ(OpenError(dir), dir +
                                "/model.safetensors: tensor 'lm_head.weight' is F32 but 'model.norm.weight' is "
                                "BF16; every weight must have one dtype");
}

TEST(HfCheckpointRejects, AConfigDeclaringMoreLayersThanTheFilesHold) {
  const std::string dir = MustWrite("layers", Catalogued("llama"));
  json j = ConfigOf(dir);
  j["num_hidden_layers"] = 100000;
  std::ofstream(dir + "/config.json") << j.dump();
  EXPECT_EQ(OpenError(dir), dir + ": config.json declares 100000 layers with 200000 stages, but " + dir +
                                "/model.safetensors holds only 39 tensors");
}

TEST(HfCheckpointRejects, AModelTypeWithoutACheckpointForm) {
  const std::string dir = MustWrite("v4", Catalogued("llama"));
  std::ifstream in(SEAM_HF_CONFIGS "/deepseek-v4-flash.json");
  const std::string v4((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/config.json") << v4;
  Expected<HfCheckpoint> c = OpenHfCheckpoint(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, dir + "/config.json: seam reads no checkpoint of model_type 'deepseek_v4'");
}

TEST(HfCheckpointRejects, ANonFiniteWeightNamingItsTensorUnderSeamsName) {
  const std::string dir = MustWrite("nan", Catalogued("gpt-oss"));
  EditTensors(dir, [](std::vector<StTensor>& t) {
    for (StTensor& s : t) {
      if (s.name == "model.layers.0.mlp.experts.down_proj") s.floats[3 * 64 + 1] = std::nanf("");
    }
  });
  Expected<HfCheckpoint> c = OpenHfCheckpoint(dir);
  ASSERT_TRUE(c.ok()) << c.error().message;
  Expected<Weights> w = ReadHfWeights(*c);
  ASSERT_FALSE(w.ok());
  // [e=0, j=3, col=1] is expert 0's down_proj [1, 3].
  EXPECT_EQ(w.error().message,
            "weight 'model.layers.0.mlp.experts.0.down_proj.weight' holds a NaN at [1, 3]; seam "
            "computes with finite weights only");
}

}  // namespace
}  // namespace seam

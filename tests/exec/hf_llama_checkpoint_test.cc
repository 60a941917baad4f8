// Hugging Face Llama checkpoints through the generic layer
// (seam/runtime/hf_checkpoint.h): a tiny Llama round-trips equal in fp32 and bf16,
// config.json holds exactly the keys transformers' LlamaForCausalLM reads,
// and every bad config key or tensor is an error with an exact message.
#include "seam/runtime/hf_checkpoint.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "seam/families.h"
#include "seam/runtime/dump.h"
#include "seam/runtime/safetensors.h"
#include "testing.h"

namespace seam {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kSeed = 7;

std::string ConfigPath(const std::string& dir) { return (fs::path(dir) / "config.json").string(); }
std::string StPath(const std::string& dir) { return (fs::path(dir) / "model.safetensors").string(); }

// hidden 8, 2 layers, vocab 16, 2 query heads sharing 1 kv head of 4, FFN 12.
ModelDims TinyDims(int head_dim = 4) {
  return {.vocab = 16,
          .heads = 2,
          .kv_heads = 1,
          .head_dim = head_dim,
          .rope_theta = 500000.0,
          .rms_eps = 1e-5,
          .intermediate = 12};
}

Model Tiny(const ModelDims& d = TinyDims()) {
  Model m = DenseDecoderModel("llama", 2, 8, d);
  m.hf_type = "llama";
  return m;
}

// Generated fp32 values: not all bf16-exact.
Weights Generated(const Model& m) {
  Expected<Weights> w = GenerateWeights(m, kSeed, Dtype::kF32);
  EXPECT_TRUE(w.ok()) << w.error().message;
  return w.ok() ? *std::move(w) : Weights();
}

std::string MustWrite(const std::string& name, const Model& m, const Weights& w, Dtype dtype = Dtype::kF32) {
  const std::string dir = testing::FreshTestDir(name);
  Status s = WriteHfCheckpoint(dir, m, w, dtype);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return dir;
}
std::string MustWrite(const std::string& name, const Model& m = Tiny(), Dtype dtype = Dtype::kF32) {
  return MustWrite(name, m, Generated(m), dtype);
}

// The model, weights and dtype a checkpoint holds.
Expected<LoadedModel> Read(const std::string& dir) {
  Expected<HfCheckpoint> c = OpenHfCheckpoint(dir);
  if (!c) return c.error();
  Expected<Weights> w = ReadHfWeights(*c);
  if (!w) return w.error();
  return LoadedModel{.model = c->model, .weights = *std::move(w), .dtype = c->dtype};
}

json LoadConfig(const std::string& dir) {
  std::ifstream in(ConfigPath(dir));
  return json::parse(in);
}

void EditConfig(const std::string& dir, const std::function<void(json&)>& edit) {
  json j = LoadConfig(dir);
  edit(j);
  std::ofstream(ConfigPath(dir), std::ios::trunc) << j.dump(2);
}

// Rewrites model.safetensors through an edit of its tensor list.
void EditTensors(const std::string& dir, const std::function<void(std::vector<StTensor>&)>& edit) {
  Expected<std::vector<StTensor>> t = ReadSafetensors(StPath(dir));
  ASSERT_TRUE(t.ok()) << t.error().message;
  std::vector<StTensor> tensors = *t;
  edit(tensors);
  ASSERT_TRUE(WriteSafetensors(StPath(dir), tensors, {{"format", "pt"}}).ok());
}

StTensor& Find(std::vector<StTensor>& tensors, const std::string& name) {
  for (StTensor& t : tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of a checkpoint the reader refuses; fails the test when it reads.
std::string ReadError(const std::string& dir, ErrorCode code = ErrorCode::kMalformed) {
  Expected<LoadedModel> r = Read(dir);
  if (r.ok()) {
    ADD_FAILURE() << "read a bad checkpoint";
    return "";
  }
  EXPECT_EQ(r.error().code, code);
  return r.error().message;
}

std::string ConfigError(const std::string& name, const std::function<void(json&)>& edit) {
  const std::string dir = MustWrite(name);
  EditConfig(dir, edit);
  return ReadError(dir);
}

std::string TensorError(const std::string& name, const std::function<void(std::vector<StTensor>&)>& edit) {
  const std::string dir = MustWrite(name);
  EditTensors(dir, edit);
  return ReadError(dir);
}

// The weights with the LM head tied to the embedding.
Weights Tied(const Weights& w) {
  std::map<std::string, Tensor> all = w.Copies();
  all.insert_or_assign(kLmHeadName, w.at(kEmbeddingName).Copy());
  return Weights(std::move(all));
}

void ExpectSameWeights(const Weights& a, const Weights& b) {
  ASSERT_EQ(a.all().size(), b.all().size());
  for (const auto& [name, t] : a.all()) {
    ASSERT_TRUE(b.contains(name)) << name;
    EXPECT_TRUE(t.view() == b.at(name)) << name;
  }
}

void ExpectSame(const Model& m, const Weights& w, Dtype dtype, const LoadedModel& back) {
  EXPECT_EQ(back.model.name, m.name);
  EXPECT_EQ(back.model.hf_type, m.hf_type);
  EXPECT_EQ(back.model.hidden, m.hidden);
  ASSERT_EQ(back.model.num_layers, m.num_layers);
  EXPECT_EQ(*back.model.dims, *m.dims);
  const auto a = StagesOf(m, 0, m.num_layers), b = StagesOf(back.model, 0, m.num_layers);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].decl, b[i].decl) << "stage " << i;
  EXPECT_EQ(back.dtype, dtype);
  ExpectSameWeights(w, back.weights);
}

// Every tensor of the tiny Llama's checkpoint, in the file's order (seam's
// weight order: each stage's projections, then its input norm).
std::vector<std::string> TinyTensorNames() {
  std::vector<std::string> names = {"model.embed_tokens.weight"};
  for (int i = 0; i < 2; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    for (const char* w :
         {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "input_layernorm",
          "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "post_attention_layernorm"}) {
      names.push_back(p + w + ".weight");
    }
  }
  names.insert(names.end(), {"model.norm.weight", "lm_head.weight"});
  return names;
}

// ---- round trips ----

TEST(HfLlama, F32RoundTripsEqual) {
  const Model m = Tiny();
  const Weights w = Generated(m);
  Expected<LoadedModel> back = Read(MustWrite("f32", m, w));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(m, w, Dtype::kF32, *back);
  EXPECT_TRUE(back->model.dims->rope);
  EXPECT_EQ(back->model.dims->activation, Activation::kSwiGlu);
}

TEST(HfLlama, Bf16RoundTripsRounded) {
  const Model m = Tiny();
  const Weights w = Generated(m);
  const std::string dir = MustWrite("bf16", m, w, Dtype::kBf16);
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  std::map<std::string, Tensor> rounded = w.Copies();
  for (auto& [name, t] : rounded) RoundToStorage(t, Dtype::kBf16);
  ExpectSame(m, Weights(rounded), Dtype::kBf16, *back);
  const char* up = "model.layers.1.mlp.up_proj.weight";
  EXPECT_FALSE(w.at(up) == back->weights.at(up)) << "the values were rounded";
  // Written again, a bf16 checkpoint is a fixed point, byte for byte.
  const std::string again = MustWrite("bf16_again", back->model, back->weights, Dtype::kBf16);
  Expected<LoadedModel> twice = Read(again);
  ASSERT_TRUE(twice.ok()) << twice.error().message;
  ExpectSame(back->model, back->weights, Dtype::kBf16, *twice);
  EXPECT_EQ(FileText(StPath(again)), FileText(StPath(dir)));
  EXPECT_EQ(FileText(ConfigPath(again)), FileText(ConfigPath(dir)));
}

// A tensor of more than 1 MiB of floats (the embedding and the LM head here,
// over 70,000 rows) is read a block of rows at a time; every block lands at
// its rows, in fp32 and in bf16.
TEST(HfLlama, ATensorReadInBlocksOfRowsRoundTripsEqual) {
  ModelDims d = TinyDims();
  d.vocab = 70000;
  const Model m = Tiny(d);
  const Weights w = Generated(m);
  ASSERT_GT(w.at(kEmbeddingName).rows() * w.at(kEmbeddingName).cols(), 2 * (1 << 18));
  Expected<LoadedModel> f32 = Read(MustWrite("blocks_f32", m, w));
  ASSERT_TRUE(f32.ok()) << f32.error().message;
  ExpectSame(m, w, Dtype::kF32, *f32);
  Expected<LoadedModel> bf16 = Read(MustWrite("blocks_bf16", m, w, Dtype::kBf16));
  ASSERT_TRUE(bf16.ok()) << bf16.error().message;
  std::map<std::string, Tensor> rounded = w.Copies();
  for (auto& [name, t] : rounded) RoundToStorage(t, Dtype::kBf16);
  ExpectSame(m, Weights(rounded), Dtype::kBf16, *bf16);
  EXPECT_EQ(bf16->weights.all().at(kEmbeddingName).storage(), Dtype::kBf16);
}

TEST(HfLlama, HeadDimOtherThanHiddenOverHeads) {
  const Model m = Tiny(TinyDims(/*head_dim=*/8));
  const Weights w = Generated(m);
  Expected<LoadedModel> back = Read(MustWrite("head_dim8", m, w));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(m, w, Dtype::kF32, *back);
}

TEST(HfLlama, ConfigHasExactlyTheKeys) {
  const json j = LoadConfig(MustWrite("config"));
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(keys, (std::set<std::string>{"architectures", "model_type", "hidden_size", "num_hidden_layers",
                                         "vocab_size", "rms_norm_eps", "max_position_embeddings", "tie_word_embeddings",
                                         "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
                                         "rope_theta", "rope_scaling", "hidden_act", "attention_bias", "mlp_bias",
                                         "torch_dtype"}));
  EXPECT_EQ(j["architectures"], json::array({"LlamaForCausalLM"}));
  EXPECT_EQ(j["model_type"], "llama");
  EXPECT_EQ(j["hidden_size"], 8);
  EXPECT_EQ(j["intermediate_size"], 12);
  EXPECT_EQ(j["num_attention_heads"], 2);
  EXPECT_EQ(j["num_key_value_heads"], 1);
  EXPECT_EQ(j["head_dim"], 4);
  EXPECT_EQ(j["num_hidden_layers"], 2);
  EXPECT_EQ(j["rms_norm_eps"], 1e-5);
  EXPECT_TRUE(j["rms_norm_eps"].is_number_float());
  EXPECT_EQ(j["rope_theta"], 500000.0);
  EXPECT_TRUE(j["rope_scaling"].is_null());
  EXPECT_EQ(j["vocab_size"], 16);
  EXPECT_EQ(j["max_position_embeddings"], 4096);
  EXPECT_EQ(j["hidden_act"], "silu");
  EXPECT_EQ(j["tie_word_embeddings"], false);
  EXPECT_EQ(j["attention_bias"], false);
  EXPECT_EQ(j["mlp_bias"], false);
  EXPECT_EQ(j["torch_dtype"], "float32");
  EXPECT_EQ(LoadConfig(MustWrite("config_bf16", Tiny(), Dtype::kBf16))["torch_dtype"], "bfloat16");
}

TEST(HfLlama, SafetensorsLayout) {
  const std::string dir = MustWrite("layout_bf16", Tiny(), Dtype::kBf16);
  Expected<std::vector<StTensor>> read = ReadSafetensors(StPath(dir));
  ASSERT_TRUE(read.ok()) << read.error().message;
  std::vector<StTensor>& t = read.value();
  std::vector<std::string> names;
  for (const StTensor& s : t) {
    names.push_back(s.name);
    EXPECT_EQ(s.dtype, StDtype::kBf16) << s.name;
  }
  EXPECT_EQ(names, TinyTensorNames());
  EXPECT_EQ(Find(t, "model.embed_tokens.weight").shape, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(Find(t, "model.norm.weight").shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(Find(t, "model.layers.0.input_layernorm.weight").shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(Find(t, "model.layers.1.self_attn.q_proj.weight").shape, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(Find(t, "model.layers.1.self_attn.k_proj.weight").shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(Find(t, "model.layers.1.self_attn.o_proj.weight").shape, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(Find(t, "model.layers.1.mlp.gate_proj.weight").shape, (std::vector<int64_t>{12, 8}));
  EXPECT_EQ(Find(t, "model.layers.1.mlp.down_proj.weight").shape, (std::vector<int64_t>{8, 12}));
  EXPECT_EQ(Find(t, "lm_head.weight").shape, (std::vector<int64_t>{16, 8}));
  Expected<std::map<std::string, std::string>> meta = ReadSafetensorsMetadata(StPath(dir));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(*meta, (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(HfLlama, WriteCreatesNestedDirectories) {
  const std::string dir = (fs::path(testing::FreshTestDir("nested")) / "a" / "b").string();
  const Model m = Tiny();
  ASSERT_TRUE(WriteHfCheckpoint(dir, m, Generated(m), Dtype::kF32).ok());
  EXPECT_TRUE(Read(dir).ok());
}

// ---- optional config keys take HF's defaults ----

TEST(HfLlama, OptionalKeysTakeHfDefaults) {
  const Model m = Tiny();
  const Weights w = Generated(m);
  const std::string dir = MustWrite("defaults", m, w);
  EditConfig(dir, [](json& j) {
    for (const char* k : {"head_dim", "hidden_act", "tie_word_embeddings", "attention_bias", "mlp_bias", "torch_dtype",
                          "max_position_embeddings", "architectures", "rope_scaling"}) {
      j.erase(k);
    }
  });
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(m, w, Dtype::kF32, *back);  // head_dim = hidden_size / num_attention_heads = 4
}

TEST(HfLlama, RopeThetaMayBeAnInteger) {
  const std::string dir = MustWrite("theta_int");
  EditConfig(dir, [](json& j) { j["rope_theta"] = 10000; });
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->model.dims->rope_theta, 10000.0);
}

// ---- config errors ----

// config.json is read by the one importer (seam/hf_config.h): its messages,
// its limits and its defaults are the same as for `--hf-config`.
TEST(HfLlamaConfig, AnotherModelTypeReadsTheTensorsAsThatFamily) {
  EXPECT_EQ(ConfigError("mistral", [](json& j) { j["model_type"] = "mistral"; }),
            ConfigPath(testing::FreshTestDir("mistral")) +
                ": unknown model_type \"mistral\"; known: llama, qwen3, qwen3_moe, "
                "gpt_oss, deepseek_v2, deepseek_v3, kimi_k2, nemotron_h, zaya, "
                "qwen3_next, nemotron-nas, deepseek_v4");
  // A Qwen3 norms each head's query and key: the Llama's tensors lack those norms.
  EXPECT_EQ(ConfigError("qwen3", [](json& j) { j["model_type"] = "qwen3"; }),
            StPath(testing::FreshTestDir("qwen3")) + ": missing tensor 'model.layers.0.self_attn.k_norm.weight'");
}

TEST(HfLlamaConfig, RequiredKeys) {
  for (const char* key :
       {"model_type", "hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers", "vocab_size"}) {
    const std::string name = std::string("missing_") + key;
    EXPECT_EQ(ConfigError(name, [&](json& j) { j.erase(key); }),
              ConfigPath(testing::FreshTestDir(name)) + ": missing key '" + key + "'");
  }
}

TEST(HfLlamaConfig, WrongJsonTypes) {
  const std::string p = ConfigPath(testing::FreshTestDir("types"));
  auto error = [&](const std::function<void(json&)>& edit) { return ConfigError("types", edit); };
  EXPECT_EQ(error([](json& j) { j["model_type"] = 1; }), p + ": key 'model_type' must be a string; found 1");
  EXPECT_EQ(error([](json& j) { j["hidden_size"] = "8"; }),
            p + ": key 'hidden_size' must be an integer from 1 to 10000000; found \"8\"");
  EXPECT_EQ(error([](json& j) { j["num_hidden_layers"] = 0; }),
            p + ": key 'num_hidden_layers' must be an integer from 1 to 100000; found 0");
  EXPECT_EQ(error([](json& j) { j["vocab_size"] = -16; }),
            p + ": key 'vocab_size' must be an integer from 1 to 10000000; found -16");
  EXPECT_EQ(error([](json& j) { j["intermediate_size"] = 4294967296; }),
            p + ": key 'intermediate_size' must be an integer from 1 to 10000000; found 4294967296");
  EXPECT_EQ(error([](json& j) { j["num_key_value_heads"] = true; }),
            p + ": key 'num_key_value_heads' must be an integer from 1 to 10000000; found true");
  EXPECT_EQ(error([](json& j) { j["head_dim"] = "4"; }),
            p + ": key 'head_dim' must be an integer from 1 to 10000000; found \"4\"");
  EXPECT_EQ(error([](json& j) { j["rms_norm_eps"] = "1e-5"; }),
            p + ": key 'rms_norm_eps' must be a number above 0 and at most 1; found \"1e-5\"");
  EXPECT_EQ(error([](json& j) { j["rope_theta"] = 0; }),
            p + ": key 'rope_theta' must be a number above 0 and at most 1000000000000; found 0");
  EXPECT_EQ(error([](json& j) { j["hidden_act"] = 2; }), p + ": key 'hidden_act' must be a string; found 2");
  EXPECT_EQ(error([](json& j) { j["attention_bias"] = 1; }),
            p + ": key 'attention_bias' must be true or false; found 1");
  EXPECT_EQ(error([](json& j) { j["tie_word_embeddings"] = "no"; }),
            p + ": key 'tie_word_embeddings' must be true or false; found \"no\"");
}

TEST(HfLlamaConfig, NotJsonOrNotAnObject) {
  const std::string dir = MustWrite("not_json");
  std::ofstream(ConfigPath(dir), std::ios::trunc) << "{\"model_type\": ";
  EXPECT_EQ(ReadError(dir), ConfigPath(dir) +
                                ": not JSON: parse error at line 1, column 16: syntax error while parsing value - "
                                "unexpected end of input; expected '[', '{', or a literal");
  std::ofstream(ConfigPath(dir), std::ios::trunc) << "[1, 2]";
  EXPECT_EQ(ReadError(dir), ConfigPath(dir) + ": not a JSON object; found a list");
}

TEST(HfLlamaConfig, MissingConfigFile) {
  const std::string dir = MustWrite("no_config");
  fs::remove(ConfigPath(dir));
  EXPECT_EQ(ReadError(dir, ErrorCode::kInvalidArgument), "cannot read " + ConfigPath(dir) + ": no such file");
}

TEST(HfLlamaConfig, HeadsNotDivisibleByKvHeads) {
  EXPECT_EQ(
      ConfigError("kv3", [](json& j) { j["num_key_value_heads"] = 3; }),
      ConfigPath(testing::FreshTestDir("kv3")) + ": num_attention_heads 2 is not divisible by num_key_value_heads 3");
}

TEST(HfLlamaConfig, MissingKvHeadsDefaultsToHeads) {
  // HF's default (kv = heads = 2) contradicts the k_proj the file holds (kv = 1).
  const std::string dir = MustWrite("kv_default");
  EditConfig(dir, [](json& j) { j.erase("num_key_value_heads"); });
  EXPECT_EQ(ReadError(dir),
            StPath(dir) + ": tensor 'model.layers.0.self_attn.k_proj.weight' has shape [4, 8]; expected [8, 8]");
}

// The reader checks the tensors in name order: a head_dim that contradicts
// the file shows first in layer 0's k_proj.
TEST(HfLlamaConfig, HeadDimInconsistentWithTheProjections) {
  EXPECT_EQ(ConfigError("head_dim2", [](json& j) { j["head_dim"] = 2; }),
            StPath(testing::FreshTestDir("head_dim2")) +
                ": tensor 'model.layers.0.self_attn.k_proj.weight' has shape [4, 8]; expected [2, 8]");
}

TEST(HfLlamaConfig, MissingHeadDimDefaultsToHiddenOverHeads) {
  // head_dim 8 was written; without it HF takes 8 / 2 = 4, which the k_proj contradicts.
  const std::string dir = MustWrite("head_dim_default", Tiny(TinyDims(8)));
  EditConfig(dir, [](json& j) { j.erase("head_dim"); });
  EXPECT_EQ(ReadError(dir),
            StPath(dir) + ": tensor 'model.layers.0.self_attn.k_proj.weight' has shape [8, 8]; expected [4, 8]");
}

TEST(HfLlamaConfig, MissingHeadDimWithIndivisibleHidden) {
  EXPECT_EQ(ConfigError("indivisible",
                        [](json& j) {
                          j.erase("head_dim");
                          j["num_attention_heads"] = 3;
                          j["num_key_value_heads"] = 1;
                        }),
            ConfigPath(testing::FreshTestDir("indivisible")) +
                ": head_dim is not given and hidden_size 8 is not divisible by num_attention_heads 3");
}

// Rope scaling changes the numbers: it is read, and written back with the
// checkpoint, so a dump's config.json says what its outputs used.
TEST(HfLlamaConfig, YarnRopeScalingIsReadAndWrittenBack) {
  ModelDims d = TinyDims();
  d.yarn = {
      .factor = 4.0, .original_positions = 32768, .beta_fast = 32, .beta_slow = 1, .mscale = 0.5, .truncate = false};
  const std::string dir = MustWrite("yarn", Tiny(d));
  EXPECT_EQ(LoadConfig(dir)["rope_scaling"]["rope_type"], "yarn");
  EXPECT_FALSE(LoadConfig(dir)["rope_scaling"].contains("mscale_all_dim"));  // 0: not given
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->model.dims->yarn, d.yarn);
}

TEST(HfLlamaConfig, Llama3RopeScalingIsReadAndWrittenBack) {
  ModelDims d = TinyDims();
  d.rope_scaling = {.factor = 8.0, .low_freq_factor = 1.0, .high_freq_factor = 4.0, .original_positions = 8192};
  const std::string dir = MustWrite("rope_scaling", Tiny(d));
  EXPECT_EQ(LoadConfig(dir)["rope_scaling"]["rope_type"], "llama3");
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->model.dims->rope_scaling, d.rope_scaling);
  EXPECT_EQ(ConfigError("rope_partial",
                        [](json& j) {
                          j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
                        }),
            ConfigPath(testing::FreshTestDir("rope_partial")) +
                ": missing key 'rope_scaling.low_freq_factor' (a llama3 rope_scaling needs factor, low_freq_factor, "
                "high_freq_factor and original_max_position_embeddings)");
}

TEST(HfLlamaConfig, NormEpsilonAndRopeThetaTakeHfDefaults) {
  const std::string dir = MustWrite("eps_theta_defaults");
  EditConfig(dir, [](json& j) {
    j.erase("rms_norm_eps");
    j.erase("rope_theta");
  });
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->model.dims->rms_eps, 1e-6);
  EXPECT_EQ(back->model.dims->rope_theta, 10000.0);
}

// The importer refuses what seam's Llama does not compute (see
// tests/stack/hf_config_test.cc): the checkpoint reader says the same.
TEST(HfLlamaConfig, OnlySilu) {
  EXPECT_EQ(ConfigError("gelu", [](json& j) { j["hidden_act"] = "gelu"; }),
            ConfigPath(testing::FreshTestDir("gelu")) + ": hidden_act is 'gelu'; only 'silu' is supported");
}

TEST(HfLlamaConfig, NoBiases) {
  EXPECT_EQ(ConfigError("attn_bias", [](json& j) { j["attention_bias"] = true; }),
            ConfigPath(testing::FreshTestDir("attn_bias")) + ": attention_bias is true; biases are not supported");
  EXPECT_EQ(ConfigError("mlp_bias", [](json& j) { j["mlp_bias"] = true; }),
            ConfigPath(testing::FreshTestDir("mlp_bias")) + ": mlp_bias is true; biases are not supported");
}

// ---- tensor errors ----

TEST(HfLlamaTensors, MissingTensor) {
  EXPECT_EQ(TensorError("missing",
                        [](std::vector<StTensor>& t) {
                          std::erase_if(
                              t, [](const StTensor& s) { return s.name == "model.layers.1.mlp.up_proj.weight"; });
                        }),
            StPath(testing::FreshTestDir("missing")) + ": missing tensor 'model.layers.1.mlp.up_proj.weight'");
}

TEST(HfLlamaTensors, WrongShape) {
  EXPECT_EQ(TensorError("shape",
                        [](std::vector<StTensor>& t) {
                          StTensor& s = Find(t, "model.layers.1.mlp.down_proj.weight");
                          s.shape = {12, 8};  // transposed
                        }),
            StPath(testing::FreshTestDir("shape")) +
                ": tensor 'model.layers.1.mlp.down_proj.weight' has shape [12, 8]; expected [8, 12]");
}

TEST(HfLlamaTensors, NormsAreOneDimensional) {
  EXPECT_EQ(TensorError("norm2d",
                        [](std::vector<StTensor>& t) {
                          Find(t, "model.norm.weight").shape = {1, 8};
                        }),
            StPath(testing::FreshTestDir("norm2d")) + ": tensor 'model.norm.weight' has shape [1, 8]; expected [8]");
}

// A weight that is not finite is refused on load, naming it and the element;
// opening the checkpoint reads no value, so it opens.
TEST(HfLlamaTensors, ANonFiniteWeightIsRefusedNamingTheTensorAndElement) {
  const struct {
    float value;
    const char* what;
  } cases[] = {{std::numeric_limits<float>::quiet_NaN(), "a NaN"},
               {-std::numeric_limits<float>::infinity(), "an infinity"}};
  for (const auto& c : cases) {
    const std::string dir = MustWrite("nonfinite");
    EditTensors(dir,
                [&](std::vector<StTensor>& t) { Find(t, "model.layers.1.mlp.up_proj.weight").floats[13] = c.value; });
    Expected<HfCheckpoint> opened = OpenHfCheckpoint(dir);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    Expected<Weights> loaded = ReadHfWeights(*opened);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().code, ErrorCode::kMalformed);
    EXPECT_EQ(loaded.error().message, fmt::format("weight 'model.layers.1.mlp.up_proj.weight' holds {} at [1, 5]; seam "
                                                  "computes with finite weights only",
                                                  c.what));
  }
}

TEST(HfLlamaTensors, ExtraTensor) {
  EXPECT_EQ(TensorError(
                "extra",
                [](std::vector<StTensor>& t) {
                  t.push_back({.name = "model.layers.0.self_attn.rotary_emb.inv_freq", .shape = {2}, .floats = {1, 2}});
                  t.push_back(
                      {.name = "model.layers.2.input_layernorm.weight", .shape = {8}, .floats = std::vector<float>(8)});
                }),
            StPath(testing::FreshTestDir("extra")) +
                ": unexpected tensor 'model.layers.0.self_attn.rotary_emb.inv_freq' (not a weight of this 2-layer "
                "llama)");
}

TEST(HfLlamaTensors, IntegerDtype) {
  EXPECT_EQ(TensorError("int",
                        [](std::vector<StTensor>& t) {
                          StTensor& s = Find(t, "model.norm.weight");
                          s.dtype = StDtype::kI64;
                          s.ints.assign(8, 1);
                          s.floats.clear();
                        }),
            StPath(testing::FreshTestDir("int")) + ": tensor 'model.norm.weight' has dtype I64; expected F32 or BF16");
}

// The first F32 tensor in name order is lm_head.weight.
TEST(HfLlamaTensors, MixedDtypes) {
  EXPECT_EQ(TensorError("mixed",
                        [](std::vector<StTensor>& t) {
                          Find(t, "model.layers.1.self_attn.v_proj.weight").dtype = StDtype::kBf16;
                        }),
            StPath(testing::FreshTestDir("mixed")) +
                ": tensor 'lm_head.weight' is F32 but 'model.layers.1.self_attn.v_proj.weight' is BF16; "
                "every weight must have one dtype");
}

TEST(HfLlamaTensors, LmHeadRequiredUnlessTied) {
  auto drop_head = [](std::vector<StTensor>& t) {
    std::erase_if(t, [](const StTensor& s) { return s.name == "lm_head.weight"; });
  };
  EXPECT_EQ(TensorError("untied", drop_head), StPath(testing::FreshTestDir("untied")) +
                                                  ": missing tensor 'lm_head.weight' (tie_word_embeddings is false)");

  const Model m = Tiny();
  const Weights w = Generated(m);
  const std::string dir = MustWrite("tied", m, w);
  EditTensors(dir, drop_head);
  EditConfig(dir, [](json& j) { j["tie_word_embeddings"] = true; });
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(m, Tied(w), Dtype::kF32, *back);  // the LM head is the embedding
}

// Tied, the LM head is the embedding, as transformers ties it on load: a
// stored lm_head only has to have its shape, and its values are not read.
TEST(HfLlamaTensors, ATiedLmHeadIsTheEmbeddingAndAStoredOneIsOnlyShapeChecked) {
  const Model m = Tiny();
  const Weights w = Generated(m);
  const std::string dir = MustWrite("tied_differs", m, w);
  EditConfig(dir, [](json& j) { j["tie_word_embeddings"] = true; });
  Expected<LoadedModel> back = Read(dir);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_FALSE(w.at(kLmHeadName) == w.at(kEmbeddingName));
  ExpectSame(m, Tied(w), Dtype::kF32, *back);
  EditTensors(dir, [](std::vector<StTensor>& t) {
    StTensor& head = Find(t, "lm_head.weight");
    head.shape = {8, 16};
  });
  EXPECT_EQ(ReadError(dir), StPath(dir) + ": tensor 'lm_head.weight' has shape [8, 16]; expected [16, 8]");
}

// A config claiming far more layers than the files hold is refused before
// the reader lists (or reads) any of them.
TEST(HfLlamaTensors, MoreLayersThanTheFilesHoldIsRefusedBeforeListingThem) {
  const std::string dir = MustWrite("many_layers");
  EditConfig(dir, [](json& j) { j["num_hidden_layers"] = 100000; });
  EXPECT_EQ(ReadError(dir), dir + ": config.json declares 100000 layers with 200000 stages, but " + StPath(dir) +
                                " holds only 21 tensors");
}

TEST(HfLlamaTensors, NoSafetensorsAtAll) {
  const std::string dir = MustWrite("no_st");
  fs::remove(StPath(dir));
  EXPECT_EQ(ReadError(dir, ErrorCode::kInvalidArgument),
            dir + ": no model.safetensors or model.safetensors.index.json");
}

// The checkpoint's model.safetensors split into two shard files and an index,
// as transformers' save_pretrained writes a large model.
std::string Shard(const std::string& name, const std::function<void(json&)>& edit_index = {}) {
  const std::string dir = MustWrite(name);
  Expected<std::vector<StTensor>> all = ReadSafetensors(StPath(dir));
  EXPECT_TRUE(all.ok());
  const size_t half = all->size() / 2;
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  const std::vector<StTensor> parts[2] = {{all->begin(), all->begin() + static_cast<long>(half)},
                                          {all->begin() + static_cast<long>(half), all->end()}};
  for (int i = 0; i < 2; ++i) {
    const std::string file = fmt::format("model-0000{}-of-00002.safetensors", i + 1);
    EXPECT_TRUE(WriteSafetensors((fs::path(dir) / file).string(), parts[i], {{"format", "pt"}}).ok());
    for (const StTensor& t : parts[i]) index["weight_map"][t.name] = file;
  }
  if (edit_index) edit_index(index);
  std::ofstream(fs::path(dir) / "model.safetensors.index.json") << index.dump(2);
  fs::remove(StPath(dir));
  return dir;
}

TEST(HfLlamaTensors, AShardedCheckpointReadsAsTheWholeOne) {
  Expected<LoadedModel> whole = Read(MustWrite("whole"));
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Expected<LoadedModel> sharded = Read(Shard("sharded"));
  ASSERT_TRUE(sharded.ok()) << sharded.error().message;
  ExpectSame(whole->model, whole->weights, whole->dtype, *sharded);
}

TEST(HfLlamaTensors, AShardIndexThatDisagreesWithItsShardsIsRefused) {
  const std::string index = "/model.safetensors.index.json";
  std::string dir = Shard("index_escape", [](json& j) { j["weight_map"]["model.norm.weight"] = "../elsewhere"; });
  EXPECT_EQ(ReadError(dir),
            dir + index + ": weight_map[\"model.norm.weight\"] is not the name of a file beside the index");
  dir =
      Shard("index_moved", [](json& j) { j["weight_map"]["model.norm.weight"] = "model-00001-of-00002.safetensors"; });
  EXPECT_EQ(ReadError(dir), dir + index +
                                ": tensor 'model.norm.weight' is in model-00002-of-00002.safetensors but the index "
                                "maps it to model-00001-of-00002.safetensors");
  dir = Shard("index_ghost", [](json& j) { j["weight_map"]["model.ghost"] = "model-00001-of-00002.safetensors"; });
  EXPECT_EQ(ReadError(dir), dir + index +
                                ": the index maps 'model.ghost' to model-00001-of-00002.safetensors, which does not "
                                "hold it");
  dir = Shard("index_empty", [](json& j) { j = json::object(); });
  EXPECT_EQ(ReadError(dir), dir + index + ": no \"weight_map\" object");
}

TEST(HfLlamaTensors, MalformedSafetensorsNamesTheFile) {
  const std::string dir = MustWrite("bad_st");
  std::ofstream(StPath(dir), std::ios::binary | std::ios::trunc) << "abc";
  EXPECT_EQ(ReadError(dir),
            StPath(dir) + ": 3 bytes is too short for a safetensors file (it starts with an 8-byte header length)");
}

// ---- the writer checks the model and its weights ----

TEST(HfLlamaWrite, RefusesWeightsThatDoNotFitTheModel) {
  const std::string dir = testing::FreshTestDir("bad_weights");
  const Model m = Tiny();
  auto error = [&](const std::function<void(std::map<std::string, Tensor>&)>& edit) {
    std::map<std::string, Tensor> w = Generated(m).Copies();
    edit(w);
    Status s = WriteHfCheckpoint(dir, m, Weights(std::move(w)), Dtype::kF32);
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_EQ(error([](auto& w) { w.erase("model.norm.weight"); }), "the weights have no tensor 'model.norm.weight'");
  EXPECT_EQ(error([](auto& w) { w.insert_or_assign("model.norm.weight", Tensor(8, 1)); }),
            "weight 'model.norm.weight' is [8, 1] but the model needs [1, 8]");
  EXPECT_EQ(error([](auto& w) { w.insert_or_assign("model.layers.0.self_attn.q_proj.weight", Tensor(8, 4)); }),
            "weight 'model.layers.0.self_attn.q_proj.weight' is [8, 4] but the model needs [8, 8]");
  EXPECT_EQ(error([](auto& w) { w.at("model.layers.1.mlp.up_proj.weight").data()[13] = std::nanf(""); }),
            "weight 'model.layers.1.mlp.up_proj.weight' holds a NaN at [1, 5]; seam computes with finite weights "
            "only");
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written for refused weights";
}

// A weight the model does not run with has no place in the checkpoint.
TEST(HfLlamaWrite, AWeightTheModelDoesNotRunWithIsNotWritten) {
  const Model m = Tiny();
  std::map<std::string, Tensor> w = Generated(m).Copies();
  w.emplace("extra.weight", Tensor(1, 1));
  const std::string dir = MustWrite("extra_weight", m, Weights(std::move(w)));
  Expected<std::vector<StTensor>> read = ReadSafetensors(StPath(dir));
  ASSERT_TRUE(read.ok()) << read.error().message;
  std::vector<std::string> names;
  for (const StTensor& s : *read) names.push_back(s.name);
  EXPECT_EQ(names, TinyTensorNames());
}

// The config it writes must read back as the model that ran: a model that
// is no Llama under model_type "llama" is refused.
TEST(HfLlamaWrite, RefusesAModelItsConfigCannotDescribe) {
  const std::string dir = testing::FreshTestDir("bad_model");
  auto error = [&](const std::function<void(ModelDims&)>& edit) {
    ModelDims d = TinyDims();
    edit(d);
    const Model m = Tiny(d);
    Status s = WriteHfCheckpoint(dir, m, Generated(Tiny()), Dtype::kF32);
    EXPECT_FALSE(s.ok());
    return s.ok() ? std::string() : s.error().message;
  };
  EXPECT_EQ(error([](ModelDims& d) { d.kv_heads = 3; }),
            "model 'llama': the config.json seam wrote does not read back: the written config.json: "
            "num_attention_heads 2 is not divisible by num_key_value_heads 3");
  EXPECT_EQ(error([](ModelDims& d) { d.activation = Activation::kRelu2; }),
            "model 'llama' cannot be written as a Hugging Face llama config: read back, its dims differ");
  EXPECT_EQ(error([](ModelDims& d) { d.rope_pairing = RopePairing::kInterleaved; }),
            "model 'llama' cannot be written as a Hugging Face llama config: read back, its dims differ");
  EXPECT_EQ(error([](ModelDims& d) { d.qk_norm = true; }),
            "model 'llama' cannot be written as a Hugging Face llama config: read back, its dims differ");
  Model untyped = Tiny();
  untyped.hf_type.clear();
  Status s = WriteHfCheckpoint(dir, untyped, Generated(untyped), Dtype::kF32);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "model 'llama' has no Hugging Face form (model_type '')");
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written for a refused model";
}

}  // namespace
}  // namespace seam

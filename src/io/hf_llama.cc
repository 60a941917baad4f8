// Hugging Face Llama checkpoints: config.json + model.safetensors.
#include "seam/hf_llama.h"

#include "seam/files.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "seam/checkpoint.h"
#include "seam/safetensors.h"
#include "stack/hf_reader.h"

namespace seam {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// One weight of the checkpoint and the shape it must have.
struct Spec {
  std::string name;
  std::vector<int64_t> shape;  // one entry for the norms, two ([out, in]) for the rest
};

struct Sizes {
  int64_t hidden = 0;
  int layers = 0;
  int64_t vocab = 0;
  int64_t q = 0;   // heads * head_dim
  int64_t kv = 0;  // kv_heads * head_dim
  int64_t intermediate = 0;
};

std::vector<Spec> Specs(const Sizes& s) {
  std::vector<Spec> out;
  out.push_back({"model.embed_tokens.weight", {s.vocab, s.hidden}});
  for (int i = 0; i < s.layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    out.push_back({p + "input_layernorm.weight", {s.hidden}});
    out.push_back({p + "self_attn.q_proj.weight", {s.q, s.hidden}});
    out.push_back({p + "self_attn.k_proj.weight", {s.kv, s.hidden}});
    out.push_back({p + "self_attn.v_proj.weight", {s.kv, s.hidden}});
    out.push_back({p + "self_attn.o_proj.weight", {s.hidden, s.q}});
    out.push_back({p + "post_attention_layernorm.weight", {s.hidden}});
    out.push_back({p + "mlp.gate_proj.weight", {s.intermediate, s.hidden}});
    out.push_back({p + "mlp.up_proj.weight", {s.intermediate, s.hidden}});
    out.push_back({p + "mlp.down_proj.weight", {s.hidden, s.intermediate}});
  }
  out.push_back({"model.norm.weight", {s.hidden}});
  out.push_back({"lm_head.weight", {s.vocab, s.hidden}});
  return out;
}

std::string ShapeText(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// A tensor's shape as the safetensors file holds it: norms 1-D.
std::vector<int64_t> FileShape(const Tensor& t, size_t rank) {
  if (rank == 1) return {t.rows() == 1 ? static_cast<int64_t>(t.cols()) : -1};
  return {t.rows(), t.cols()};
}

std::string TensorShapeText(const Tensor& t) { return fmt::format("[{}, {}]", t.rows(), t.cols()); }

// ---- config.json ----

struct ConfigFacts {
  LlamaCheckpoint c;  // sizes only
  bool tied = false;
};

// config.json through the one importer (seam/hf_config.h): its sizes, its
// grouped-query rules and its messages. What a Llama checkpoint adds is read
// with the importer's reader: a Llama only, SiLU, no biases, tied or not.
ConfigFacts ReadConfig(const std::string& text, const std::string& path) {
  Expected<json> j = hf::ParseConfigJson(text, path);
  if (!j) throw Failure(j.error());
  const hf::Reader r(*j, path);
  const Model m = hf::ImportModel(r);
  const std::string model_type = r.String("model_type");
  if (model_type != "llama") r.Fail(fmt::format("model_type is '{}'; a checkpoint is read for 'llama' only", model_type));
  const std::string act = r.StringOr("hidden_act", "silu");
  if (act != "silu") r.Fail(fmt::format("hidden_act is '{}'; only 'silu' is supported", act));
  if (r.BoolOr("attention_bias", false)) r.Fail("attention_bias is true; biases are not supported");
  if (r.BoolOr("mlp_bias", false)) r.Fail("mlp_bias is true; biases are not supported");
  ConfigFacts f;
  f.c.hidden = m.hidden;
  f.c.layers = m.num_layers;
  f.c.dims = *m.dims;
  f.tied = r.BoolOr("tie_word_embeddings", false);
  return f;
}

Sizes SizesOf(const LlamaCheckpoint& c) {
  const ModelDims& d = c.dims;
  return {.hidden = c.hidden,
          .layers = c.layers,
          .vocab = d.vocab,
          .q = static_cast<int64_t>(d.heads) * d.head_dim,
          .kv = static_cast<int64_t>(d.kv_heads) * d.head_dim,
          .intermediate = d.intermediate};
}

// ---- writing ----

Status CheckForWrite(const LlamaCheckpoint& c) {
  const ModelDims& d = c.dims;
  const std::pair<const char*, int> sizes[] = {{"hidden", c.hidden},         {"layers", c.layers},
                                               {"dims.vocab", d.vocab},      {"dims.heads", d.heads},
                                               {"dims.kv_heads", d.kv_heads}, {"dims.head_dim", d.head_dim},
                                               {"dims.intermediate", d.intermediate}};
  for (const auto& [what, v] : sizes) {
    if (v < 1) return InvalidArgument(fmt::format("llama checkpoint: {} must be positive (got {})", what, v));
  }
  if (d.heads % d.kv_heads != 0) {
    return InvalidArgument(fmt::format("llama checkpoint: heads {} is not divisible by kv_heads {}", d.heads, d.kv_heads));
  }
  if (static_cast<int64_t>(d.heads) * d.head_dim > kIntMax) {
    return InvalidArgument("llama checkpoint: heads * head_dim is too large");
  }
  if (d.activation != Activation::kSwiGlu || !d.rope || d.experts != 0 || d.mixer_heads != 0) {
    return InvalidArgument("llama checkpoint: a Llama is dense, SwiGLU and rotary (activation, rope, experts, mixer)");
  }
  if (d.rope_pairing != RopePairing::kHalf) {
    return InvalidArgument("llama checkpoint: a Llama rotates the two halves of each head together (rope_pairing)");
  }
  if (!(d.rms_eps > 0) || !std::isfinite(d.rms_eps) || !(d.rope_theta > 0) || !std::isfinite(d.rope_theta)) {
    return InvalidArgument("llama checkpoint: rms_eps and rope_theta must be positive");
  }
  const std::vector<Spec> specs = Specs(SizesOf(c));
  std::set<std::string> names;
  for (const Spec& s : specs) {
    names.insert(s.name);
    auto it = c.weights.find(s.name);
    if (it == c.weights.end()) return InvalidArgument(fmt::format("llama checkpoint: missing weight '{}'", s.name));
    if (FileShape(it->second, s.shape.size()) != s.shape) {
      return InvalidArgument(fmt::format("llama checkpoint: weight '{}' is {}; expected {}", s.name,
                                         TensorShapeText(it->second),
                                         s.shape.size() == 1 ? fmt::format("[1, {}]", s.shape[0]) : ShapeText(s.shape)));
    }
  }
  for (const auto& [name, _] : c.weights) {
    if (!names.contains(name)) return InvalidArgument(fmt::format("llama checkpoint: unexpected weight '{}'", name));
  }
  return Status::Ok();
}

ordered_json ConfigJson(const LlamaCheckpoint& c) {
  const ModelDims& d = c.dims;
  ordered_json j;
  j["architectures"] = ordered_json::array({"LlamaForCausalLM"});
  j["model_type"] = "llama";
  j["hidden_size"] = c.hidden;
  j["intermediate_size"] = d.intermediate;
  j["num_attention_heads"] = d.heads;
  j["num_key_value_heads"] = d.kv_heads;
  j["head_dim"] = d.head_dim;
  j["num_hidden_layers"] = c.layers;
  j["rms_norm_eps"] = d.rms_eps;
  j["rope_theta"] = d.rope_theta;
  if (d.rope_scaling.factor > 0) {  // the outputs were computed with it: the file must say so
    const RopeScaling& sc = d.rope_scaling;
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", sc.factor},
                         {"low_freq_factor", sc.low_freq_factor},
                         {"high_freq_factor", sc.high_freq_factor},
                         {"original_max_position_embeddings", sc.original_positions}};
  }
  if (d.yarn.factor > 0) {
    const YarnScaling& y = d.yarn;
    j["rope_scaling"] = {{"rope_type", "yarn"},
                         {"factor", y.factor},
                         {"original_max_position_embeddings", y.original_positions},
                         {"beta_fast", y.beta_fast},
                         {"beta_slow", y.beta_slow},
                         {"truncate", y.truncate}};
    // Zero is "not given" for these, as transformers reads them.
    for (const auto& [key, v] : {std::pair{"mscale", y.mscale}, std::pair{"mscale_all_dim", y.mscale_all_dim},
                                 std::pair{"attention_factor", y.attention_factor}}) {
      if (v != 0) j["rope_scaling"][key] = v;
    }
  }
  j["vocab_size"] = d.vocab;
  j["max_position_embeddings"] = 4096;
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = false;
  j["attention_bias"] = false;
  j["mlp_bias"] = false;
  j["torch_dtype"] = c.dtype == Dtype::kBf16 ? "bfloat16" : "float32";
  j["bos_token_id"] = 1;
  j["eos_token_id"] = 2;
  return j;
}

}  // namespace

std::vector<std::string> LlamaWeightNames(int layers) {
  std::vector<std::string> out;
  for (Spec& s : Specs({.layers = layers})) out.push_back(std::move(s.name));
  return out;
}

Status WriteLlamaCheckpoint(const std::string& dir, const LlamaCheckpoint& c) {
  SEAM_RETURN_IF_ERROR(CheckForWrite(c));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument(fmt::format("cannot create {}: {}", dir, ec.message()));

  const std::string config_path = (fs::path(dir) / "config.json").string();
  {
    std::ofstream out(config_path, std::ios::binary | std::ios::trunc);
    out << ConfigJson(c).dump(2) << "\n";
    out.close();
    if (!out) return InvalidArgument(fmt::format("cannot write {}", config_path));
  }

  std::vector<StTensor> tensors;
  const StDtype dtype = c.dtype == Dtype::kBf16 ? StDtype::kBf16 : StDtype::kF32;
  for (const Spec& s : Specs(SizesOf(c))) {
    const Tensor& t = c.weights.at(s.name);
    tensors.push_back({.name = s.name, .dtype = dtype, .shape = s.shape, .floats = {t.data(), t.data() + t.size()}});
  }
  return WriteSafetensors((fs::path(dir) / "model.safetensors").string(), tensors, {{"format", "pt"}});
}

namespace {

// Every weight present (lm_head may be tied), float, of its shape and of
// one dtype, and nothing else: the checkpoint's dtype.
Expected<Dtype> CheckTensors(const CheckpointTensors& tensors, const std::vector<Spec>& specs, bool tied, int layers) {
  std::set<std::string> names;
  const StTensorInfo* first_f32 = nullptr;
  const StTensorInfo* first_bf16 = nullptr;
  for (const Spec& s : specs) {
    names.insert(s.name);
    const StTensorInfo* t = tensors.Find(s.name);
    if (t == nullptr) {
      if (s.name == "lm_head.weight" && tied) continue;
      return Malformed(fmt::format("{}: missing tensor '{}'{}", tensors.source(), s.name,
                                   s.name == "lm_head.weight" ? " (tie_word_embeddings is false)" : ""));
    }
    const std::string& file = tensors.FileOf(s.name);
    if (t->dtype != StDtype::kF32 && t->dtype != StDtype::kBf16) {
      return Malformed(fmt::format("{}: tensor '{}' has dtype {}; expected F32 or BF16", file, s.name, Name(t->dtype)));
    }
    if (t->shape != s.shape) {
      return Malformed(fmt::format("{}: tensor '{}' has shape {}; expected {}", file, s.name, ShapeText(t->shape),
                                   ShapeText(s.shape)));
    }
    if (t->dtype == StDtype::kF32 && first_f32 == nullptr) first_f32 = t;
    if (t->dtype == StDtype::kBf16 && first_bf16 == nullptr) first_bf16 = t;
  }
  for (const StTensorInfo& t : tensors.tensors()) {
    if (!names.contains(t.name)) {
      return Malformed(fmt::format("{}: unexpected tensor '{}' (not a weight of a {}-layer Llama)",
                                   tensors.FileOf(t.name), t.name, layers));
    }
  }
  if (first_f32 != nullptr && first_bf16 != nullptr) {
    return Malformed(fmt::format("{}: tensor '{}' is F32 but '{}' is BF16; every weight must have one dtype",
                                 tensors.source(), first_f32->name, first_bf16->name));
  }
  return first_bf16 != nullptr ? Dtype::kBf16 : Dtype::kF32;
}

}  // namespace

Expected<LlamaCheckpoint> ReadLlamaCheckpoint(const std::string& dir) {
  const std::string config_path = (fs::path(dir) / "config.json").string();
  Expected<std::string> text = ReadFileAtMost(config_path, kMaxConfigBytes);
  if (!text) return text.error();
  ConfigFacts facts;
  try {
    facts = ReadConfig(*text, config_path);
  } catch (const Failure& e) {
    return e.error();
  }
  LlamaCheckpoint c = std::move(facts.c);

  Expected<CheckpointTensors> read = CheckpointTensors::Open(dir);
  if (!read) return read.error();
  const CheckpointTensors& tensors = *read;
  // Nine tensors a layer: a config that declares more layers than the files
  // could hold is refused before any list of them is built.
  const size_t held = tensors.tensors().size();
  if (static_cast<int64_t>(c.layers) * 9 + 2 > static_cast<int64_t>(held) + 1) {
    return Malformed(fmt::format("{}: config.json declares {} layers, 9 tensors each, but {} holds {} tensors", dir,
                                 c.layers, tensors.source(), held));
  }
  const std::vector<Spec> specs = Specs(SizesOf(c));
  Expected<Dtype> dtype = CheckTensors(tensors, specs, facts.tied, c.layers);
  if (!dtype) return dtype.error();
  c.dtype = *dtype;
  // One tensor decoded at a time: the checkpoint's values are held once.
  for (const Spec& s : specs) {
    if (tensors.Find(s.name) == nullptr) continue;  // a tied lm_head
    const int rows = s.shape.size() == 1 ? 1 : static_cast<int>(s.shape[0]);
    const int cols = static_cast<int>(s.shape.back());
    c.weights.emplace(s.name, Tensor(rows, cols, std::move(tensors.Read(s.name).floats)));
  }
  const std::string& st_path = tensors.source();
  if (facts.tied) {
    const Tensor& embed = c.weights.at("model.embed_tokens.weight");
    auto head = c.weights.find("lm_head.weight");
    if (head == c.weights.end()) {
      c.weights.emplace("lm_head.weight", embed);
    } else if (!(head->second == embed)) {
      return Malformed(fmt::format(
          "{}: lm_head.weight differs from model.embed_tokens.weight but config.json ties them (tie_word_embeddings)",
          st_path));
    }
  }
  return c;
}

}  // namespace seam

// A model's config.json as transformers reads its model_type: the inverse of
// the importer (stack/import_*.cc). Each writer states every key its
// importer reads, so the file describes exactly the model that ran; the
// round trip (import the written config, compare) is checked before a file
// is written.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/hf_checkpoint_internal.h"
#include "seam/hf_config.h"
#include "stack/hf_reader.h"

namespace seam {
namespace {

using ordered_json = nlohmann::ordered_json;

// The stages of each layer, as declared.
std::vector<std::vector<StageDecl>> Layers(const Model& m) {
  std::vector<std::vector<StageDecl>> out(static_cast<size_t>(m.num_layers));
  for (const StageRef& s : StagesOf(m, 0, m.num_layers)) out[static_cast<size_t>(s.layer)].push_back(s.decl);
  return out;
}

[[noreturn]] void Cannot(const Model& m, const std::string& why) {
  throw Failure(InvalidArgument(
      fmt::format("model '{}' cannot be written as a Hugging Face {} config: {}", m.name, m.hf_type, why)));
}

void Common(ordered_json& j, const Model& m, const char* architecture, const char* eps_key) {
  const ModelDims& d = *m.dims;
  j["architectures"] = ordered_json::array({architecture});
  j["model_type"] = m.hf_type;
  j["hidden_size"] = m.hidden;
  j["num_hidden_layers"] = m.num_layers;
  j["vocab_size"] = d.vocab;
  j[eps_key] = d.rms_eps;
  // YaRN's factor is max_position_embeddings / original in older
  // transformers releases: the two agree only when written so.
  j["max_position_embeddings"] =
      d.yarn.factor > 0 ? static_cast<int64_t>(std::llround(d.yarn.factor * d.yarn.original_positions)) : 4096;
  j["tie_word_embeddings"] = false;
}

void Rope(ordered_json& j, const ModelDims& d) {
  j["rope_theta"] = d.rope_theta;
  if (d.rope_scaling.factor > 0) {
    const RopeScaling& sc = d.rope_scaling;
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", sc.factor},
                         {"low_freq_factor", sc.low_freq_factor},
                         {"high_freq_factor", sc.high_freq_factor},
                         {"original_max_position_embeddings", sc.original_positions}};
  } else if (d.yarn.factor > 0) {
    const YarnScaling& y = d.yarn;
    j["rope_scaling"] = {{"rope_type", "yarn"},      {"type", "yarn"},
                         {"factor", y.factor},       {"original_max_position_embeddings", y.original_positions},
                         {"beta_fast", y.beta_fast}, {"beta_slow", y.beta_slow},
                         {"truncate", y.truncate}};
    // Zero is "not given" for these, as transformers reads them.
    for (const auto& [key, v] : {std::pair{"mscale", y.mscale}, std::pair{"mscale_all_dim", y.mscale_all_dim},
                                 std::pair{"attention_factor", y.attention_factor}}) {
      if (v != 0) j["rope_scaling"][key] = v;
    }
  } else {
    j["rope_scaling"] = nullptr;
  }
  if (d.rope_fraction != 1.0) j["partial_rotary_factor"] = d.rope_fraction;
}

void Gqa(ordered_json& j, const ModelDims& d) {
  j["num_attention_heads"] = d.heads;
  j["num_key_value_heads"] = d.kv_heads;
  j["head_dim"] = d.head_dim;
}

// Experts per token, from the model's MoE stages; a model cut before its
// first MoE does not say, and any valid count describes it.
int TopK(const Model& m) {
  for (const auto& layer : Layers(m)) {
    for (const StageDecl& s : layer) {
      if (s.kind == StageKind::kSparseFfn) return s.top_k;
    }
  }
  return 1;
}

// ---- one writer per model_type ----

void Llama(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "LlamaForCausalLM", "rms_norm_eps");
  Gqa(j, d);
  j["intermediate_size"] = d.intermediate;
  Rope(j, d);
  j["hidden_act"] = "silu";
  j["attention_bias"] = false;
  j["mlp_bias"] = false;
}

void Qwen3(ordered_json& j, const Model& m) {
  Llama(j, m);
  j["architectures"] = ordered_json::array({"Qwen3ForCausalLM"});
  j.erase("mlp_bias");
}

void Qwen3Moe(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "Qwen3MoeForCausalLM", "rms_norm_eps");
  Gqa(j, d);
  Rope(j, d);
  j["hidden_act"] = "silu";
  j["attention_bias"] = false;
  if (d.intermediate > 0) j["intermediate_size"] = d.intermediate;
  j["num_experts"] = d.experts;
  j["num_experts_per_tok"] = TopK(m);
  j["moe_intermediate_size"] = d.moe_intermediate;
  j["norm_topk_prob"] = d.renormalize;
  j["decoder_sparse_step"] = 1;
  ordered_json dense = ordered_json::array();
  const auto layers = Layers(m);
  for (size_t l = 0; l < layers.size(); ++l) {
    if (layers[l][1].kind == StageKind::kDenseFfn) dense.push_back(l);
  }
  j["mlp_only_layers"] = dense;
}

void GptOss(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "GptOssForCausalLM", "rms_norm_eps");
  Gqa(j, d);
  Rope(j, d);
  // transformers 5 reads a null rope_scaling of GPT-OSS as its YaRN default.
  if (j["rope_scaling"].is_null()) j["rope_scaling"] = {{"rope_type", "default"}};
  j["attention_bias"] = d.qkv_bias;
  j["num_local_experts"] = d.experts;
  j["num_experts_per_tok"] = TopK(m);
  j["experts_per_token"] = TopK(m);
  j["intermediate_size"] = d.moe_intermediate;
  j["swiglu_limit"] = d.swiglu_limit;
  ordered_json types = ordered_json::array();
  int window = 0;
  for (const auto& layer : Layers(m)) {
    const int w = layer[0].window;
    if (w > 0 && window > 0 && w != window) Cannot(m, "its sliding windows differ by layer");
    if (w > 0) window = w;
    types.push_back(w > 0 ? "sliding_attention" : "full_attention");
  }
  j["layer_types"] = types;
  j["sliding_window"] = window > 0 ? ordered_json(window) : ordered_json(nullptr);
}

// Leading dense layers, then a MoE on every layer: what first_k_dense_replace
// and moe_layer_freq 1 say.
int FirstDense(const Model& m) {
  const auto layers = Layers(m);
  size_t first = 0;
  while (first < layers.size() && layers[first][1].kind == StageKind::kDenseFfn) ++first;
  for (size_t l = first; l < layers.size(); ++l) {
    if (layers[l][1].kind != StageKind::kSparseFfn) Cannot(m, fmt::format("layer {} is dense after a MoE", l));
  }
  return static_cast<int>(first);
}

void Deepseek(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  const bool v3 = m.hf_type != "deepseek_v2";
  Common(j, m, v3 ? "DeepseekV3ForCausalLM" : "DeepseekV2ForCausalLM", "rms_norm_eps");
  j["num_attention_heads"] = d.heads;
  j["num_key_value_heads"] = d.heads;
  j["q_lora_rank"] = d.mla.q_lora > 0 ? ordered_json(d.mla.q_lora) : ordered_json(nullptr);
  j["kv_lora_rank"] = d.mla.kv_lora;
  j["qk_nope_head_dim"] = d.mla.qk_nope;
  j["qk_rope_head_dim"] = d.mla.qk_rope;
  j["v_head_dim"] = d.mla.v;
  Rope(j, d);
  if (v3) j["rope_interleave"] = d.rope_pairing == RopePairing::kInterleaved;
  if (!v3 && d.rope_pairing != RopePairing::kInterleaved) Cannot(m, "DeepSeek-V2 pairs rope dims (2i, 2i+1)");
  j["hidden_act"] = "silu";
  j["attention_bias"] = false;
  j["intermediate_size"] = d.intermediate;
  j["first_k_dense_replace"] = FirstDense(m);
  j["moe_layer_freq"] = 1;
  if (d.experts == 0) {
    j["n_routed_experts"] = nullptr;
    return;
  }
  j["n_routed_experts"] = d.experts;
  j["num_experts_per_tok"] = TopK(m);
  j["moe_intermediate_size"] = d.moe_intermediate;
  if (d.shared_intermediate % d.moe_intermediate != 0) {
    Cannot(m, "its shared expert width is not a whole number of experts");
  }
  j["n_shared_experts"] = d.shared_intermediate / d.moe_intermediate;
  j["n_group"] = d.expert_groups.count;
  j["topk_group"] = d.expert_groups.keep;
  if (v3) {
    j["scoring_func"] = "sigmoid";
    j["topk_method"] = "noaux_tc";
    j["norm_topk_prob"] = d.renormalize;
    j["routed_scaling_factor"] = d.routed_scaling;
  } else {
    // transformers' DeepseekV2Moe scales and never renormalises.
    if (d.renormalize) Cannot(m, "DeepSeek-V2 does not renormalise its top-k weights");
    j["scoring_func"] = "softmax";
    j["topk_method"] = d.expert_groups.count > 1 ? "group_limited_greedy" : "greedy";
    j["norm_topk_prob"] = false;
    j["routed_scaling_factor"] = d.routed_scaling;
  }
}

void NemotronH(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "NemotronHForCausalLM", "layer_norm_epsilon");
  std::string pattern;
  std::vector<int> widths;
  for (const auto& layer : Layers(m)) {
    const StageDecl& s = layer[0];
    switch (s.kind) {
      case StageKind::kMixer: pattern += 'M'; break;
      case StageKind::kAttention: pattern += '*'; break;
      case StageKind::kDenseFfn:
        pattern += '-';
        widths.push_back(FfnWidthOf(s, d));
        break;
      case StageKind::kSparseFfn: pattern += 'E'; break;
      default: Cannot(m, fmt::format("it has a {} stage", Name(s.kind)));
    }
  }
  j["hybrid_override_pattern"] = pattern;
  if (d.heads > 0) {
    j["num_attention_heads"] = d.heads;
    j["num_key_value_heads"] = d.kv_heads;
    j["head_dim"] = d.head_dim;
    j["attention_bias"] = false;
  }
  bool same_widths = true;
  for (int w : widths) same_widths = same_widths && w == d.intermediate;
  if (!widths.empty() && !same_widths) {
    j["intermediate_size"] = widths;
  } else if (d.intermediate > 0) {
    j["intermediate_size"] = d.intermediate;
  }
  j["mlp_hidden_act"] = "relu2";
  if (d.mixer_heads > 0) {
    j["mamba_num_heads"] = d.mixer_heads;
    j["mamba_head_dim"] = d.mixer_head_dim;
    j["ssm_state_size"] = d.mixer_state;
    j["n_groups"] = d.mixer_groups;
    j["conv_kernel"] = d.mixer_conv;
    j["mamba_hidden_act"] = "silu";
    j["use_conv_bias"] = true;
    j["use_bias"] = false;
    // [min, max]; an unbounded max is Python's bare Infinity (see QuoteInfinity).
    j["time_step_limit"] = {d.mixer_dt_min,
                            std::isinf(d.mixer_dt_max) ? ordered_json(kInfinityMark) : ordered_json(d.mixer_dt_max)};
  }
  if (d.experts > 0) {
    j["n_routed_experts"] = d.experts;
    j["num_experts_per_tok"] = TopK(m);
    j["moe_intermediate_size"] = d.moe_intermediate;
    j["moe_shared_expert_intermediate_size"] = d.shared_intermediate;
    j["n_shared_experts"] = 1;
    j["routed_scaling_factor"] = d.routed_scaling;
    j["norm_topk_prob"] = d.renormalize;
    j["n_group"] = d.expert_groups.count;
    j["topk_group"] = d.expert_groups.keep;
  }
}

void Qwen3Next(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "Qwen3NextForCausalLM", "rms_norm_eps");
  Gqa(j, d);
  Rope(j, d);
  j["partial_rotary_factor"] = d.rope_fraction;  // Qwen3NextConfig's default is 0.25
  j["hidden_act"] = "silu";
  j["linear_num_value_heads"] = d.mixer_heads;
  j["linear_value_head_dim"] = d.mixer_head_dim;
  j["linear_key_head_dim"] = d.mixer_state;
  j["linear_num_key_heads"] = d.mixer_groups;
  j["linear_conv_kernel_dim"] = d.mixer_conv;
  j["num_experts"] = d.experts;
  j["num_experts_per_tok"] = TopK(m);
  j["moe_intermediate_size"] = d.moe_intermediate;
  j["shared_expert_intermediate_size"] = d.shared_intermediate;
  j["norm_topk_prob"] = d.renormalize;
  if (d.intermediate > 0) j["intermediate_size"] = d.intermediate;
  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = ordered_json::array();
  const auto layers = Layers(m);
  int every = 0;
  ordered_json types = ordered_json::array();
  for (size_t l = 0; l < layers.size(); ++l) {
    const bool full = layers[l][0].kind == StageKind::kAttention;
    if (full && every == 0) every = static_cast<int>(l) + 1;
    types.push_back(full ? "full_attention" : "linear_attention");
  }
  j["full_attention_interval"] = every > 0 ? every : m.num_layers + 1;
  j["layer_types"] = types;
}

// The code of a Nemotron-NAS checkpoint is its own (DeciLM, loaded with
// trust_remote_code): the dump names the published checkpoint's, which reads
// block_configs with ffn_mult as written here.
constexpr const char* kDeciLmRepo = "nvidia/Llama-3_3-Nemotron-Super-49B-v1";

void NemotronNas(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "DeciLMForCausalLM", "rms_norm_eps");
  j["auto_map"] = {{"AutoConfig", fmt::format("{}--configuration_decilm.DeciLMConfig", kDeciLmRepo)},
                   {"AutoModelForCausalLM", fmt::format("{}--modeling_decilm.DeciLMForCausalLM", kDeciLmRepo)}};
  j["num_attention_heads"] = d.heads;
  // DeciLM's heads are hidden_size / num_attention_heads wide (head_dim is
  // not read); its KV heads and FFN widths are per block only.
  if (d.head_dim * d.heads != m.hidden) {
    Cannot(m, fmt::format("its head width {} is not hidden_size / num_attention_heads", d.head_dim));
  }
  Rope(j, d);
  j["hidden_act"] = "silu";
  ordered_json blocks = ordered_json::array();
  for (const auto& layer : Layers(m)) {
    auto part = [](const StageDecl& s) {
      return ordered_json{{"no_op", s.kind == StageKind::kNoOp}, {"replace_with_linear", s.kind == StageKind::kLinear}};
    };
    ordered_json attention = part(layer[0]);
    if (layer[0].kind == StageKind::kAttention) {
      const int kv = layer[0].kv_heads > 0 ? layer[0].kv_heads : d.kv_heads;
      attention["n_heads_in_group"] = d.heads / kv;
    }
    ordered_json ffn = part(layer[1]);
    if (layer[1].kind == StageKind::kDenseFfn) {
      // DeciLM's width is round_up(int(2 * ffn_mult * hidden / 3), 256): a
      // multiple of 256 is written as the mult that gives it exactly.
      const int width = FfnWidthOf(layer[1], d);
      if (width % 256 != 0) Cannot(m, fmt::format("its FFN width {} is not a multiple of 256", width));
      ffn["ffn_mult"] = 1.5 * width / m.hidden;
    }
    blocks.push_back({{"attention", attention}, {"ffn", ffn}});
  }
  j["block_configs"] = blocks;
}

void Zaya(ordered_json& j, const Model& m) {
  const ModelDims& d = *m.dims;
  Common(j, m, "ZayaForCausalLM", "norm_epsilon");
  j["cca_num_q_heads"] = d.heads;
  j["num_attention_heads"] = d.heads;
  j["num_query_groups"] = d.kv_heads;
  j["kv_channels"] = d.head_dim;
  Rope(j, d);
  j["num_experts"] = d.experts;
  j["moe_router_topk"] = TopK(m);
  j["ffn_hidden_size"] = 2 * d.moe_intermediate;
  j["zaya_use_mod"] = d.skip_expert;
}

struct Writer {
  const char* model_type;
  std::function<void(ordered_json&, const Model&)> write;
};

const std::vector<Writer>& Writers() {
  static const std::vector<Writer> writers = {
      {"llama", Llama},
      {"qwen3", Qwen3},
      {"qwen3_moe", Qwen3Moe},
      {"gpt_oss", GptOss},
      {"deepseek_v2", Deepseek},
      {"deepseek_v3", Deepseek},
      {"kimi_k2", Deepseek},
      {"nemotron_h", NemotronH},
      {"qwen3_next", Qwen3Next},
      {"nemotron-nas", NemotronNas},
      {"zaya", Zaya},
  };
  return writers;
}

// Where the imported model differs from the one that ran; empty when none.
std::string Mismatch(const Model& ran, const Model& read) {
  if (ran.hidden != read.hidden || ran.num_layers != read.num_layers || ran.residual_streams != read.residual_streams) {
    return "its sizes";
  }
  if (!(*ran.dims == *read.dims)) return "its dims";
  const std::vector<StageRef> a = StagesOf(ran, 0, ran.num_layers);
  const std::vector<StageRef> b = StagesOf(read, 0, read.num_layers);
  if (a.size() != b.size()) return "its stage count";
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i].decl == b[i].decl)) return fmt::format("stage {} (layer {})", i, a[i].layer);
  }
  return "";
}

}  // namespace

bool HasHfForm(const Model& m) {
  for (const Writer& w : Writers()) {
    if (m.hf_type == w.model_type) return true;
  }
  return false;
}

Expected<std::string> HfConfigText(const Model& m, Dtype dtype) {
  if (!m.dims) return InvalidArgument(fmt::format("model '{}' has no sizes to write", m.name));
  const Writer* writer = nullptr;
  for (const Writer& w : Writers()) {
    if (m.hf_type == w.model_type) writer = &w;
  }
  if (writer == nullptr) {
    return InvalidArgument(fmt::format("model '{}' has no Hugging Face form (model_type '{}')", m.name, m.hf_type));
  }
  ordered_json j;
  try {
    writer->write(j, m);
  } catch (const Failure& e) {
    return e.error();
  }
  j["torch_dtype"] = dtype == Dtype::kBf16 ? "bfloat16" : "float32";
  std::string text = QuoteInfinity(j.dump(2)) + "\n";
  // The file must describe the model that ran: read it back and compare.
  Expected<Model> back = ModelFromHfConfig(text, "the written config.json");
  if (!back) {
    return InvalidArgument(
        fmt::format("model '{}': the config.json seam wrote does not read back: {}", m.name, back.error().message));
  }
  if (const std::string where = Mismatch(m, *back); !where.empty()) {
    return InvalidArgument(fmt::format("model '{}' cannot be written as a Hugging Face {} config: read back, {} differ",
                                       m.name, m.hf_type, where));
  }
  return text;
}

std::string QuoteInfinity(const std::string& text) {
  const std::string mark = fmt::format("\"{}\"", kInfinityMark);
  std::string out = text;
  for (size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at)) {
    out.replace(at, mark.size(), "Infinity");
  }
  return out;
}

}  // namespace seam

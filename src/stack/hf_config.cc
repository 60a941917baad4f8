// Hugging Face config.json -> a seam model at its real size. Every family is
// built through its builder in seam/families.h; this file only reads keys,
// checks them against each other and maps them to ModelDims and layouts.
#include "seam/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "seam/families.h"
#include "seam/files.h"

namespace seam {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxSize = 10'000'000;   // any width, head count, expert count, vocabulary
constexpr int64_t kMaxLayers = 100'000;    // num_hidden_layers
constexpr int64_t kMaxProduct = int64_t{1} << 30;  // heads x head_dim and the like

// Thrown inside this file only; ModelFromHfConfig turns it into its Error.
struct ConfigError {
  Error error;
};

// Python's json writes non-finite floats as bare NaN / Infinity / -Infinity
// (nemotron-h's time_step_limit has one); nlohmann reads strict JSON. Where a
// value may start (not in a string, not as an object key), each becomes a
// JSON string of the same word.
std::string QuoteNonFinite(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::vector<char> open;  // the enclosing '{' and '['
  char last = 0;           // the last character outside strings and whitespace
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    const bool in_list = !open.empty() && open.back() == '[';
    const bool value_here = last == 0 || last == ':' || (in_list && (last == '[' || last == ','));
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (value_here && text.substr(i, word.size()) == word) {
        out += fmt::format("\"{}\"", word);
        i += word.size() - 1;
        last = '"';
        replaced = true;
        break;
      }
    }
    if (replaced) continue;
    out += c;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') open.push_back(c);
    if ((c == '}' || c == ']') && !open.empty()) open.pop_back();
    last = c;
  }
  return out;
}

// What a key holds, for error messages: short, never a whole subtree.
std::string Found(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      const bool cut = s.size() > 40;
      if (cut) s.resize(40);
      return json(s).dump(-1, ' ', false, json::error_handler_t::replace) + (cut ? "..." : "");
    }
    default: return v.dump();
  }
}

// Reads the keys of one JSON object; every error names the source and the
// key's path ("block_configs[3].ffn.ffn_mult").
class Reader {
 public:
  Reader(const json& j, const std::string& source, std::string prefix = "")
      : j_(j), source_(source), prefix_(std::move(prefix)) {}

  [[noreturn]] void Fail(const std::string& why) const {
    throw ConfigError{Malformed(fmt::format("{}: {}", source_, why))};
  }
  std::string Path(std::string_view key) const { return prefix_ + std::string(key); }

  // Present and not null.
  const json* Given(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& Need(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) Fail(fmt::format("missing key '{}'", Path(key)));
    return *it;
  }

  int Int(const char* key, int64_t lo, int64_t hi) const { return ToInt(Path(key), Need(key), lo, hi); }
  int IntOr(const char* key, int64_t fallback, int64_t lo, int64_t hi) const {
    const json* v = Given(key);
    return v == nullptr ? static_cast<int>(fallback) : ToInt(Path(key), *v, lo, hi);
  }
  int ToInt(const std::string& path, const json& v, int64_t lo, int64_t hi) const {
    bool ok = false;
    int64_t n = 0;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      ok = u <= static_cast<uint64_t>(hi);
      n = ok ? static_cast<int64_t>(u) : 0;
    } else if (v.is_number_integer()) {
      n = v.get<int64_t>();
      ok = true;
    } else if (v.is_number_float()) {  // 8192.0: an integer written as a float
      const double d = v.get<double>();
      ok = std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(lo) && d <= static_cast<double>(hi);
      n = ok ? static_cast<int64_t>(d) : 0;
    }
    if (!ok || n < lo || n > hi) {
      Fail(fmt::format("key '{}' must be an integer from {} to {}; found {}", path, lo, hi, Found(v)));
    }
    return static_cast<int>(n);
  }

  // A finite number with lo < x <= hi (or lo <= x when `lo_inclusive`).
  double Number(const char* key, double lo, double hi, bool lo_inclusive = false) const {
    return ToNumber(Path(key), Need(key), lo, hi, lo_inclusive);
  }
  double NumberOr(const char* key, double fallback, double lo, double hi) const {
    const json* v = Given(key);
    return v == nullptr ? fallback : ToNumber(Path(key), *v, lo, hi, false);
  }
  double ToNumber(const std::string& path, const json& v, double lo, double hi, bool lo_inclusive) const {
    const double d = v.is_number() ? v.get<double>() : std::nan("");
    const bool ok = std::isfinite(d) && (lo_inclusive ? d >= lo : d > lo) && d <= hi;
    if (!ok) {
      Fail(fmt::format("key '{}' must be a number {} {} and at most {}; found {}", path,
                       lo_inclusive ? "from" : "above", lo, hi, Found(v)));
    }
    return d;
  }

  bool BoolOr(const char* key, bool fallback) const {
    const json* v = Given(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) Fail(fmt::format("key '{}' must be true or false; found {}", Path(key), Found(*v)));
    return v->get<bool>();
  }

  std::string String(const char* key) const { return ToString(Path(key), Need(key)); }
  std::string StringOr(const char* key, const std::string& fallback) const {
    const json* v = Given(key);
    return v == nullptr ? fallback : ToString(Path(key), *v);
  }
  std::string ToString(const std::string& path, const json& v) const {
    if (!v.is_string()) Fail(fmt::format("key '{}' must be a string; found {}", path, Found(v)));
    return v.get<std::string>();
  }

  const json& List(const char* key) const { return ToList(Path(key), Need(key)); }
  const json& ToList(const std::string& path, const json& v) const {
    if (!v.is_array()) Fail(fmt::format("key '{}' must be a list; found {}", path, Found(v)));
    return v;
  }

  // The object under `key`, read with the key's path as prefix.
  Reader Object(const char* key) const { return ToObject(Path(key), Need(key)); }
  Reader ToObject(const std::string& path, const json& v) const {
    if (!v.is_object()) Fail(fmt::format("key '{}' must be an object; found {}", path, Found(v)));
    return Reader(v, source_, path + ".");
  }

 private:
  const json& j_;
  const std::string& source_;
  std::string prefix_;
};

// ---- shared parts of the families ----

struct Common {
  int hidden = 0;
  int layers = 0;
  ModelDims dims;
};

Common ReadCommon(const Reader& r, const char* eps_key, double eps_default) {
  Common c;
  c.hidden = r.Int("hidden_size", 1, kMaxSize);
  c.layers = r.Int("num_hidden_layers", 1, kMaxLayers);
  c.dims.vocab = r.Int("vocab_size", 1, kMaxSize);
  c.dims.rms_eps = r.NumberOr(eps_key, eps_default, 0, 1);
  return c;
}

void CheckProduct(const Reader& r, const char* what, int64_t a, int64_t b) {
  if (a * b > kMaxProduct) r.Fail(fmt::format("{} = {} * {} is more than {}", what, a, b, kMaxProduct));
}

// Llama 3's scaling is the one that changes the numbers seam computes; other
// types (yarn, linear, dynamic) change no communication and are accepted.
RopeScaling ReadRopeScaling(const Reader& r) {
  if (r.Given("rope_scaling") == nullptr) return {};
  const Reader s = r.Object("rope_scaling");
  const std::string type = s.Given("rope_type") != nullptr ? s.String("rope_type") : s.StringOr("type", "default");
  if (type != "llama3") return {};
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}) {
    if (s.Given(key) == nullptr) {
      r.Fail(fmt::format("missing key '{}' (a llama3 rope_scaling needs factor, low_freq_factor, high_freq_factor "
                         "and original_max_position_embeddings)",
                         s.Path(key)));
    }
  }
  RopeScaling out;
  out.factor = s.Number("factor", 0, 1e6);
  out.low_freq_factor = s.Number("low_freq_factor", 0, 1e6);
  out.high_freq_factor = s.Number("high_freq_factor", 0, 1e6);
  out.original_positions = s.Int("original_max_position_embeddings", 1, kMaxSize * 100);
  if (out.high_freq_factor <= out.low_freq_factor) {
    r.Fail(fmt::format("rope_scaling.high_freq_factor {} must be above rope_scaling.low_freq_factor {}",
                       out.high_freq_factor, out.low_freq_factor));
  }
  return out;
}

void ReadRope(const Reader& r, ModelDims& d, double theta_default = 10000.0) {
  d.rope_theta = r.NumberOr("rope_theta", theta_default, 0, 1e12);
  d.rope_scaling = ReadRopeScaling(r);
}

// Grouped-query attention: heads, key/value heads and the head width.
void ReadAttention(const Reader& r, int hidden, ModelDims& d, const char* heads_key = "num_attention_heads",
                   const char* kv_key = "num_key_value_heads",
                   std::initializer_list<const char*> head_dim_keys = {"head_dim"}) {
  d.heads = r.Int(heads_key, 1, kMaxSize);
  d.kv_heads = r.IntOr(kv_key, d.heads, 1, kMaxSize);
  if (d.heads % d.kv_heads != 0) {
    r.Fail(fmt::format("{} {} is not divisible by {} {}", heads_key, d.heads, kv_key, d.kv_heads));
  }
  d.head_dim = 0;
  for (const char* key : head_dim_keys) {
    if (r.Given(key) != nullptr) {
      d.head_dim = r.Int(key, 1, kMaxSize);
      break;
    }
  }
  if (d.head_dim == 0) {
    if (hidden % d.heads != 0) {
      r.Fail(fmt::format("{} is not given and hidden_size {} is not divisible by {} {}", *head_dim_keys.begin(),
                         hidden, heads_key, d.heads));
    }
    d.head_dim = hidden / d.heads;
  }
  CheckProduct(r, fmt::format("{} * {}", heads_key, *head_dim_keys.begin()).c_str(), d.heads, d.head_dim);
}

// Routed experts; returns top_k.
int ReadExperts(const Reader& r, ModelDims& d, const char* experts_key, const char* top_k_key, const char* width_key) {
  d.experts = r.Int(experts_key, 1, kMaxSize);
  const int top_k = r.Int(top_k_key, 1, kMaxSize);
  if (top_k > d.experts) r.Fail(fmt::format("{} {} is more than {} {}", top_k_key, top_k, experts_key, d.experts));
  d.moe_intermediate = r.Int(width_key, 1, kMaxSize);
  return top_k;
}

RouterScoring ReadScoring(const Reader& r, const std::string& fallback, bool sqrt_softplus) {
  const std::string s = r.StringOr("scoring_func", fallback);
  if (s == "softmax") return RouterScoring::kSoftmax;
  if (s == "sigmoid") return RouterScoring::kSigmoid;
  if (s == "sqrtsoftplus" && sqrt_softplus) return RouterScoring::kSqrtSoftplus;
  r.Fail(fmt::format("unknown scoring_func {}; known: softmax, sigmoid{}", Found(json(s)),
                     sqrt_softplus ? ", sqrtsoftplus" : ""));
}

int SharedWidth(const Reader& r, int shared_experts, int width) {
  const int64_t w = int64_t{shared_experts} * width;
  if (w > kMaxSize) {
    r.Fail(fmt::format("the shared expert width {} * {} = {} is more than {}", shared_experts, width, w, kMaxSize));
  }
  return static_cast<int>(w);
}

// layer_types, when given: one string per layer (empty when absent).
std::vector<std::string> LayerTypes(const Reader& r, int layers) {
  std::vector<std::string> out;
  const json* types = r.Given("layer_types");
  if (types == nullptr) return out;
  r.ToList("layer_types", *types);
  if (types->size() != static_cast<size_t>(layers)) {
    r.Fail(fmt::format("layer_types has {} entries but num_hidden_layers is {}", types->size(), layers));
  }
  for (size_t l = 0; l < types->size(); ++l) out.push_back(r.ToString(fmt::format("layer_types[{}]", l), (*types)[l]));
  return out;
}

// ---- the families ----

Model Dense(const Reader& r, const std::string& name, bool qk_norm) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d);
  d.qk_norm = qk_norm;
  d.intermediate = r.Int("intermediate_size", 1, kMaxSize);
  return DenseDecoderModel(name, c.layers, c.hidden, d);
}

Model Qwen3Moe(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d);
  d.qk_norm = true;
  const int top_k = ReadExperts(r, d, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
  d.renormalize = r.BoolOr("norm_topk_prob", false);
  const int step = r.IntOr("decoder_sparse_step", 1, 1, kMaxLayers);
  std::vector<bool> sparse(static_cast<size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) sparse[static_cast<size_t>(l)] = (l + 1) % step == 0;
  if (const json* only = r.Given("mlp_only_layers"); only != nullptr) {
    r.ToList("mlp_only_layers", *only);
    for (size_t i = 0; i < only->size(); ++i) {
      sparse[static_cast<size_t>(r.ToInt(fmt::format("mlp_only_layers[{}]", i), (*only)[i], 0, c.layers - 1))] = false;
    }
  }
  const bool any_dense = std::find(sparse.begin(), sparse.end(), false) != sparse.end();
  d.intermediate = any_dense ? r.Int("intermediate_size", 1, kMaxSize) : r.IntOr("intermediate_size", 0, 1, kMaxSize);
  return MoeDecoderModel("qwen3-moe", c.layers, c.hidden, d, top_k,
                         {.sparse = [sparse](int l) { return sparse[static_cast<size_t>(l)]; }});
}

Model GptOss(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-5);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d, 150000.0);
  d.attention_sinks = true;
  d.qkv_bias = r.BoolOr("attention_bias", true);
  // Experts with biases and the clamped SwiGLU (the router has a bias too).
  d.moe_bias = true;
  d.activation = Activation::kClampedSwiGlu;
  d.swiglu_limit = r.NumberOr("swiglu_limit", 7.0, 0.0, 1e6);
  // transformers reads either spelling of top-k.
  const char* top_k_key = r.Given("num_experts_per_tok") != nullptr ? "num_experts_per_tok" : "experts_per_token";
  if (r.Given("num_experts_per_tok") == nullptr && r.Given("experts_per_token") == nullptr) {
    r.Fail("missing key 'num_experts_per_tok' (or 'experts_per_token')");
  }
  const int top_k = ReadExperts(r, d, "num_local_experts", top_k_key, "intermediate_size");
  if (r.Given("num_experts_per_tok") != nullptr && r.Given("experts_per_token") != nullptr) {
    const int other = r.Int("experts_per_token", 1, kMaxSize);
    if (other != top_k) r.Fail(fmt::format("num_experts_per_tok {} and experts_per_token {} disagree", top_k, other));
  }
  // transformers' default: sliding on even layers, full on odd.
  std::vector<bool> sliding(static_cast<size_t>(c.layers));
  for (int l = 0; l < c.layers; ++l) sliding[static_cast<size_t>(l)] = l % 2 == 0;
  const std::vector<std::string> types = LayerTypes(r, c.layers);
  for (size_t l = 0; l < types.size(); ++l) {
    const std::string& t = types[l];
    if (t != "sliding_attention" && t != "full_attention") {
      r.Fail(fmt::format("layer_types[{}] is {}; expected \"sliding_attention\" or \"full_attention\"", l,
                         Found(json(t))));
    }
    sliding[l] = t == "sliding_attention";
  }
  const bool any_sliding = std::find(sliding.begin(), sliding.end(), true) != sliding.end();
  const int window = any_sliding ? r.Int("sliding_window", 1, kMaxSize) : 0;
  return MoeDecoderModel("gpt-oss", c.layers, c.hidden, d, top_k,
                         {.window = [sliding, window](int l) { return sliding[static_cast<size_t>(l)] ? window : 0; },
                          .a2a = false});
}

// DeepSeek-V2/V3 and Kimi-K2: MLA and a MoE on every moe_layer_freq-th
// layer from first_k_dense_replace on.
Model Deepseek(const Reader& r, const std::string& name, bool v3) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  d.heads = r.Int("num_attention_heads", 1, kMaxSize);
  d.kv_heads = d.heads;  // MLA: num_key_value_heads is unused
  d.mla.q_lora = r.IntOr("q_lora_rank", 0, 0, kMaxSize);
  d.mla.kv_lora = r.Int("kv_lora_rank", 1, kMaxSize);
  d.mla.qk_nope = r.Int("qk_nope_head_dim", 1, kMaxSize);
  d.mla.qk_rope = r.Int("qk_rope_head_dim", 1, kMaxSize);
  d.mla.v = r.Int("v_head_dim", 1, kMaxSize);
  d.head_dim = d.mla.v;  // the attention output is heads x v_head_dim wide
  CheckProduct(r, "num_attention_heads * (qk_nope_head_dim + qk_rope_head_dim)", d.heads,
               int64_t{d.mla.qk_nope} + d.mla.qk_rope);
  CheckProduct(r, "num_attention_heads * (qk_nope_head_dim + v_head_dim)", d.heads, int64_t{d.mla.qk_nope} + d.mla.v);
  ReadRope(r, d);
  const int routed = r.IntOr("n_routed_experts", 0, 0, kMaxSize);  // null: a dense model
  const int first_dense = r.IntOr("first_k_dense_replace", 0, 0, kMaxLayers);
  const int freq = r.IntOr("moe_layer_freq", 1, 1, kMaxLayers);
  auto sparse = [routed, first_dense, freq](int l) { return routed > 0 && l >= first_dense && l % freq == 0; };
  bool any_dense = false;
  for (int l = 0; l < c.layers && !any_dense; ++l) any_dense = !sparse(l);
  d.intermediate = any_dense ? r.Int("intermediate_size", 1, kMaxSize) : r.IntOr("intermediate_size", 0, 1, kMaxSize);
  int top_k = 1;
  if (routed > 0) {
    top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
    d.shared_intermediate = SharedWidth(r, r.IntOr("n_shared_experts", 0, 0, kMaxSize), d.moe_intermediate);
    d.renormalize = r.BoolOr("norm_topk_prob", v3);
    d.scoring = ReadScoring(r, v3 ? "sigmoid" : "softmax", false);
    d.correction_bias = r.StringOr("topk_method", v3 ? "noaux_tc" : "greedy") == "noaux_tc";
    d.routed_scaling = r.NumberOr("routed_scaling_factor", v3 ? 2.5 : 1.0, 0, 1e6);
  }
  return MoeDecoderModel(name, c.layers, c.hidden, d, top_k, {.sparse = sparse});
}

Model NemotronH(const Reader& r) {
  Common c = ReadCommon(r, "layer_norm_epsilon", 1e-5);
  ModelDims& d = c.dims;
  const std::string pattern = r.String("hybrid_override_pattern");
  if (pattern.size() != static_cast<size_t>(c.layers)) {
    r.Fail(fmt::format("hybrid_override_pattern has {} characters but num_hidden_layers is {}", pattern.size(),
                       c.layers));
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (std::string_view("M*-E").find(pattern[i]) == std::string_view::npos) {
      r.Fail(fmt::format("hybrid_override_pattern has {} at position {}; use M (mamba mixer), * (attention), "
                         "- (dense MLP) or E (MoE)",
                         Found(json(std::string(1, pattern[i]))), i));
    }
  }
  auto has = [&pattern](char k) { return pattern.find(k) != std::string::npos; };
  d.rope = false;
  d.activation = Activation::kRelu2;
  if (has('*')) {
    ReadAttention(r, c.hidden, d, "num_attention_heads", "num_key_value_heads", {"attention_head_dim", "head_dim"});
  }
  if (has('M')) {
    d.mixer_heads = r.Int("mamba_num_heads", 1, kMaxSize);
    d.mixer_head_dim = r.Int("mamba_head_dim", 1, kMaxSize);
    d.mixer_state = r.Int("ssm_state_size", 1, kMaxSize);
    CheckProduct(r, "mamba_num_heads * mamba_head_dim", d.mixer_heads, d.mixer_head_dim);
    CheckProduct(r, "mamba_num_heads * ssm_state_size", d.mixer_heads, d.mixer_state);
  }
  // intermediate_size: one width, or one per '-' in pattern order.
  std::vector<int> widths;
  if (const json* w = has('-') ? &r.Need("intermediate_size") : r.Given("intermediate_size"); w != nullptr) {
    if (w->is_array()) {
      const auto mlps = static_cast<size_t>(std::count(pattern.begin(), pattern.end(), '-'));
      if (w->size() != mlps) {
        r.Fail(fmt::format("intermediate_size lists {} widths but hybrid_override_pattern has {} MLP layers ('-')",
                           w->size(), mlps));
      }
      for (size_t i = 0; i < w->size(); ++i) {
        widths.push_back(r.ToInt(fmt::format("intermediate_size[{}]", i), (*w)[i], 1, kMaxSize));
      }
      d.intermediate = widths.empty() ? 0 : widths.front();
    } else {
      d.intermediate = r.ToInt("intermediate_size", *w, 1, kMaxSize);
    }
  }
  int top_k = 1;
  if (has('E')) {
    top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
    int shared = r.IntOr("moe_shared_expert_intermediate_size", 0, 0, kMaxSize);
    if (const int n = r.IntOr("n_shared_experts", 1, 0, kMaxSize); n > 1) shared = SharedWidth(r, n, shared);
    d.shared_intermediate = shared;
    d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
    d.renormalize = r.BoolOr("norm_topk_prob", true);
    d.scoring = RouterScoring::kSigmoid;
    d.correction_bias = true;
  }
  Expected<Model> m = HybridModel(has('E') ? "nemotron-3" : "nemotron-h", pattern, c.hidden, d, top_k, widths);
  if (!m) r.Fail(m.error().message);
  return *std::move(m);
}

Model Zaya(const Reader& r) {
  Common c = ReadCommon(r, "norm_epsilon", 1e-5);
  ModelDims& d = c.dims;
  // The public copies disagree on num_attention_heads (16 or 8); the CCA
  // query heads are what the weights have, so they win when given.
  const char* heads_key = r.Given("cca_num_q_heads") != nullptr ? "cca_num_q_heads" : "num_attention_heads";
  ReadAttention(r, c.hidden, d, heads_key, "num_query_groups", {"kv_channels"});
  ReadRope(r, d);
  d.rope_fraction = r.NumberOr("partial_rotary_factor", 1.0, 0, 1);
  const int top_k = ReadExperts(r, d, "num_experts", "moe_router_topk", "ffn_hidden_size");
  if (d.moe_intermediate % 2 != 0) {
    r.Fail(fmt::format("ffn_hidden_size {} is a merged gate and up projection, so it must be even",
                       d.moe_intermediate));
  }
  d.moe_intermediate /= 2;
  d.renormalize = false;  // the top-1 (or skip) expert keeps its softmax probability
  d.skip_expert = r.BoolOr("zaya_use_mod", false);
  return AlternatingModel("zaya1", c.layers, c.hidden, d, top_k);
}

Model Qwen3Next(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d);
  d.rope_fraction = r.NumberOr("partial_rotary_factor", 1.0, 0, 1);
  d.attention_gate = true;
  d.qk_norm = true;
  d.mixer_heads = r.Int("linear_num_value_heads", 1, kMaxSize);
  d.mixer_head_dim = r.Int("linear_value_head_dim", 1, kMaxSize);
  d.mixer_state = r.Int("linear_key_head_dim", 1, kMaxSize);
  CheckProduct(r, "linear_num_value_heads * linear_value_head_dim", d.mixer_heads, d.mixer_head_dim);
  CheckProduct(r, "linear_num_value_heads * linear_key_head_dim", d.mixer_heads, d.mixer_state);
  const int top_k = ReadExperts(r, d, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
  d.shared_intermediate = r.IntOr("shared_expert_intermediate_size", 0, 0, kMaxSize);
  d.renormalize = r.BoolOr("norm_topk_prob", true);
  d.intermediate = r.IntOr("intermediate_size", 0, 1, kMaxSize);
  // Every layer of seam's qwen3-next has a MoE.
  if (const int step = r.IntOr("decoder_sparse_step", 1, 1, kMaxLayers); step != 1 && c.layers > 1) {
    r.Fail(fmt::format("decoder_sparse_step {} makes some layers dense; seam's qwen3-next has a MoE in every layer",
                       step));
  }
  if (const json* only = r.Given("mlp_only_layers"); only != nullptr && !r.ToList("mlp_only_layers", *only).empty()) {
    r.Fail("mlp_only_layers is not empty; seam's qwen3-next has a MoE in every layer");
  }
  const int every = r.IntOr("full_attention_interval", 4, 1, kMaxLayers);
  const std::vector<std::string> types = LayerTypes(r, c.layers);
  for (size_t l = 0; l < types.size(); ++l) {
    const char* want = (l + 1) % static_cast<size_t>(every) == 0 ? "full_attention" : "linear_attention";
    if (types[l] != want) {
      r.Fail(fmt::format("layer_types[{}] is {} but full_attention_interval {} makes layer {} \"{}\"", l,
                         Found(json(types[l])), every, l, want));
    }
  }
  return MixerMoeModel("qwen3-next", c.layers, c.hidden, d, top_k, every);
}

// round_up(int(2 * ffn_mult * hidden / 3), 256), as DeciLM computes it.
int NasFfnWidth(const Reader& r, const std::string& path, double mult, int hidden) {
  const double raw = 2 * mult * hidden / 3;
  if (!(raw < static_cast<double>(kMaxSize))) {
    r.Fail(fmt::format("{} {} gives an FFN width above {}", path, mult, kMaxSize));
  }
  const auto n = static_cast<int64_t>(raw);
  if (n < 1) r.Fail(fmt::format("{} {} gives an FFN width of 0", path, mult));
  return static_cast<int>((n + 255) / 256 * 256);
}

NasBlock::Part NasPart(const Reader& part) {
  const bool no_op = part.BoolOr("no_op", false);
  const bool linear = part.BoolOr("replace_with_linear", false);
  if (no_op && linear) part.Fail(fmt::format("{}no_op and {}replace_with_linear are both true", part.Path(""),
                                             part.Path("")));
  return no_op ? NasBlock::Part::kNoOp : linear ? NasBlock::Part::kLinear : NasBlock::Part::kPresent;
}

Model NemotronNas(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-5);
  ModelDims& d = c.dims;
  d.heads = r.Int("num_attention_heads", 1, kMaxSize);
  d.kv_heads = r.IntOr("num_key_value_heads", 0, 1, kMaxSize);  // null: per block
  if (d.kv_heads > 0 && d.heads % d.kv_heads != 0) {
    r.Fail(fmt::format("num_attention_heads {} is not divisible by num_key_value_heads {}", d.heads, d.kv_heads));
  }
  if (r.Given("head_dim") != nullptr) {
    d.head_dim = r.Int("head_dim", 1, kMaxSize);
  } else if (c.hidden % d.heads != 0) {
    r.Fail(fmt::format("head_dim is not given and hidden_size {} is not divisible by num_attention_heads {}",
                       c.hidden, d.heads));
  } else {
    d.head_dim = c.hidden / d.heads;
  }
  CheckProduct(r, "num_attention_heads * head_dim", d.heads, d.head_dim);
  ReadRope(r, d);
  d.intermediate = r.IntOr("intermediate_size", 0, 1, kMaxSize);  // null: per block
  const json& configs = r.List("block_configs");
  if (configs.size() != static_cast<size_t>(c.layers)) {
    r.Fail(fmt::format("block_configs has {} entries but num_hidden_layers is {}", configs.size(), c.layers));
  }
  std::vector<NasBlock> blocks;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Reader block = r.ToObject(fmt::format("block_configs[{}]", i), configs[i]);
    const Reader attention = block.Object("attention");
    const Reader ffn = block.Object("ffn");
    NasBlock b{.attention = NasPart(attention), .ffn = NasPart(ffn)};
    if (b.attention == NasBlock::Part::kPresent) {
      const int group = attention.Int("n_heads_in_group", 1, kMaxSize);
      if (d.heads % group != 0) {
        r.Fail(fmt::format("{} {} does not divide num_attention_heads {}", attention.Path("n_heads_in_group"), group,
                           d.heads));
      }
      b.kv_heads = d.heads / group;
      if (d.kv_heads == 0) d.kv_heads = b.kv_heads;  // the model's: the first attention's
    }
    if (b.ffn == NasBlock::Part::kPresent) {
      b.ffn_width = NasFfnWidth(r, ffn.Path("ffn_mult"), ffn.Number("ffn_mult", 0, 1e6), c.hidden);
      if (d.intermediate == 0) d.intermediate = b.ffn_width;  // the model's: the first FFN's
    }
    blocks.push_back(b);
  }
  if (d.kv_heads == 0) d.kv_heads = d.heads;
  return NasModel("nemotron-nas", c.hidden, d, blocks);
}

Model DeepseekV4(const Reader& r) {
  Common c = ReadCommon(r, "rms_norm_eps", 1e-6);
  ModelDims& d = c.dims;
  ReadAttention(r, c.hidden, d);
  ReadRope(r, d);
  const int streams = r.Int("hc_mult", 1, 64);
  CheckProduct(r, "hc_mult * hidden_size", streams, c.hidden);
  d.hc_sinkhorn_iters = r.IntOr("hc_sinkhorn_iters", 20, 1, 10000);
  const int top_k = ReadExperts(r, d, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
  d.shared_intermediate = SharedWidth(r, r.IntOr("n_shared_experts", 0, 0, kMaxSize), d.moe_intermediate);
  d.renormalize = r.BoolOr("norm_topk_prob", true);
  d.scoring = ReadScoring(r, "sqrtsoftplus", true);
  d.correction_bias = r.StringOr("topk_method", "noaux_tc") == "noaux_tc";
  d.routed_scaling = r.NumberOr("routed_scaling_factor", 1.0, 0, 1e6);
  return HyperConnectionModel("deepseek-v4", c.layers, c.hidden, d, top_k, streams, /*dense_layers=*/0);
}

struct Family {
  const char* model_type;
  std::function<Model(const Reader&)> build;
};

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"llama", [](const Reader& r) { return Dense(r, "llama", false); }},
      {"qwen3", [](const Reader& r) { return Dense(r, "qwen3", true); }},
      {"qwen3_moe", Qwen3Moe},
      {"gpt_oss", GptOss},
      {"deepseek_v2", [](const Reader& r) { return Deepseek(r, "deepseek-v2", false); }},
      {"deepseek_v3", [](const Reader& r) { return Deepseek(r, "deepseek-v3", true); }},
      {"kimi_k2", [](const Reader& r) { return Deepseek(r, "kimi-k2", true); }},
      {"nemotron_h", NemotronH},
      {"zaya", Zaya},
      {"qwen3_next", Qwen3Next},
      {"nemotron-nas", NemotronNas},
      {"deepseek_v4", DeepseekV4},
  };
  return families;
}

}  // namespace

std::vector<std::string> KnownModelTypes() {
  std::vector<std::string> out;
  for (const Family& f : Families()) out.emplace_back(f.model_type);
  return out;
}

Expected<Model> ModelFromHfConfig(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  json j;
  try {
    j = json::parse(QuoteNonFinite(json_text));
  } catch (const json::exception& e) {
    std::string why = e.what();
    if (const size_t end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos) {
      why = why.substr(end + 2);
    }
    return Malformed(fmt::format("{}: not JSON: {}", src, why));
  }
  if (!j.is_object()) return Malformed(fmt::format("{}: not a JSON object; found {}", src, Found(j)));
  try {
    const Reader r(j, src);
    const std::string type = r.String("model_type");
    for (const Family& f : Families()) {
      if (type == f.model_type) return f.build(r);
    }
    return Malformed(fmt::format("{}: unknown model_type {}; known: {}", src, Found(json(type)),
                                 fmt::join(KnownModelTypes(), ", ")));
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const json::exception& e) {  // a get<> the checks above should have ruled out
    return Malformed(fmt::format("{}: {}", src, e.what()));
  }
}

Expected<Model> LoadHfConfig(const std::string& path) {
  Expected<std::string> text = ReadWholeFile(path);
  if (!text) return text.error();
  return ModelFromHfConfig(*text, path);
}

}  // namespace seam

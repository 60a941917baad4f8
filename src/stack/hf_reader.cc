// The parts of a config.json the families share, and the text fixes the
// reader makes before parsing.
#include "stack/hf_reader.h"

#include <algorithm>

namespace seam::hf {

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

void OnlyDefault(const Reader& r, const char* key, const json& value, const char* why) {
  const json* v = r.Given(key);
  if (v != nullptr && *v != value) {
    r.Fail(fmt::format("{} is {}; seam models only {}: {}", r.Path(key), Found(*v), Found(value), why));
  }
}

namespace {

// A string of the config for a message, cut short as Found cuts it.
std::string Quoted(std::string s) {
  const bool cut = s.size() > 40;
  if (cut) s.resize(40);
  return fmt::format("'{}'{}", s, cut ? "..." : "");
}

}  // namespace

void RefuseActivationAndBiases(const Reader& r, bool mlp_bias) {
  if (const std::string act = r.StringOr("hidden_act", "silu"); act != "silu") {
    r.Fail(fmt::format("hidden_act is {}; only 'silu' is supported", Quoted(act)));
  }
  if (r.BoolOr("attention_bias", false)) r.Fail("attention_bias is true; biases are not supported");
  if (mlp_bias && r.BoolOr("mlp_bias", false)) r.Fail("mlp_bias is true; biases are not supported");
}

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

namespace {

void NeedKeys(const Reader& r, const Reader& s, const char* type, std::initializer_list<const char*> keys,
              const char* listed) {
  for (const char* key : keys) {
    if (s.Given(key) == nullptr) {
      r.Fail(fmt::format("missing key '{}' (a {} rope_scaling needs {})", s.Path(key), type, listed));
    }
  }
}

RopeScaling ReadLlama3(const Reader& r, const Reader& s) {
  NeedKeys(r, s, "llama3", {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
           "factor, low_freq_factor, high_freq_factor and original_max_position_embeddings");
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

// A number that may be 0 ("not given", as transformers reads a falsy value).
double NumberOrZero(const Reader& s, const char* key) {
  return s.Given(key) == nullptr ? 0.0 : s.Number(key, 0, 1e6, /*lo_inclusive=*/true);
}

// The keys transformers' _compute_yarn_parameters reads, with its defaults.
YarnScaling ReadYarn(const Reader& r, const Reader& s) {
  NeedKeys(r, s, "yarn", {"factor", "original_max_position_embeddings"}, "factor and original_max_position_embeddings");
  YarnScaling y;
  y.factor = s.Number("factor", 0, 1e6);
  y.original_positions = s.Int("original_max_position_embeddings", 1, kMaxSize * 100);
  y.beta_fast = s.NumberOr("beta_fast", 32, 0, 1e6);
  y.beta_slow = s.NumberOr("beta_slow", 1, 0, 1e6);
  if (y.beta_fast < y.beta_slow) {
    r.Fail(
        fmt::format("rope_scaling.beta_fast {} must be at least rope_scaling.beta_slow {}", y.beta_fast, y.beta_slow));
  }
  y.mscale = NumberOrZero(s, "mscale");
  y.mscale_all_dim = NumberOrZero(s, "mscale_all_dim");
  y.attention_factor = s.NumberOr("attention_factor", 0, 0, 1e6);
  y.truncate = s.BoolOr("truncate", true);
  return y;
}

}  // namespace

// The rope_scaling types that change the numbers seam computes are read; any
// other is refused rather than run unscaled.
void ReadRopeScaling(const Reader& r, ModelDims& d) {
  if (r.Given("rope_scaling") == nullptr) return;
  const Reader s = r.Object("rope_scaling");
  const char* type_key = s.Given("rope_type") != nullptr ? "rope_type" : "type";
  const std::string type = s.StringOr(type_key, "default");
  if (type == "default") return;
  if (type == "llama3") {
    d.rope_scaling = ReadLlama3(r, s);
  } else if (type == "yarn") {
    d.yarn = ReadYarn(r, s);
    // Some transformers releases take YaRN's factor from rope_scaling.factor,
    // others from max_position_embeddings / original_max_position_embeddings:
    // a config on which they disagree runs differently under each.
    if (r.Given("max_position_embeddings") != nullptr) {
      const int positions = r.Int("max_position_embeddings", 1, kMaxSize * 100);
      const double product = d.yarn.factor * d.yarn.original_positions;
      if (positions != product) {
        r.Fail(
            fmt::format("max_position_embeddings is {} but rope_scaling.factor * "
                        "rope_scaling.original_max_position_embeddings is {}; transformers releases take YaRN's "
                        "factor from one or the other",
                        positions, product));
      }
    }
  } else {
    r.Fail(
        fmt::format("{} {} is not supported; supported: default, llama3, yarn", s.Path(type_key), Found(json(type))));
  }
}

void ReadRope(const Reader& r, ModelDims& d, double theta_default) {
  OnlyDefault(r, "rope_parameters", nullptr,
              "seam reads rope_theta and rope_scaling, the keys transformers 4 writes for them");
  d.rope_theta = r.NumberOr("rope_theta", theta_default, 0, 1e12);
  ReadRopeScaling(r, d);
}

// Grouped-query attention: heads, key/value heads and the head width.
void ReadAttention(const Reader& r, int hidden, ModelDims& d, const char* heads_key, const char* kv_key,
                   std::initializer_list<const char*> head_dim_keys, AttentionKeys need) {
  if (need.kv_given) r.Need(kv_key);
  if (need.head_dim_given &&
      std::none_of(head_dim_keys.begin(), head_dim_keys.end(), [&r](const char* key) { return r.Has(key); })) {
    r.Need(*(head_dim_keys.end() - 1));
  }
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
      r.Fail(fmt::format("{} is not given and hidden_size {} is not divisible by {} {}", *head_dim_keys.begin(), hidden,
                         heads_key, d.heads));
    }
    d.head_dim = hidden / d.heads;
  }
  CheckProduct(r, fmt::format("{} * {}", heads_key, *head_dim_keys.begin()).c_str(), d.heads, d.head_dim);
}

Common ReadGqaDecoder(const Reader& r, double eps_default, double theta_default, AttentionKeys need) {
  Common c = ReadCommon(r, "rms_norm_eps", eps_default);
  ReadAttention(r, c.hidden, c.dims, "num_attention_heads", "num_key_value_heads", {"head_dim"}, need);
  ReadRope(r, c.dims, theta_default);
  return c;
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

ExpertGroups ReadExpertGroups(const Reader& r, const ModelDims& d, int top_k, int groups_default, int keep_default,
                              GroupScore score) {
  ExpertGroups g{.score = score};
  g.count = r.IntOr("n_group", groups_default, 1, d.experts);
  const int size = d.experts / g.count;
  if (d.experts % g.count != 0) {
    r.Fail(fmt::format("n_routed_experts {} is not divisible by n_group {}", d.experts, g.count));
  }
  if (score == GroupScore::kTopTwoSum && size < 2) {
    r.Fail(fmt::format("n_group {} leaves {} expert per group; a group is scored by its best two", g.count, size));
  }
  g.keep = r.IntOr("topk_group", keep_default, 1, g.count);
  if (top_k > g.keep * size) {
    r.Fail(
        fmt::format("num_experts_per_tok {} is more than the {} experts a row chooses from (topk_group {} groups "
                    "of {})",
                    top_k, g.keep * size, g.keep, size));
  }
  return g;
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

}  // namespace seam::hf

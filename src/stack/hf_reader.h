// Reading a Hugging Face config.json (internal to the stack layer): a
// Reader over one JSON object whose every error names the source and the
// key's path, and the parts the families share (common sizes, rope,
// grouped-query attention, experts). Each family's import is its own file
// (import_*.cc); hf_config.cc picks one by model_type.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seam/error.h"
#include "seam/model.h"

namespace seam::hf {

using json = nlohmann::json;

constexpr int64_t kMaxSize = 10'000'000;           // any width, head count, expert count, vocabulary
constexpr int64_t kMaxLayers = 100'000;            // num_hidden_layers
constexpr int64_t kMaxProduct = int64_t{1} << 30;  // heads x head_dim and the like

// Python's json writes non-finite floats as bare NaN / Infinity / -Infinity;
// each becomes a JSON string of the same word where a value may start.
std::string QuoteNonFinite(std::string_view text);
// What a key holds, for error messages: short, never a whole subtree.
std::string Found(const json& v);

// Reads the keys of one JSON object; every error names the source and the
// key's path ("block_configs[3].ffn.ffn_mult"). With a `read` set, every key
// looked up is added to it by its path (what docs/config-keys.md is checked
// against).
class Reader {
 public:
  Reader(const json& j, const std::string& source, std::string prefix = "", std::set<std::string>* read = nullptr)
      : j_(j), source_(source), prefix_(std::move(prefix)), read_(read) {}

  [[noreturn]] void Fail(const std::string& why) const {
    throw Failure(Malformed(fmt::format("{}: {}", source_, why)));
  }
  std::string Path(std::string_view key) const { return prefix_ + std::string(key); }

  // Present, maybe null.
  bool Has(const char* key) const {
    Note(key);
    return j_.contains(key);
  }
  // Present and not null.
  const json* Given(const char* key) const {
    Note(key);
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& Need(const char* key) const {
    Note(key);
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
    return Reader(v, source_, path + ".", read_);
  }

 private:
  void Note(const char* key) const {
    if (read_ != nullptr) read_->insert(Path(key));
  }

  const json& j_;
  const std::string& source_;
  std::string prefix_;
  std::set<std::string>* read_;
};

// A key seam does not model: it imports only absent, null or holding `value`
// (what seam runs, the config class's default); any other value is refused as
// "KEY is VALUE; seam models only VALUE: WHY".
void OnlyDefault(const Reader& r, const char* key, const json& value, const char* why);
// hidden_act other than silu, and attention (and, with `mlp_bias`, MLP)
// biases, which seam's decoders do not compute.
void RefuseActivationAndBiases(const Reader& r, bool mlp_bias);

struct Common {
  int hidden = 0;
  int layers = 0;
  ModelDims dims;
};

Common ReadCommon(const Reader& r, const char* eps_key, double eps_default);
void CheckProduct(const Reader& r, const char* what, int64_t a, int64_t b);
// rope_scaling: Llama 3's or YaRN; none for "default"; any other type is an error.
void ReadRopeScaling(const Reader& r, ModelDims& d);
void ReadRope(const Reader& r, ModelDims& d, double theta_default = 10000.0);
// Which attention keys must be given (null allowed, read as absent): those
// whose default in the family's config class is not seam's (all heads for
// key/value heads, hidden_size / heads for the head width).
struct AttentionKeys {
  bool kv_given = false;
  bool head_dim_given = false;
};
// Grouped-query attention: heads, key/value heads and the head width.
void ReadAttention(const Reader& r, int hidden, ModelDims& d, const char* heads_key = "num_attention_heads",
                   const char* kv_key = "num_key_value_heads",
                   std::initializer_list<const char*> head_dim_keys = {"head_dim"}, AttentionKeys need = {});
// The common sizes, grouped-query attention and rope of a decoder whose
// keys follow Llama's (llama, qwen3, qwen3_moe, qwen3_next, gpt_oss).
Common ReadGqaDecoder(const Reader& r, double eps_default, double theta_default = 10000.0, AttentionKeys need = {});
// Routed experts; returns top_k.
int ReadExperts(const Reader& r, ModelDims& d, const char* experts_key, const char* top_k_key, const char* width_key);
RouterScoring ReadScoring(const Reader& r, const std::string& fallback, bool sqrt_softplus);
// n_group and topk_group (defaults as the family's config class has them):
// the experts in n_group equal groups, a row choosing among the experts of
// its best topk_group, each group scored as `score` says.
ExpertGroups ReadExpertGroups(const Reader& r, const ModelDims& d, int top_k, int groups_default, int keep_default,
                              GroupScore score);
int SharedWidth(const Reader& r, int shared_experts, int width);
// layer_types, when given: one string per layer (empty when absent).
std::vector<std::string> LayerTypes(const Reader& r, int layers);

// config.json's text as a JSON object; errors name the source.
Expected<json> ParseConfigJson(std::string_view text, const std::string& source);
// The model a config describes, by its model_type (throws Failure).
Model ImportModel(const Reader& r);

// Each family's import (import_*.cc).
Model Dense(const Reader& r, const std::string& name, bool qk_norm);  // llama, qwen3
Model Qwen3Moe(const Reader& r);
Model GptOss(const Reader& r);
Model Deepseek(const Reader& r, const std::string& name, bool v3);  // deepseek_v2/v3, kimi_k2
Model DeepseekV4(const Reader& r);
Model NemotronH(const Reader& r);
Model Zaya(const Reader& r);
Model Qwen3Next(const Reader& r);
Model NemotronNas(const Reader& r);

}  // namespace seam::hf

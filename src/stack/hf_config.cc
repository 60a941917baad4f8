// Hugging Face config.json -> a seam model at its real size. Every family is
// built through its builder in seam/families.h; this file only reads keys,
// checks them against each other and maps them to ModelDims and layouts.
#include "seam/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/strict_json.h"
#include "seam/files.h"
#include "stack/hf_reader.h"

namespace seam {
namespace {

using hf::json;
using hf::Reader;
using namespace hf;  // the families' imports

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

namespace hf {

Expected<json> ParseConfigJson(std::string_view text, const std::string& source) {
  StrictJson<json> parsed = ParseStrictJson<json>(QuoteNonFinite(text));
  if (parsed.error) {
    const bool syntax = parsed.error->problem == JsonProblem::kSyntax;
    return Malformed(fmt::format("{}: {}{}", source, syntax ? "not JSON: " : "", parsed.error->message));
  }
  json j = std::move(parsed.value);
  if (!j.is_object()) return Malformed(fmt::format("{}: not a JSON object; found {}", source, Found(j)));
  return j;
}

// A collective's buffer is at most kMaxProduct elements per token: the
// widest are a MoE's dispatch (top_k copies of the hidden state) and the
// hyper-connection streams.
void CheckWidths(const Reader& r, const Model& m) {
  CheckProduct(r, "hidden_size * the residual streams", m.hidden, m.residual_streams);
  int top_k = 0;
  for (int l = 0; l < m.num_layers && top_k == 0; ++l) {
    for (const StageDecl& d : m.layer(l)) top_k = std::max(top_k, d.top_k);
  }
  CheckProduct(r, "num_experts_per_tok * hidden_size (an all-to-all dispatch per token)", top_k, m.hidden);
}

Model ImportModel(const Reader& r) {
  try {
    const std::string type = r.String("model_type");
    for (const Family& f : Families()) {
      if (type != f.model_type) continue;
      Model m = f.build(r);
      m.hf_type = type;
      CheckWidths(r, m);
      return m;
    }
    r.Fail(fmt::format("unknown model_type {}; known: {}", Found(json(type)), fmt::join(KnownModelTypes(), ", ")));
  } catch (const json::exception& e) {  // a get<> the checks above should have ruled out
    r.Fail(e.what());
  }
}

}  // namespace hf

Expected<Model> ModelFromHfConfig(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  Expected<json> j = hf::ParseConfigJson(json_text, src);
  if (!j) return j.error();
  try {
    return hf::ImportModel(Reader(*j, src));
  } catch (const Failure& e) {
    return e.error();
  }
}

Expected<Model> LoadHfConfig(const std::string& path) {
  Expected<std::string> text = ReadFileAtMost(path, kMaxConfigBytes);
  if (!text) return text.error();
  return ModelFromHfConfig(*text, path);
}

}  // namespace seam

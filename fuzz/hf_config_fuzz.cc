// libFuzzer target: ModelFromHfConfig on arbitrary bytes. A config either
// fails with a kMalformed error that names its source, or builds a model
// whose declarations hold together; nothing crashes, hangs or trips a
// sanitizer. Run it with scripts/fuzz.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "seam/hf_config.h"
#include "seam/model.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void CheckStages(const seam::Model& m, int first, int last) {
  for (const seam::StageRef& s : seam::StagesOf(m, first, last)) {
    const seam::StageDecl& d = s.decl;
    Require(s.layer >= first && s.layer < last);
    if (d.kind == seam::StageKind::kSparseFfn) Require(d.top_k >= 1 && d.top_k <= m.dims->experts);
    if (d.kv_heads > 0) Require(m.dims->heads % d.kv_heads == 0);
    Require(d.window >= 0 && d.ffn_width >= 0 && d.gather_width >= 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  seam::Expected<seam::Model> m = seam::ModelFromHfConfig(text, "fuzz.json");
  if (!m) {
    Require(m.error().code == seam::ErrorCode::kMalformed);
    Require(m.error().message.starts_with("fuzz.json: "));
    return 0;
  }
  const seam::Model& model = *m;
  Require(model.num_layers >= 1 && model.num_layers <= 100'000 && model.hidden >= 1 && model.dims.has_value());
  Require(model.dims->heads == 0 || model.dims->heads % model.dims->kv_heads == 0);
  const int n = std::min(model.num_layers, 3);
  CheckStages(model, 0, n);
  CheckStages(model, model.num_layers - n, model.num_layers);
  if (model.num_layers < 2000) Require(!seam::PatternOf(model).empty());
  return 0;
}

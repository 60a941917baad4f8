#include "seam/model.h"

#include <algorithm>

namespace seam {
namespace {

char Letter(const StageDecl& d) {
  switch (d.kind) {
    case StageKind::kAttention: return 'A';
    case StageKind::kMixer: return 'M';
    case StageKind::kDenseFfn: return 'F';
    case StageKind::kSparseFfn: return 'E';
    case StageKind::kNoOp: return '.';
    case StageKind::kLinear: return 'L';
  }
  return '?';
}

// The declaration function is only ever asked for a layer the model
// declares: a NAS block list or a hybrid pattern has nothing past its end.
void CheckDeclared(const Model& m, int last_layer) {
  SEAM_CHECK(
      m.declared_layers == 0 || last_layer <= m.declared_layers,
      m.name + " declares " + std::to_string(m.declared_layers) + " layers; asked for " + std::to_string(last_layer));
}

}  // namespace

std::vector<StageRef> StagesOf(const Model& m, int first_layer, int last_layer) {
  SEAM_CHECK(0 <= first_layer && first_layer <= last_layer && last_layer <= m.num_layers,
             "layer range outside the model");
  CheckDeclared(m, last_layer);
  std::vector<StageRef> out;
  VisitStages(m, last_layer, [&](const StageRef& s) {
    if (s.layer >= first_layer) out.push_back(s);
    return true;
  });
  return out;
}

std::vector<StageDecl> DeclaredLayer(const Model& m, int layer) {
  SEAM_CHECK(0 <= layer && layer < m.num_layers, "layer outside the model");
  CheckDeclared(m, layer + 1);
  return m.layer(layer);
}

std::string PatternOf(const Model& m) {
  std::string out;
  CheckDeclared(m, m.num_layers);
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const std::vector<StageDecl> stages = m.layer(layer);
    if (stages.size() == 1) {
      out += Letter(stages[0]);
      continue;
    }
    out += '[';
    for (size_t i = 0; i < stages.size(); ++i) {
      if (i > 0) out += ' ';
      out += Letter(stages[i]);
    }
    out += ']';
  }
  return out;
}

bool HasStageKind(const Model& m, StageKind kind) {
  const std::vector<StageRef> stages = StagesOf(m, 0, m.num_layers);
  return std::any_of(stages.begin(), stages.end(), [&](const StageRef& s) { return s.decl.kind == kind; });
}

bool MoeDispatchesA2a(const Model& m) {
  const std::vector<StageRef> stages = StagesOf(m, 0, m.num_layers);
  return std::all_of(stages.begin(), stages.end(),
                     [](const StageRef& s) { return s.decl.kind != StageKind::kSparseFfn || s.decl.a2a; });
}

}  // namespace seam

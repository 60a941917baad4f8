// The engines' names the knob table gives each knob (seam/knobs.h) are
// flags, or environment variables, that the engines' own tables know.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "engine/table.h"
#include "seam/knobs.h"

namespace seam {
namespace {

bool Knows(Engine e, const std::string& name) {
  for (const engine::EngineTable* t : engine::TablesOf(e)) {
    if (name.starts_with("-") && t->Find(name) != nullptr) return true;
    for (const engine::EnvRow& env : t->env) {
      if (env.name == name) return true;
    }
  }
  return false;
}

TEST(KnobTable, EveryEngineNameIsAFlagOrVariableTheEngineReads) {
  for (const Knob& k : Knobs()) {
    for (const auto& [e, names] : {std::pair{Engine::kSglang, k.sglang}, {Engine::kVllm, k.vllm}}) {
      std::istringstream words{std::string(names)};
      for (std::string w; words >> w;) EXPECT_TRUE(Knows(e, w)) << k.json << ": " << w;
    }
  }
}

}  // namespace
}  // namespace seam

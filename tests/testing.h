// Helpers shared by the test programs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "seam/bind.h"
#include "seam/checked.h"
#include "seam/model.h"

namespace seam::testing {

// A fresh, empty directory for one test, named by the test and `name`:
// ctest runs the tests of one binary in parallel, so no two share one.
inline std::string FreshTestDir(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    (std::string("seam_") + test->test_suite_name() + "." + test->name() + "_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

// A stack of single-stage layers from letters: A always-partial attention,
// R attention that reduces itself, M mixer, F dense FFN, E sparse FFN (top-2),
// X sparse FFN (top-2) without an all-to-all path, N no-op. Spaces are ignored.
inline Model StackOf(std::string_view letters, int hidden = 64) {
  std::vector<StageDecl> stages;
  for (char c : letters) {
    switch (c) {
      case 'A': stages.push_back(AttentionStage()); break;
      case 'R': stages.push_back(AttentionStage({.sum = AttentionSum::kReducesItself})); break;
      case 'M': stages.push_back(MixerStage()); break;
      case 'F': stages.push_back(DenseFfnStage()); break;
      case 'E': stages.push_back(SparseFfnStage({.top_k = 2})); break;
      case 'X': stages.push_back(SparseFfnStage({.top_k = 2, .a2a = false})); break;
      case 'N': stages.push_back(NoOpStage()); break;
      case ' ': break;
      default: throw std::invalid_argument(std::string("unknown stage letter ") + c);
    }
  }
  return {.name = std::string(letters),
          .num_layers = static_cast<int>(stages.size()),
          .hidden = hidden,
          .layer = [stages](int i) { return std::vector{stages[static_cast<size_t>(i)]}; }};
}

// A model of the catalogue (seam models), or the test stops.
inline Model MustModel(const std::string& name) {
  Expected<Model> m = CatalogueModel(name);
  if (!m) throw std::runtime_error(m.error().message);
  return *std::move(m);
}

// 4-byte activations on the wire: the byte counts docs/binding.md's worked
// examples state.
inline constexpr WireDtypes kFp32Wire{.act = WireDtype::kFp32, .dispatch = WireDtype::kFp32};

// Binds with the verifier on; a rejection or a violation fails the test.
inline Plan MustBind(const Model& m, const ParallelConfig& cfg, const BindOptions& options = {}) {
  Expected<Plan> p = BindChecked(m, cfg, 0, options);
  if (!p) throw std::runtime_error("bind failed: " + p.error().message);
  return *std::move(p);
}

inline const StagePlan& StageOf(const Plan& p, Variant v, int index) {
  const LinePlan* line = p.line(v);
  if (line == nullptr) throw std::runtime_error("no such variant");
  for (const StagePlan& s : line->stages) {
    if (s.index == index) return s;
  }
  throw std::runtime_error("no such stage");
}

inline ParallelConfig WithReduction(ParallelConfig cfg, Reduction r) {
  cfg.reduction = r;
  return cfg;
}

}  // namespace seam::testing

namespace seam::testing {

// Binds every pipeline rank with the verifier on (handoffs included).
inline Pipeline MustBindPipeline(const Model& m, const ParallelConfig& cfg) {
  Expected<Pipeline> p = BindPipelineChecked(m, cfg);
  if (!p) throw std::runtime_error("bind failed: " + p.error().message);
  return *std::move(p);
}

inline ParallelConfig Cut(ParallelConfig cfg, std::vector<int> split) {
  cfg.pp = static_cast<int>(split.size());
  cfg.pp_split = std::move(split);
  return cfg;
}

}  // namespace seam::testing

// What the mixers' closed-form tests share: a one-stage model around the
// kernel under test, weights given by hand, and the tolerances.
//
// Tolerances: an fp32 kernel rounds each exp, log, sqrt, product and sum
// once (2^-24 relative each); a step of a recurrence does a handful of
// them, so values of size up to a few stay within 1e-6 of the double
// (kRel, relative to max(1, |value|)). A whole Scan strings dozens of
// roundings together (projection, conv, recurrence, norm) on values below
// 10: within 1e-5 (kScanAbs). Each break these tests exist for moves a
// value by 1e-2 or more.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "numerics/mixer.h"
#include "seam/model.h"
#include "seam/runtime/tensor.h"
#include "seam/runtime/weights.h"
#include "seam/stage.h"

namespace seam::exec::testing {

constexpr double kRel = 1e-6;
constexpr double kScanAbs = 1e-5;

inline void ExpectRel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, kRel * std::max(1.0, std::abs(want))) << what;
}

inline double SiluD(double x) { return x / (1.0 + std::exp(-x)); }
inline double SoftplusD(double x) { return std::log1p(std::exp(x)); }
inline double SigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline Tensor Row(const std::vector<float>& v) { return Tensor(1, static_cast<int>(v.size()), v); }

// Distinct, exactly representable values of size below 1: entry i of a
// tensor named by `salt` (no two tensors of a test share a pattern).
inline Tensor Filled(int rows, int cols, int salt, double scale = 1.0) {
  Tensor t(rows, cols);
  for (int i = 0; i < rows * cols; ++i) {
    const double v = std::sin(1.0 + 0.7 * i + 1.3 * salt);
    t.data()[i] = static_cast<float>(scale * std::round(v * 256.0) / 256.0);
  }
  return t;
}

// One mixer stage (layer 0) of a model with `dims` and hidden size `hidden`.
struct MixerModel {
  Model model;
  StageRef stage{.index = 0, .layer = 0, .slot = 0, .decl = MixerStage()};
  std::string prefix = "model.layers.0.mixer";

  MixerModel(const ModelDims& dims, int hidden) {
    model.name = "mixer";
    model.num_layers = 1;
    model.hidden = hidden;
    model.dims = dims;
    model.layer = [](int) { return std::vector{MixerStage()}; };
  }
};

}  // namespace seam::exec::testing

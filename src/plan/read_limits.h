// The most a plan file may hold, for the text and the JSON reader alike: a
// real model's plan stays far below each (Kimi-K2 at pp 4: 61 layers, 24
// steps in the longest list), and a file past one is refused where the
// reader meets it, so the verifier's work is bounded by them and not only by
// the file's size.
#pragma once

#include <cstddef>

namespace seam::plan_limits {

inline constexpr int kMaxNumber = 1'000'000'000;  // a size, index or width
inline constexpr size_t kMaxSteps = 64;           // steps in one list
inline constexpr size_t kMaxStages = 10'000;      // stages in one line
inline constexpr size_t kMaxRanks = 1'024;        // plans in one pipeline
inline constexpr size_t kMaxSplit = 1'024;        // layer counts in a split
inline constexpr size_t kMaxLines = 2;            // lines in a plan: one per batch Variant

}  // namespace seam::plan_limits

// Internal to the io layer: how a non-finite JSON number travels through
// nlohmann's writer, which has no Infinity (Python's json writes it bare).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "seam/runtime/hf_checkpoint.h"

namespace seam {

inline constexpr const char* kInfinityMark = "__seam_infinity__";
// Replaces every "kInfinityMark" string in JSON text with a bare Infinity.
std::string QuoteInfinity(const std::string& text);

// Where element `i` (row-major) of an HF tensor lives: the index of its part
// in t.parts and the element's offset within that part.
std::pair<size_t, int64_t> Locate(const HfTensor& t, int64_t i);

}  // namespace seam

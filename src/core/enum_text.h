// Parsing an enum from the names its Name() overload prints.
#pragma once

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

// Looks `text` up among the names of `values`; the error lists them all.
template <class E, size_t N>
Expected<E> ParseEnum(std::string_view text, const std::array<E, N>& values, std::string_view what) {
  std::vector<std::string_view> names;
  for (E v : values) {
    if (Name(v) == text) return v;
    names.push_back(Name(v));
  }
  return Malformed(fmt::format("unknown {} '{}'; expected one of: {}", what, text, fmt::join(names, ", ")));
}

}  // namespace seam

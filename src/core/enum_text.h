// An enum's printed names, one row per value: Name and Parse both read the
// one table, so a value and its name are stated once.
//
//   constexpr auto kModes = EnumNames<MoeMode>("MoE mode", {{MoeMode::kTp, "tp"}, {MoeMode::kA2a, "a2a"}});
//   std::string_view Name(MoeMode m) { return kModes.Name(m); }
//   Expected<MoeMode> ParseMoeMode(std::string_view t) { return kModes.Parse(t); }
#pragma once

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <vector>

#include "seam/error.h"

namespace seam {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, size_t N>
struct EnumTable {
  std::string_view what;  // the enum in an error: "unknown MoE mode 'x'"
  std::array<EnumName<E>, N> rows;

  constexpr std::string_view Name(E v) const {
    for (const EnumName<E>& r : rows) {
      if (r.value == v) return r.name;
    }
    return "?";
  }

  // The error lists every name.
  Expected<E> Parse(std::string_view text) const {
    std::vector<std::string_view> names;
    for (const EnumName<E>& r : rows) {
      if (r.name == text) return r.value;
      names.push_back(r.name);
    }
    return Malformed(fmt::format("unknown {} '{}'; expected one of: {}", what, text, fmt::join(names, ", ")));
  }
};

template <class E, size_t N>
constexpr EnumTable<E, N> EnumNames(std::string_view what, const EnumName<E> (&rows)[N]) {
  EnumTable<E, N> t{what, {}};
  for (size_t i = 0; i < N; ++i) t.rows[i] = rows[i];
  return t;
}

// Looks `text` up among the names Name() gives `values` (for an enum whose
// names come from another table, as the step kinds' do).
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

// seam/spelling.h — the known name nearest a misspelt one, for "did you mean" in an error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seam {

// Edits (insert, delete, replace a character) from `a` to `b`.
int EditDistance(std::string_view a, std::string_view b);

// The name of `names` fewest edits from `word`, when it is near enough to be
// a misspelling (a third of the word's length, at least two edits), else none.
std::optional<std::string> Nearest(std::string_view word, const std::vector<std::string>& names);

}  // namespace seam
